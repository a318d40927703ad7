"""The per-source extraction gate is enforced by ``nclue build`` (``docs/construction.md#extraction-gate``).

The collection is the committed real one (12 PDFs, three sources) with pages of one source
blanked out, and a failed file added to another, so the expected shares are hand-computed.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from nclue.bench.construction_params import BuildOptions
from nclue.bench.pipeline import build
from nclue.bench.verify import verify
from nclue.corpus.info import extraction_gate
from nclue.corpus.store import DOCS_SCHEMA, PAGES_SCHEMA, PageStore, write_table_atomic
from nclue.errors import NclueError
from tests.fixtures.small_collection import small_build_options

pytestmark = pytest.mark.slow

BLANKED = "texlive-humanities-doc"
OPTIONS = small_build_options(40)


def _blank(collection: Path, source: str, n: int) -> None:
    """Empty the text of the first ``n`` pages of ``source``'s first document."""
    pages = pq.read_table(collection / "pages.parquet").to_pylist()
    docs = {r["doc_id"]: r["source"] for r in pq.read_table(collection / "docs.parquet").to_pylist()}
    hit = 0
    for row in pages:
        if docs[row["doc_id"]] == source and hit < n:
            row["text"], row["n_chars"], hit = "", 0, hit + 1
    write_table_atomic(collection / "pages.parquet", pa.Table.from_pylist(pages, schema=PAGES_SCHEMA))


def _add_failed_file(collection: Path, source: str, n_pages: int) -> None:
    docs = pq.read_table(collection / "docs.parquet").to_pylist()
    docs.append(
        dict(
            doc_id=f"{source}/broken",
            path=f"{source}/broken.pdf",
            sha256="0" * 64,
            n_pages=n_pages,
            n_bytes=1000,
            source=source,
            status="truncated",
            error="hand-made failure",
        )
    )
    docs.sort(key=lambda r: r["doc_id"])
    write_table_atomic(collection / "docs.parquet", pa.Table.from_pylist(docs, schema=DOCS_SCHEMA))


@pytest.fixture(scope="module")
def gated_collection(small_collection: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    coll = tmp_path_factory.mktemp("gate") / "collection"
    shutil.copytree(small_collection, coll)
    _blank(coll, BLANKED, 3)  # 73 of 76 pages usable = 96.05% < 98%
    return coll


def test_failed_files_count_in_the_denominator(small_collection: Path, tmp_path: Path) -> None:
    coll = tmp_path / "collection"
    shutil.copytree(small_collection, coll)
    _add_failed_file(coll, "r-doc-pdf", 10)
    rows = {r["source"]: r for r in extraction_gate(PageStore.open(coll))["sources"]}
    r_doc = rows["r-doc-pdf"]
    # the three R manuals have 52 + 41 + 69 = 162 pages, all usable; the failed file adds 10 unusable ones
    assert (r_doc["pages"], r_doc["failed_pages"], r_doc["failed_files"]) == (162, 10, 1)
    assert r_doc["usable_share"] == round(162 / 172, 6) and not r_doc["passed"]
    assert rows["texlive-science-doc"]["passed"] and rows["texlive-science-doc"]["failed_pages"] == 0


def test_build_leaves_out_a_source_below_the_gate(gated_collection: Path, tmp_path: Path) -> None:
    out = tmp_path / "bench"
    summary = build(gated_collection, out, OPTIONS)
    gate = summary.manifest["gate"]
    rows = {r["source"]: r for r in gate["sources"]}
    assert rows[BLANKED]["usable_share"] == round(73 / 76, 6) and rows[BLANKED]["reason"] == "below the gate"
    assert gate["excluded"] == [BLANKED] and gate["allowed_ungated"] == []
    assert rows[BLANKED]["documents_in_release"] == 0 and rows[BLANKED]["queries"] == 0
    assert (
        sum(r["queries"] for r in gate["sources"]) + gate["mixed_source_queries"]
        == summary.manifest["counts"]["queries"]
    )
    corpus = [json.loads(line) for line in (out / "corpus.jsonl").read_text().splitlines()]
    assert corpus and all(row["source"] != BLANKED for row in corpus)
    assert (
        summary.manifest["collection"]["documents"] == 9
        and summary.manifest["collection"]["documents_before_gate"] == 12
    )
    texts = [(out / name).read_text() for name in ("qrels.jsonl", "inventory.jsonl", "qrels/test.tsv")]
    texts += [p.read_text() for p in sorted((out / "controls").glob("*.jsonl"))]
    assert all(BLANKED not in text for text in texts)
    card = (out / "README.md").read_text()
    assert "## Sources and extraction gate" in card and f"Excluded (below the gate): {BLANKED}" in card
    problems, _, _ = verify(out)
    assert problems == []

    # no ranking over the release can hold an excluded document, even though the collection has them
    from nclue.index.lexical import build_lexical_index
    from nclue.systems.run import run_systems

    build_lexical_index(gated_collection)
    report = run_systems(out, gated_collection, ["bm25.joint"])
    ranked = {d.doc_id for docs in report.runs["bm25.joint"].rankings.values() for d in docs}
    assert ranked and not any(d.startswith(BLANKED) for d in ranked)
    assert len(report.mapping.unmatched_collection) == 3


def test_allow_ungated_keeps_the_source_and_records_it(gated_collection: Path, tmp_path: Path, cli) -> None:
    out = tmp_path / "bench"
    flags = ["--min-df", "2", "--max-df-frac", "0.34", "--queries", "40"]
    result = cli("build", gated_collection, "-o", out, *flags, "--allow-ungated", BLANKED)
    assert result.exit_code == 0, result.output
    assert f"gate: {BLANKED} 96.05% usable → included (--allow-ungated)" in result.output
    manifest = json.loads((out / "MANIFEST.json").read_text())
    assert manifest["gate"]["allowed_ungated"] == [BLANKED] and manifest["gate"]["excluded"] == []
    assert manifest["collection"]["documents"] == 12
    assert any(json.loads(line)["source"] == BLANKED for line in (out / "corpus.jsonl").read_text().splitlines())
    assert f"`--allow-ungated`): {BLANKED}" in (out / "README.md").read_text()
    unknown = cli("build", gated_collection, "-o", tmp_path / "x", *flags, "--allow-ungated", "nope")
    assert unknown.exit_code != 0 and "not a source of this collection" in unknown.output


def test_nothing_passes_is_a_clear_error(gated_collection: Path, tmp_path: Path) -> None:
    strict = BuildOptions(mine=OPTIONS.mine, compose=OPTIONS.compose, gate_min_chars=10**6)
    with pytest.raises(NclueError, match="no source passes the extraction gate.*--allow-ungated SOURCE"):
        build(gated_collection, tmp_path / "none", strict)
