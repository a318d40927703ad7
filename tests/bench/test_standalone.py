"""The release's standard-library scripts, run as a user would (``python -I -S``: no site-packages,
so no nclue and no NumPy), against nclue's own scorer and deb reader and a hand-made package."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.bench.test_build import SMALL


def _run(script: Path, *args: object) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-I", "-S", str(script), *map(str, args)], capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def release(small_collection: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from nclue.bench.pipeline import build

    out = tmp_path_factory.mktemp("standalone") / "bench"
    build(small_collection, out, SMALL)
    return out


@pytest.mark.slow
def test_verify_release_recomputes_every_published_score(release: Path, tmp_path: Path) -> None:
    import shutil

    from nclue.bench.verify import control_scores

    for name in ("fetch_corpus.py", "verify_release.py", "NOTICE.md"):
        assert name in (release / "SHA256SUMS").read_text()
    done = _run(release / "verify_release.py", release)
    assert done.returncode == 0, done.stdout + done.stderr
    manifest = json.loads((release / "MANIFEST.json").read_text())
    n_controls = len(manifest["controls"])
    assert f"{4 * n_controls} published number(s)" in done.stdout  # manifest (2 each) + card (2 each)
    # the peer: nclue's scorer gives the numbers the standalone script accepted
    assert control_scores(release) == manifest["controls"]

    copy = tmp_path / "copy"
    shutil.copytree(release, copy)
    body = json.loads((copy / "MANIFEST.json").read_text())
    body["controls"]["baseline.random"]["gold_hit@10"] += 1.0
    (copy / "MANIFEST.json").write_text(json.dumps(body))
    rows = [json.loads(line) for line in (copy / "controls" / "oracle.surface_and.jsonl").read_text().splitlines()]
    rows[0]["docs"] = []
    (copy / "controls" / "oracle.surface_and.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (copy / "stray.txt").write_text("x")
    bad = _run(copy / "verify_release.py", copy)
    assert bad.returncode == 1
    assert "MANIFEST.json: SHA-256 mismatch" in bad.stdout
    assert "baseline.random: MANIFEST.json says gold_hit@10" in bad.stdout
    assert "oracle.surface_and: README.md shows nclue@10 = 100.0" in bad.stdout
    assert "stray.txt: in the release but not in SHA256SUMS" in bad.stdout


def _tar_bytes(entries: list[tarfile.TarInfo], payloads: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:xz") as tar:
        for info in entries:
            data = payloads.get(info.name)
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buffer.getvalue()


def _ar(members: list[tuple[str, bytes]]) -> bytes:
    out = [b"!<arch>\n"]
    for name, data in members:
        header = f"{name + '/':<16}{0:<12}{0:<6}{0:<6}{100644:<8}{len(data):<10}`\n".encode()
        out += [header, data, b"\n" if len(data) % 2 else b""]
    return b"".join(out)


def _deb(path: Path) -> dict[str, bytes]:
    """A real-format ``.deb`` (ar + data.tar.xz) with two PDFs and a symlink to one; returns the bytes by path."""
    pdfs = {"./usr/share/doc/pkg/a.pdf": b"%PDF-1.4 first", "./usr/share/doc/pkg/sub/b.pdf": b"%PDF-1.4 second"}
    entries = []
    for name in pdfs:
        entries.append(tarfile.TarInfo(name))
    link = tarfile.TarInfo("./usr/share/doc/pkg/link.pdf")
    link.type, link.linkname = tarfile.SYMTYPE, "sub/b.pdf"
    entries.append(link)
    control = _tar_bytes([], {})
    path.write_bytes(
        _ar([("debian-binary", b"2.0\n"), ("control.tar.xz", control), ("data.tar.xz", _tar_bytes(entries, pdfs))])
    )
    return {
        "usr/share/doc/pkg/a.pdf": pdfs["./usr/share/doc/pkg/a.pdf"],
        "usr/share/doc/pkg/link.pdf": pdfs["./usr/share/doc/pkg/sub/b.pdf"],
    }


def test_fetch_corpus_downloads_checks_and_resumes(tmp_path: Path) -> None:
    from nclue.bench.notices import SCRIPTS
    from nclue.corpus.deb import iter_pdfs

    assert "fetch_corpus.py" in SCRIPTS
    script = Path(__import__("nclue.bench.standalone", fromlist=["x"]).__file__).parent / "fetch_corpus.py"
    deb = tmp_path / "pkg_1.0_all.deb"
    content = _deb(deb)
    # the peer: nclue's own deb reader sees the same bytes behind the same paths
    seen = {m.path: m.data for m in iter_pdfs(deb)}
    assert seen["usr/share/doc/pkg/link.pdf"] == content["usr/share/doc/pkg/link.pdf"]
    url = deb.as_uri()
    rows = [
        {"doc_id": "pkg/a", "path": "pkg/a.pdf", "sha256": hashlib.sha256(content["usr/share/doc/pkg/a.pdf"]).hexdigest(),
         "url": f"{url}#usr/share/doc/pkg/a.pdf"},
        {"doc_id": "pkg/link", "path": "pkg/link.pdf",
         "sha256": hashlib.sha256(content["usr/share/doc/pkg/link.pdf"]).hexdigest(), "url": f"{url}#usr/share/doc/pkg/link.pdf"},
        {"doc_id": "pkg/bad", "path": "pkg/bad.pdf", "sha256": "0" * 64, "url": f"{url}#usr/share/doc/pkg/a.pdf"},
        {"doc_id": "pkg/nourl", "path": "pkg/nourl.pdf", "sha256": "1" * 64},
    ]  # fmt: skip
    release = tmp_path / "release"
    release.mkdir()
    (release / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "pdfs"
    first = _run(script, release, "--out", out)
    assert first.returncode == 1
    assert "2 fetched, 0 already present, 2 problem(s)" in first.stdout
    assert "pkg/bad: SHA-256 mismatch" in first.stdout and "pkg/nourl: no url#member" in first.stdout
    assert (out / "pkg/a.pdf").read_bytes() == content["usr/share/doc/pkg/a.pdf"]
    assert (out / "pkg/link.pdf").read_bytes() == content["usr/share/doc/pkg/link.pdf"]
    assert not (out / "pkg/bad.pdf").exists()
    (release / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows[:2]))
    again = _run(script, release, "--out", out)
    assert again.returncode == 0 and "0 fetched, 2 already present, 0 problem(s)" in again.stdout


@pytest.mark.slow
def test_corpus_rows_carry_url_and_licence_of_the_same_bytes(small_collection: Path, tmp_path: Path) -> None:
    import shutil

    import pyarrow.parquet as pq

    from nclue.bench.pipeline import build

    collection = tmp_path / "coll"
    shutil.copytree(small_collection, collection)
    docs = pq.read_table(collection / "docs.parquet").to_pylist()
    pdf_dir = tmp_path / "pdfs"
    pdf_dir.mkdir()
    fetched = [
        {"path": d["path"], "sha256": d["sha256"] if i else "f" * 64, "url": f"http://x/{i}.deb#{d['path']}",
         "licence": f"lic-{i}", "licence_file": f"http://x/{i}.deb#copyright"}
        for i, d in enumerate(docs[:3])
    ]  # fmt: skip
    (pdf_dir / "fetch-manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in fetched))
    record = json.loads((collection / "collection.json").read_text())
    (collection / "collection.json").write_text(json.dumps({**record, "pdf_dir": str(pdf_dir)}))
    out = tmp_path / "bench"
    build(collection, out, SMALL)
    rows = {r["doc_id"]: r for r in map(json.loads, (out / "corpus.jsonl").read_text().splitlines())}
    first, second = rows[docs[0]["doc_id"]], rows[docs[1]["doc_id"]]
    assert "url" not in first and "licence" not in first  # the fetch record is of other bytes
    assert second["url"] == "http://x/1.deb#" + docs[1]["path"] and second["licence"] == "lic-1"
    assert second["licence_file"] == "http://x/1.deb#copyright"
    notice = (out / "NOTICE.md").read_text()
    assert "| lic-1 | 1 |" in notice and "Removal policy" in notice
    assert f"2 of {len(rows)} documents carry a URL" in notice


@pytest.mark.slow
def test_reference_rankings_are_rescored_by_the_standalone_verifier(
    release: Path, small_collection: Path, tmp_path: Path, cli
) -> None:
    import shutil

    from nclue.index.lexical import build_lexical_index

    bench = tmp_path / "bench"
    shutil.copytree(release, bench)
    collection = tmp_path / "coll"
    shutil.copytree(small_collection, collection)
    build_lexical_index(collection)
    runs = tmp_path / "runs"
    ran = cli("run", bench, collection, "-s", "bm25.and", "-s", "bm25.cover", "-o", runs)
    assert ran.exit_code == 0, ran.output
    made = cli("bench", "reference", bench, runs / "bm25.and.jsonl", runs / "bm25.cover.jsonl", "-c", collection)
    assert made.exit_code == 0, made.output
    scores = json.loads((bench / "reference" / "scores.json").read_text())
    assert set(scores) == {"bm25.and", "bm25.cover"}
    models = json.loads((bench / "reference" / "models.json").read_text())
    assert models["indexes"]["lexical"]["params"]["k1"] == 1.5
    assert models["runs"]["bm25.cover"] == {"system": "bm25.cover", "backbones": ["bm25"]}
    done = _run(bench / "verify_release.py", bench)
    manifest = json.loads((bench / "MANIFEST.json").read_text())
    assert done.returncode == 0, done.stdout
    assert f"{4 * len(manifest['controls']) + 4} published number(s)" in done.stdout
    scores["bm25.and"]["nclue@10"] += 0.5
    (bench / "reference" / "scores.json").write_text(json.dumps(scores))
    bad = _run(bench / "verify_release.py", bench)
    assert bad.returncode == 1 and "bm25.and: reference/scores.json says nclue@10" in bad.stdout
