"""Concept-containment QA of the query forms: hand cases, the build's record and verify's check."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from nclue.bench.forms_qa import coverage_lines, coverage_problems, coverage_record, form_coverage
from nclue.bench.verify import verify, write_sums
from nclue.types import Query

COND = ("Line numbering", "Footnotes")
RENDERED = Query("q1", COND)  # raw, clean_v2 and natural rendered from the conditions
TAMPERED = Query("q2", COND, forms={"natural": 'Find the document that discusses "line numbering" and "Footnotes".'})
PARA = Query("q3", COND, forms={"paraphrase": "numbered lines with notes at the foot of the page"})


def test_rendered_forms_contain_every_condition() -> None:
    cov = form_coverage([RENDERED])
    assert {f: (c.queries, c.covered) for f, c in cov.items()} == {"raw": (1, 1), "clean_v2": (1, 1), "natural": (1, 1)}


def test_a_reworded_condition_is_caught_case_included() -> None:
    cov = form_coverage([RENDERED, TAMPERED, PARA])
    assert (cov["natural"].covered, cov["natural"].missing) == (2, ("q2",))  # "line numbering" ≠ "Line numbering"
    assert cov["raw"].complete and cov["clean_v2"].complete
    assert (cov["paraphrase"].queries, cov["paraphrase"].covered) == (1, 0)  # measured, never required
    problems = coverage_problems([RENDERED, TAMPERED, PARA], None)
    assert len(problems) == 1 and "natural form of 1 of 3 queries" in problems[0] and "q2" in problems[0]


def test_a_stale_record_is_named() -> None:
    record = coverage_record([RENDERED])
    assert coverage_problems([RENDERED], record) == []
    stale = {**record, "raw": {"queries": 5, "covered": 5, "missing": []}}
    assert "records other coverage" in coverage_problems([RENDERED], stale)[0]
    assert "`natural` 1/1" in "\n".join(coverage_lines(record)) and coverage_lines(None) == []


@pytest.mark.slow
def test_the_build_records_full_coverage_and_verify_rechecks_it(small_release: Path, tmp_path: Path) -> None:
    manifest = json.loads((small_release / "MANIFEST.json").read_text())
    n = sum(1 for _ in (small_release / "queries.jsonl").open())
    assert manifest["query_forms"] == {
        f: {"queries": n, "covered": n, "missing": []} for f in ("raw", "clean_v2", "natural")
    }
    assert "Verbatim concept containment" in (small_release / "README.md").read_text()
    copy = tmp_path / "copy"
    shutil.copytree(small_release, copy)
    rows = [json.loads(line) for line in (copy / "queries.jsonl").read_text().splitlines()]
    first = rows[0]["conditions"][0]
    rows[0]["forms"]["clean_v2"] = rows[0]["forms"]["clean_v2"].replace(first, first.upper() + "S")
    (copy / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    write_sums(copy)  # a consistent-looking release whose clean_v2 form drops a condition
    problems, _, _ = verify(copy)
    assert any(f"clean_v2 form of 1 of {n} queries" in p for p in problems)
    assert any("query_forms records other coverage" in p for p in problems)


@pytest.fixture(scope="module")
def small_release(small_collection: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from nclue.bench.pipeline import build
    from tests.fixtures.small_collection import small_build_options

    out = tmp_path_factory.mktemp("forms") / "bench"
    build(small_collection, out, small_build_options(30))
    return out
