"""``nclue build --conditions sections``: heading keys, the inventory re-derived from structure.parquet, a release."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from nclue.bench.construction_params import BuildOptions, ComposeParams, SectionParams
from nclue.bench.sections import card_section, mine_sections, title_key
from nclue.corpus.store import PageStore
from nclue.corpus.structure import StructureParams, build_structure
from nclue.errors import NclueError


@pytest.mark.parametrize(
    ("title", "key"),
    [
        ("2.3 Known Issues", ("known", "issue")),
        ("Chapter 4 Footnotes", ("footnote",)),
        ("A Implementation", ("implementation",)),
        ("Bugs?", ("bug",)),
        ("The User Interface", ("user", "interface")),
        ("Contents", None),  # labels a part of the document
        ("Version 0.2", None),  # digits: a version, not a concept
        ("as.environment", None),  # code
        ("h∗packagei", None),  # docstrip guard glyphs
        ("Playing jazz vibe chords quickly excites my wife. A", None),
    ],
)
def test_title_keys(title: str, key: tuple[str, ...] | None) -> None:
    assert title_key(title, 4) == key


@pytest.fixture(scope="module")
def structured(small_collection: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    coll = Path(shutil.copytree(small_collection, tmp_path_factory.mktemp("sections") / "coll"))
    build_structure(coll, StructureParams(fonts="off"))
    return coll


def test_inventory_is_rederived_from_the_headings(structured: Path) -> None:
    """Every (concept, document, page) of the inventory, and only those, has a heading of the concept's keys."""
    params = SectionParams(min_df=2)
    store = PageStore.open(structured)
    inventory, record = mine_sections(store, str(structured), params, judge="offline")
    assert record["kind"] == "sections" and "offline" in record["signals"]
    table = pq.read_table(structured / "structure.parquet").to_pylist()
    roles = {(r["doc_id"], r["page"]) for r in table if r["origin"] in ("toc", "index")}
    expected: dict[tuple[str, ...], dict[str, set[int]]] = defaultdict(lambda: defaultdict(set))
    for r in table:
        if r["origin"] in params.origins and (r["doc_id"], r["page"]) not in roles:
            key = title_key(r["title"], params.max_words)
            if key is not None:
                expected[key][r["doc_id"]].add(r["page"])
    assert inventory.conditions, "the 12 documents share section titles (Introduction, Examples, ...)"
    for condition, pages in zip(inventory.conditions, inventory.pages):
        got = {inventory.doc_ids[d]: set(p) for d, p in pages.items()}
        assert got == {d: p for d, p in expected[condition.key].items()}
        assert len(got) >= 2


def test_llm_judge_is_refused_for_sections(structured: Path) -> None:
    with pytest.raises(NclueError, match="embedding"):
        mine_sections(PageStore.open(structured), str(structured), SectionParams(), judge="llm")


def test_a_sections_release_validates_and_says_what_built_it(structured: Path, tmp_path: Path) -> None:
    from nclue.bench.pipeline import build
    from nclue.bench.verify import verify

    options = BuildOptions(
        judge="offline",
        conditions="sections",
        sections=SectionParams(min_df=2),
        compose=ComposeParams(n_queries=20, max_golds=3),
    )
    summary = build(structured, tmp_path / "bench", options)
    assert not summary.problems
    manifest = json.loads((tmp_path / "bench" / "MANIFEST.json").read_text())
    assert manifest["conditions"]["kind"] == "sections"
    assert manifest["counts"]["single_page_solvable_golds"] == 0 and manifest["counts"]["queries"] >= 1
    card = (tmp_path / "bench" / "README.md").read_text()
    assert "Conditions: `sections`" in card and "structure.parquet" in card
    assert "a heading contains one of its surface forms" not in card  # the lexical rule is replaced
    problems, _, _ = verify(tmp_path / "bench")
    assert problems == []


def test_card_section_replaces_only_the_rule() -> None:
    card = "# t\n\n## Counts\n\n- x\n\n## Establishes rule\n\nold rule\n\n## Files\n\n- y\n"
    record = {"signals": "S", "judge": "offline", "parameters": {"min_df": 3}, "concepts": 2, "seed_keys": 2}
    record["multi_key_concepts"] = 0
    out = card_section(card, record)
    assert "old rule" not in out and "## Files" in out and "## Counts" in out and "Signals that built" in out
