"""The blind packet: self-contained, no private fields, safe embedding, the candidate-page rule."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from nclue.audit.audit_params import ROUTES, SampleParams
from nclue.audit.packet import build_packet, embed_json
from nclue.audit.pool import Routes, pool, round_robin
from nclue.audit.sample import sample
from nclue.corpus.store import PageStore
from tests.audit.simulate import HOSTILE, hostile_release, payload_of, read_jsonl

SCRIPT_BLOCKS = re.compile(r"<script([^>]*)>(.*?)</script>", re.S)


def keys_of(obj: object) -> set[str]:
    """Every dictionary key anywhere in a JSON value."""
    if isinstance(obj, dict):
        return set(obj) | {k for v in obj.values() for k in keys_of(v)}
    if isinstance(obj, list):
        return {k for v in obj for k in keys_of(v)}
    return set()


def test_packet_is_one_offline_file_without_private_fields(audited: dict) -> None:
    html = audited["html"].read_text(encoding="utf-8")
    markup = SCRIPT_BLOCKS.sub("", html)  # page text (inside the JSON block) may quote URLs; the markup may not
    assert not re.search(r"https?://|<link\b|<iframe\b|\bsrc=", markup)
    assert not re.search(
        r"https?://|fetch\(|XMLHttpRequest|WebSocket",
        (Path(__file__).parents[2] / "src/nclue/audit/assets/packet.js").read_text(),
    )
    assert "default-src 'none'" in html
    key = read_jsonl(audited["audit"] / "key.jsonl")
    for row in key:
        assert row["qid"] not in html and row["doc_id"] not in html
    blocks = {attrs.strip(): body for attrs, body in SCRIPT_BLOCKS.findall(html)}
    payload = json.loads(blocks['type="application/json" id="packet-data"'])
    visible = {"format", "format_version", "packet_id", "title", "rule", "instructions", "kind", "audit_id"}
    visible |= {"settings", "items", "id", "need", "conditions", "name", "aliases", "rubric", "pages", "page", "text"}
    visible |= {"cut", "requirement", "counts", "does_not_count", "note", "min_quote_chars", "space", "messages"}
    visible |= {"quote_messages", "export_format", "unanswered", "no_page", "not_in_pool", "quote", "negative_pages"}
    visible |= {"empty", "short", "missing"}
    assert keys_of(payload) <= visible  # no qid, doc_id, grade, label, route or rank field
    assert payload == payload_of(audited["audit"], audited["packet"].packet_id)
    assert len(payload["items"]) == 12 and audited["packet"].size_bytes == len(html.encode())


def test_packet_is_deterministic(audited: dict, tmp_path: Path) -> None:
    again = build_packet(audited["audit"], audited["coll"], tmp_path / "again.html")
    assert again.packet_id == audited["packet"].packet_id
    assert (tmp_path / "again.html").read_bytes() == audited["html"].read_bytes()


def test_candidate_pages_follow_the_documented_rule(audited: dict) -> None:
    store = PageStore.open(audited["coll"])
    payload = payload_of(audited["audit"], audited["packet"].packet_id)
    admin = json.loads((audited["audit"] / "packets" / f"{payload['packet_id']}.admin.json").read_text())
    key = {r["pair"]: r for r in read_jsonl(audited["audit"] / "key.jsonl")}
    for item in payload["items"]:
        pair = key[admin["items"][item["id"]]["pair"]]
        n_pages = int((store.page_doc == store.doc_index[pair["doc_id"]]).sum())
        for cond in item["conditions"]:
            shown = [p["page"] for p in cond["pages"]]
            assert shown == sorted(shown) and len(shown) == min(3, n_pages)
            rows = admin["items"][item["id"]]["conditions"][cond["id"]]["pool"]
            assert sorted(r["page"] for r in rows) == shown
            construction = pair["pages"].get(cond["name"], [])
            first = next(r for r in rows if r["rank"] == 1)
            if construction:  # the round-robin starts with the construction route
                assert first["page"] in construction and "construction" in first["routes"]
            for p in cond["pages"]:
                assert p["text"] == store.page_text(pair["doc_id"], p["page"])
                exact = any(
                    re.search(rf"(?<![A-Za-z]){re.escape(a)}(?![A-Za-z])", p["text"], re.I) for a in cond["aliases"]
                )
                routes = next(r["routes"] for r in rows if r["page"] == p["page"])
                assert exact <= ("alias" in routes)  # an exact surface-form hit is always an alias member


def test_round_robin_and_pool_hand_cases() -> None:
    assert round_robin([[1, 2, 3], [2, 5], [], [9]], 4) == [1, 2, 9, 3]
    assert round_robin([[1, 2], [2, 1]], 5) == [1, 2]
    routes = Routes({"construction": (4,), "alias": (4, 7), "bm25": (7, 8), "fuzzy": ()}, tuple(range(1, 11)))
    assert pool(routes, 3) == [4, 7, 8]
    assert pool(routes, 9, first=[[2], [7, 3]], minimum=6) == [2, 7, 3, 4, 8, 1]
    empty = Routes({r: () for r in ROUTES}, (1, 2))
    assert pool(empty, 3) == [1, 2]  # filler never invents pages


def test_hostile_text_is_embedded_inertly(tmp_path: Path) -> None:
    coll, bench = hostile_release(tmp_path)
    sample(bench, tmp_path / "audit", SampleParams(pairs=1))
    summary = build_packet(tmp_path / "audit", coll, tmp_path / "p.html")
    html = (tmp_path / "p.html").read_text(encoding="utf-8")
    # exactly the packet's four script blocks; the page text never opens or closes a tag
    assert len(SCRIPT_BLOCKS.findall(html)) == 4
    assert "window.__pwned" in html and "<img src=x" not in html and "</textarea>" not in html
    assert "\u2028" not in html
    payload = payload_of(tmp_path / "audit", summary.packet_id)
    texts = [p["text"] for c in payload["items"][0]["conditions"] for p in c["pages"]]
    assert set(HOSTILE) <= set(texts)
    encoded = embed_json({"t": "</script><script>x</script>&\u2029"})
    assert "<" not in encoded and ">" not in encoded and "&" not in encoded and "\u2029" not in encoded
    assert json.loads(encoded) == {"t": "</script><script>x</script>&\u2029"}


def test_page_images_are_rendered_once_per_page(fresh_audit: dict, small_pdf_dir: Path, tmp_path: Path) -> None:
    import base64
    import io
    import shutil

    from PIL import Image

    from nclue.errors import NclueError

    summary = build_packet(
        fresh_audit["audit"], fresh_audit["coll"], tmp_path / "img.html", pdf_dir=small_pdf_dir, image_width=300
    )
    html = (tmp_path / "img.html").read_text(encoding="utf-8")
    images = json.loads(
        dict((a.strip(), b) for a, b in SCRIPT_BLOCKS.findall(html))['type="application/json" id="packet-images"']
    )
    payload = payload_of(fresh_audit["audit"], summary.packet_id)
    admin = json.loads((fresh_audit["audit"] / "packets" / f"{summary.packet_id}.admin.json").read_text())
    shown = {
        (admin["items"][it["id"]]["doc_id"], p["page"])
        for it in payload["items"]
        for c in it["conditions"]
        for p in c["pages"]
    }
    assert summary.images == len(images["data"]) == len(shown)
    assert set(images["refs"]) == {
        f"{it['id']}:{p['page']}" for it in payload["items"] for c in it["conditions"] for p in c["pages"]
    }
    picture = Image.open(io.BytesIO(base64.b64decode(images["data"][0].split(",", 1)[1])))
    assert picture.format == "JPEG" and picture.mode == "L" and picture.width == 300
    assert summary.packet_id == fresh_audit["packet"].packet_id  # images never change what is being judged
    broken = tmp_path / "pdfs"
    shutil.copytree(small_pdf_dir, broken)
    doc = admin["items"][payload["items"][0]["id"]]["doc_id"]
    with open(broken / f"{doc}.pdf", "ab") as handle:
        handle.write(b"%tampered")
    with pytest.raises(NclueError, match="not the PDF the collection was built from"):
        build_packet(fresh_audit["audit"], fresh_audit["coll"], tmp_path / "bad.html", pdf_dir=broken)
