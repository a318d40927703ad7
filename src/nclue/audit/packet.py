"""``nclue audit packet``: one self-contained HTML file for blind evaluators (``docs/audit.md#the-packet``).

The packet is a single file — inline CSS and JavaScript, every page text inside it, no
network access (its Content-Security-Policy allows no connection, and only its own script by
hash), no PDF reader — that works from ``file://``. What it shows is the *payload*: per item
a hidden stable id, the full information need (the ``natural`` rendering), and per condition
the rubric and the candidate pages with their text. The payload is embedded as JSON in a
``<script type="application/json">`` block with ``<``, ``>``, ``&``, U+2028 and U+2029
escaped, and the script writes page text with ``textContent`` only, so text containing
``<script>``, ``<img onerror=…>`` or ``</textarea>`` is shown as text and never runs.

Query ids, document ids, grades, labels, routes and ranks are not in the payload; they stay
in the audit's key and the packet's administrator file. Items appear in a seeded shuffled
order. The packet id is the SHA-256 (first 16 hex digits) of the payload's kind, audit id,
settings and items, so an export names the exact packet it answers. ``--pdf-dir`` adds a
rendering of each page (pypdfium2, grayscale JPEG) beside its text.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from nclue.audit.audit_params import EXPORT_FORMAT, FORMAT_VERSION, MIN_QUOTE_CHARS, PACKET_FORMAT, PoolParams
from nclue.audit.pool import RouteFinder, pool, pool_entries
from nclue.audit.quote_match import QUOTE_MESSAGES, SPACE_CLASS
from nclue.audit.rubric import load_overrides, rubric
from nclue.audit.store import AuditDir, PairKey
from nclue.audit.validate import MESSAGES
from nclue.corpus.render import capped_scale, renderable
from nclue.corpus.store import PageStore
from nclue.errors import NclueError
from nclue.io import atomic_write_text, dumps_canonical, sha256_bytes, sha256_file
from nclue.progress import Progress, quiet
from nclue.tables import Table, Tabular

TITLES = {
    "audit": "Evidence audit",
    "adjudication": "Evidence poll",
    "tiebreak": "Evidence poll",
    "challenge": "Evidence review",
}
RULE = (
    "Answer each condition on its own. Only necessary evidence counts: a page establishes a condition when a "
    "reader of that page learns about it there. Every Established answer needs a selected page and an exact quote."
)
INSTRUCTIONS = (
    "Each item shows an information need with two or three conditions and, for every condition, a few pages of one "
    "document. Decide for every condition separately whether the displayed pages establish it.",
    "Judge necessary evidence, not relatedness: a page establishes a condition when a reader of that page learns "
    "about the concept there — a definition, an explanation, or a section about it. A mere mention does not count: "
    "a table-of-contents or index line, a running header, a list of topics, a passing reference.",
    "Use only the displayed text. What you know from elsewhere does not count.",
    f"Answer Established only with evidence: tick every page you rely on and copy an exact quote of at least "
    f"{MIN_QUOTE_CHARS} characters from each. Not established means that no displayed passage establishes the "
    "condition; it selects no page and needs no quote.",
    "Accept an item when its answers are complete; the packet checks them first and lists anything missing. "
    "Previous and Next always work, so you can come back to any item.",
    "Answers are saved in this browser as you go. Export JSON hands in your answers (and keeps a copy); Import "
    "resumes from an export, on any computer. Nothing is ever sent over the network.",
    "Pages are shown in page order. Neither their order nor which pages are shown tells you the answer.",
)


def settings() -> dict[str, Any]:
    """The validation settings every packet carries (the browser applies exactly these)."""
    return {
        "min_quote_chars": MIN_QUOTE_CHARS,
        "space": SPACE_CLASS,
        "messages": MESSAGES,
        "quote_messages": QUOTE_MESSAGES,
        "export_format": EXPORT_FORMAT,
        "format_version": FORMAT_VERSION,
    }


def item_id(audit_id: str, kind: str, pair: str) -> str:
    """The hidden stable id of a pair in a packet of ``kind`` (salted by kind: polls do not reuse audit ids)."""
    return "i" + sha256_bytes(f"{audit_id}\0{kind}\0{pair}".encode())[:10]


@dataclass(frozen=True)
class Shown:
    """One condition as a packet shows it: its position in the query, name, pool pages and admin rows."""

    index: int
    name: str
    pages: tuple[int, ...]
    pool: tuple[dict, ...]


def build_payload(
    audit: AuditDir,
    kind: str,
    entries: Sequence[tuple[PairKey, Sequence[Shown]]],
    store: PageStore,
    params: PoolParams,
    overrides: Mapping[str, Mapping[str, object]],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The evaluator-visible payload and the administrator file of a packet built from pools."""
    prepared = []
    for pair, shown in entries:
        conditions = []
        for cond in shown:
            aliases = tuple(pair.aliases.get(cond.name, ())) or (cond.name,)
            pages = []
            for page in sorted(cond.pages):
                text = store.page_text(pair.doc_id, page)
                pages.append({"page": page, "text": text[: params.max_chars], "cut": len(text) > params.max_chars})
            conditions.append(
                {
                    "index": cond.index,
                    "name": cond.name,
                    "aliases": sorted(set(aliases) | {cond.name}, key=lambda a: (a.casefold(), a)),
                    "rubric": rubric(cond.name, aliases, overrides),
                    "pages": pages,
                    "pool": list(cond.pool),
                }
            )
        prepared.append((pair, conditions))
    return assemble(audit, kind, kind, prepared, dict(params.__dict__))


def assemble(
    audit: AuditDir,
    kind: str,
    salt: str,
    entries: Sequence[tuple[PairKey, Sequence[Mapping[str, Any]]]],
    params: Mapping[str, Any],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Payload and administrator file from prepared conditions (``index``, ``name``, ``aliases``,
    ``rubric``, ``pages`` with text, ``pool``); item ids are salted with ``salt``."""
    order = np.random.default_rng([int(audit.manifest.get("seed", 0)), len(salt), sum(map(ord, salt))]).permutation(
        len(entries)
    )
    items, admin_items = [], {}
    for pos in order.tolist():
        pair, shown = entries[pos]
        iid = item_id(audit.audit_id, salt, pair.pair)
        conditions, admin_conditions = [], {}
        for cond in shown:
            cid = f"{iid}.{cond['index']}"
            conditions.append(
                {"id": cid, **{k: cond[k] for k in ("name", "aliases", "rubric")}, "pages": list(cond["pages"])}
            )
            admin_conditions[cid] = {"condition": cond["name"], "index": cond["index"], "pool": list(cond["pool"])}
        items.append({"id": iid, "need": pair.need, "conditions": conditions})
        admin_items[iid] = {"pair": pair.pair, "qid": pair.qid, "doc_id": pair.doc_id, "conditions": admin_conditions}
    core = {"kind": kind, "audit_id": audit.audit_id, "settings": settings(), "items": items}
    packet_id = sha256_bytes(dumps_canonical(core).encode("utf-8"))[:16]
    payload = {
        "format": PACKET_FORMAT,
        "format_version": FORMAT_VERSION,
        "packet_id": packet_id,
        "title": TITLES[kind],
        "rule": RULE,
        "instructions": list(INSTRUCTIONS),
        **core,
    }
    admin = {"packet_id": packet_id, "kind": kind, "salt": salt, "params": dict(params), "items": admin_items}
    return payload, admin


def embed_json(obj: Any) -> str:
    """JSON safe inside an HTML ``<script>`` block: ``<``, ``>``, ``&``, U+2028, U+2029 escaped."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False)
    for ch, esc in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(ch, esc)
    return text


def _asset(name: str) -> str:
    return resources.files("nclue.audit").joinpath("assets", name).read_text(encoding="utf-8")


def render_html(payload: dict[str, Any], evaluator: str | None = None, images: Mapping[str, Any] | None = None) -> str:
    """The packet file: the template with its CSS, script (allowed by hash) and JSON blocks filled in.

    ``images`` is ``{"refs": {"<item id>:<page>": index}, "data": [data URI, …]}`` (each page
    rendered once however many items show it), or empty.
    """
    import html

    script = _asset("packet.js")
    script_hash = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    values = {
        "CSS": _asset("packet.css"),
        "JS": script,
        "SCRIPT_HASH": f"'sha256-{script_hash}'",
        "TITLE": html.escape(payload["title"]),
        "DATA": embed_json(payload),
        "CONFIG": embed_json({"evaluator": evaluator or ""}),
        "IMAGES": embed_json(dict(images or {"refs": {}, "data": []})),
    }
    return re.sub(r"\{\{(\w+)\}\}|/\*(CSS|JS)\*/", lambda m: values[m.group(1) or m.group(2)], _asset("packet.html"))


MAX_IMAGE_PIXELS = 8_000_000
"""Most pixels of one page image (``--image-width`` is at most 2000, so up to a 2000 × 4000 page is untouched)."""
MAX_IMAGE_SIDE = 65_500
"""Longest side, in pixels, of a page image: the JPEG format's limit."""


def page_image(handle: Any, width: int, quality: int) -> str:
    """A ``pypdfium2.PdfPage`` as a grayscale JPEG data URI ``width`` pixels wide, or ``""`` for a page with no area.

    The scale is capped (:func:`nclue.corpus.render.capped_scale`) so the bitmap holds at most
    :data:`MAX_IMAGE_PIXELS` pixels: a very tall or narrow page is drawn narrower, not as a
    gigabyte bitmap.
    """
    page_width, page_height = handle.get_size()
    if not renderable(page_width, page_height):
        return ""
    scale = capped_scale(page_width, page_height, width / max(page_width, 1.0), MAX_IMAGE_PIXELS, MAX_IMAGE_SIDE)
    bitmap = handle.render(scale=scale, grayscale=True)
    buffer = io.BytesIO()
    bitmap.to_pil().convert("L").save(buffer, "JPEG", quality=quality, optimize=True)
    return "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode()


def render_images(
    store: PageStore,
    pdf_dir: str | os.PathLike[str],
    wanted: Mapping[str, tuple[str, int]],
    width: int,
    tick: Progress,
    quality: int = 40,
) -> dict[str, Any]:
    """``{"refs": {key: index}, "data": [data URI, …]}``: a grayscale JPEG per distinct wanted ``(doc_id, page)``.

    Each PDF is found at ``pdf_dir / path`` (the collection's relative path) and must have the
    SHA-256 the collection recorded, so the picture shows the page whose text is beside it.
    """
    import pypdfium2 as pdfium

    base = Path(pdf_dir)
    rows = {r["doc_id"]: r for r in store.docs.select(["doc_id", "path", "sha256"]).to_pylist()}
    distinct = sorted(set(wanted.values()))
    index = {page: i for i, page in enumerate(distinct)}
    data: list[str] = [""] * len(distinct)
    tick("images", 0, len(distinct))
    for doc_id in sorted({d for d, _ in distinct}):
        path = base / rows[doc_id]["path"]
        if not path.is_file():
            raise NclueError(
                f"{path}: PDF of {doc_id!r} not found under --pdf-dir {base}; give the folder that was ingested"
            )
        if sha256_file(path) != rows[doc_id]["sha256"]:
            raise NclueError(
                f"{path}: not the PDF the collection was built from (SHA-256 differs); give the ingested folder"
            )
        pdf = pdfium.PdfDocument(str(path))
        try:
            for number in sorted(p for d, p in distinct if d == doc_id):
                data[index[(doc_id, number)]] = page_image(pdf[number - 1], width, quality)
                tick("images", 1, None)
        finally:
            pdf.close()
    return {"refs": {key: index[page] for key, page in sorted(wanted.items())}, "data": data}


@dataclass(frozen=True)
class PacketSummary(Tabular):
    """What a packet holds (``nclue audit packet``, ``nclue audit repair``)."""

    path: Path
    packet_id: str
    kind: str
    items: int
    conditions: int
    pages_per_condition: tuple[int, float, int]
    page_contexts: int
    memberships: Mapping[str, int]
    size_bytes: int
    images: int
    recall: Mapping[str, int] | None = None

    def to_json(self) -> dict:
        out = {
            "path": str(self.path),
            "packet_id": self.packet_id,
            "kind": self.kind,
            "items": self.items,
            "conditions": self.conditions,
            "pages_per_condition": {
                "min": self.pages_per_condition[0],
                "mean": self.pages_per_condition[1],
                "max": self.pages_per_condition[2],
            },
            "page_contexts": self.page_contexts,
            "memberships": dict(self.memberships),
            "size_bytes": self.size_bytes,
            "images": self.images,
        }
        if self.recall is not None:
            out["held_out_recall"] = dict(self.recall)
        return out

    def tables(self) -> list[Table]:
        lo, mean, hi = self.pages_per_condition
        rows = [
            ("Packet", f"{self.packet_id} ({self.kind})"),
            ("Pairs / conditions", f"{self.items} / {self.conditions}"),
            ("Displayed page contexts", str(self.page_contexts)),
            ("Pages per condition (min / mean / max)", f"{lo} / {mean:.2f} / {hi}"),
            *((f"{route.capitalize()} memberships", str(n)) for route, n in self.memberships.items()),
            ("Page images", str(self.images)),
            ("File size", f"{self.size_bytes / 1e6:.1f} MB"),
        ]
        if self.recall is not None:
            r = self.recall
            rows += [
                ("Held-out locked positives", str(r["locked"])),
                ("Recovered by rank 6 / 9", f"{r['rank6']}/{r['locked']} / {r['rank9']}/{r['locked']}"),
                ("All selected pages present by rank 9", f"{r['all9']}/{r['locked']}"),
            ]
        return [
            Table(
                ("Packet statistic", "Value"),
                tuple(rows),
                "lr",
                "Packet composition. Route memberships are not mutually exclusive: one page can be recovered by several routes.",
            )
        ]


def write_packet(
    audit: AuditDir,
    payload: dict[str, Any],
    admin: dict[str, Any],
    store: PageStore | None,
    out: str | os.PathLike[str],
    evaluator: str | None = None,
    pdf_dir: str | os.PathLike[str] | None = None,
    image_width: int = 420,
    tick: Progress = quiet,
    recall: Mapping[str, int] | None = None,
) -> PacketSummary:
    """Store the packet in the audit and write its HTML file; return its composition."""
    target = Path(out)
    if target.is_dir():
        raise NclueError(f"{target}: is a directory; give the packet file name, e.g. {target / 'packet.html'}")
    audit.save_packet(payload, admin)
    images: dict[str, Any] = {"refs": {}, "data": []}
    if pdf_dir is not None:
        if store is None:
            raise NclueError("page images need the collection; give COLLECTION with --pdf-dir")
        wanted = {
            f"{item['id']}:{page['page']}": (admin["items"][item["id"]]["doc_id"], page["page"])
            for item in payload["items"]
            for cond in item["conditions"]
            for page in cond["pages"]
        }
        images = render_images(store, pdf_dir, wanted, image_width, tick)
    text = render_html(payload, evaluator, images)
    atomic_write_text(target, text)
    counts = [len(c["pages"]) for item in payload["items"] for c in item["conditions"]]
    memberships: dict[str, int] = {}
    for item in admin["items"].values():
        for cond in item["conditions"].values():
            for row in cond["pool"]:
                for route in row["routes"]:
                    memberships[route] = memberships.get(route, 0) + 1
    return PacketSummary(
        path=target,
        packet_id=payload["packet_id"],
        kind=payload["kind"],
        items=len(payload["items"]),
        conditions=len(counts),
        pages_per_condition=(min(counts, default=0), float(np.mean(counts)) if counts else 0.0, max(counts, default=0)),
        page_contexts=sum(counts),
        memberships=dict(sorted(memberships.items())),
        size_bytes=len(text.encode("utf-8")),
        images=len(images["data"]),
        recall=recall,
    )


def build_packet(
    audit_dir: str | os.PathLike[str],
    collection: str | os.PathLike[str],
    out: str | os.PathLike[str],
    evaluator: str | None = None,
    pdf_dir: str | os.PathLike[str] | None = None,
    rubric_file: str | os.PathLike[str] | None = None,
    params: PoolParams = PoolParams(),
    image_width: int = 420,
    tick: Progress = quiet,
) -> PacketSummary:
    """The first packet of an audit: ``initial`` pages per condition (a challenge shows its expanded pools)."""
    audit = AuditDir.open(audit_dir)
    store = PageStore.open(collection)
    finder = RouteFinder(store, str(collection), params)
    overrides = load_overrides(rubric_file)
    finder.prefetch_bm25(" ".join(dict.fromkeys((c, *p.aliases.get(c, ())))) for p in audit.pairs for c in p.conditions)
    kind = "challenge" if audit.kind == "challenge" else "audit"
    size, minimum = (
        (params.expanded_max, params.expanded_min) if kind == "challenge" else (params.initial, params.initial)
    )
    entries = []
    tick("pools", 0, len(audit.pairs))
    for pair in sorted(audit.pairs, key=lambda p: p.doc_id):
        shown = []
        for index, name in enumerate(pair.conditions, start=1):
            routes = finder.routes(pair.doc_id, name, tuple(pair.aliases.get(name, ())), pair.pages.get(name, ()))
            pages = pool(routes, size, minimum=minimum)
            shown.append(Shown(index, name, tuple(pages), tuple(pool_entries(routes, pages))))
        entries.append((pair, shown))
        tick("pools", 1, None)
    entries.sort(key=lambda e: e[0].pair)
    payload, admin = build_payload(audit, kind, entries, store, params, overrides)
    return write_packet(audit, payload, admin, store, out, evaluator, pdf_dir, image_width, tick)
