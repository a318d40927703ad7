"""``run_systems`` and the CLI: release doc_id/sha256 matching, TREC + JSONL formats, search output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nclue.errors import NclueError
from nclue.io import write_jsonl
from nclue.query import render_forms
from nclue.release import Release
from nclue.runfile import run_path
from nclue.systems.run import run_systems

CONDITIONS = [["regression model", "data frame"], ["algorithm", "pseudocode", "loop"], ["chemical equation", "arrow"]]


def make_release(root: Path, workspace, rename: bool) -> Path:  # noqa: ANN001
    """A release with queries.jsonl and a corpus.jsonl naming documents by new ids (matched by sha256)."""
    root.mkdir(parents=True, exist_ok=True)
    write_jsonl(
        root / "queries.jsonl",
        [{"qid": f"q{i}", "conditions": c, "forms": render_forms(c)} for i, c in enumerate(CONDITIONS)],
    )
    shas = workspace.store.doc_sha256
    ids = sorted(shas)
    rows = [{"doc_id": (f"rel-{i}" if rename else d), "sha256": shas[d]} for i, d in enumerate(ids[1:])]
    rows.append({"doc_id": "not-in-collection", "sha256": "0" * 64})
    write_jsonl(root / "corpus.jsonl", rows)
    return root


def test_run_matches_by_sha256_and_writes_formats(workspace, tmp_path: Path) -> None:  # noqa: ANN001
    bench = make_release(tmp_path / "bench", workspace, rename=True)
    names = ["bm25.joint", "bm25.decompose(distinct)", "rrf(bm25.and,bm25.decompose(distinct))"]
    report = run_systems(bench, workspace, names, form="natural", out_dir=tmp_path / "runs", depth=20)
    m = report.mapping
    assert m.matched_by_sha256 == len(workspace.pages.doc_ids) - 1
    assert len(m.unmatched_collection) == 1 and m.missing_release == ["not-in-collection"]
    assert "by sha256" in report.summary()
    expected_names = {
        "bm25.joint@natural",
        "bm25.decompose(distinct)@natural",
        "rrf(bm25.and, bm25.decompose(distinct))@natural",
    }
    assert set(report.runs) == expected_names
    assert {p.name for p in report.files} == {
        run_path(".", n, ext).name for n in expected_names for ext in (".trec", ".jsonl")
    }
    dropped = sorted(workspace.store.doc_sha256)[0]
    for name in expected_names:
        lines = run_path(tmp_path / "runs", name, ".trec").read_text().splitlines()
        assert lines
        for line in lines:
            qid, q0, doc_id, rank, score, tag = line.split(" ")
            assert q0 == "Q0" and doc_id.startswith("rel-") and tag == name.replace(" ", "")
            float(score), int(rank)
        rows = [json.loads(x) for x in run_path(tmp_path / "runs", name).read_text().splitlines()]
        assert [r["qid"] for r in rows] == ["q0", "q1", "q2"]
        for row in rows:
            assert len(row["docs"]) <= 20 and all(d["doc_id"] != dropped for d in row["docs"])
            if name.startswith("bm25.decompose") and row["docs"]:
                doc = row["docs"][0]
                assert set(doc) == {"doc_id", "score", "pages", "evidence"}
                assert all(isinstance(p, int) and isinstance(s, float) for p, s in doc["pages"])
            if name.startswith("bm25.joint@") and row["docs"]:
                assert set(row["docs"][0]) == {"doc_id", "score"}


def test_failed_queries_are_counted(workspace, tmp_path: Path) -> None:  # noqa: ANN001
    bench = tmp_path / "bench"
    bench.mkdir()
    write_jsonl(
        bench / "queries.jsonl",
        [{"qid": "a", "conditions": ["the", "of"]}, {"qid": "b", "conditions": ["verse", "stanza"]}],
    )
    report = run_systems(bench, workspace, ["bm25.decompose(min)"])
    assert list(report.failed["bm25.decompose(min)"]) == ["a"]
    assert report.runs["bm25.decompose(min)"].rankings["a"] == []
    assert report.runs["bm25.decompose(min)"].rankings["b"]


def test_progress_hears_each_systems_queries(workspace, tmp_path: Path) -> None:  # noqa: ANN001
    bench = make_release(tmp_path / "bench", workspace, rename=False)
    events: list[tuple[str, int, int | None]] = []
    run_systems(bench, workspace, ["bm25.and", "bm25.joint"], progress=lambda *event: events.append(event))
    stages = ["queries: bm25.and", "queries: bm25.joint"]
    assert [event for event in events if event[1] == 0] == [(stage, 0, len(CONDITIONS)) for stage in stages]
    for stage in stages:
        assert sum(n for name, n, _ in events if name == stage) == len(CONDITIONS)


def test_running_systems_writes_nothing_to_stderr(workspace, tmp_path: Path, capfd: pytest.CaptureFixture) -> None:  # noqa: ANN001
    bench = make_release(tmp_path / "bench", workspace, rename=False)
    run_systems(bench, workspace, ["bm25.and"], out_dir=tmp_path / "runs")
    assert capfd.readouterr().err == ""


def test_a_bool_progress_still_works_with_a_deprecation_warning(  # noqa: ANN001 - workspace
    lexical_collection: Path, workspace, tmp_path: Path, capfd: pytest.CaptureFixture
) -> None:
    import nclue
    from nclue.progress import quiet

    bench = make_release(tmp_path / "bench", workspace, rename=False)
    expected = nclue.run_system(bench, lexical_collection, "bm25.and", progress=quiet).rankings
    assert capfd.readouterr().err == ""
    with pytest.warns(
        DeprecationWarning, match=r"nclue.run_system\(progress=True\) is deprecated: pass a progress"
    ) as warned:
        drawn = nclue.run_system(bench, lexical_collection, "bm25.and", progress=True)
    assert warned[0].filename == __file__  # the warning names the caller's line
    assert drawn.rankings == expected
    assert "queries: bm25.and" in capfd.readouterr().err
    with pytest.warns(DeprecationWarning, match=r"progress=False"):
        assert nclue.run_system(bench, lexical_collection, "bm25.and", progress=False).rankings == expected
    assert capfd.readouterr().err == ""
    with pytest.raises(NclueError, match=r"^progress must be a progress callback"):
        nclue.run_system(bench, lexical_collection, "bm25.and", progress="yes")


def test_query_file_errors_name_file_and_line(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "queries.jsonl", [{"qid": "a", "conditions": ["x"]}])
    with pytest.raises(NclueError, match="queries.jsonl:1: .*1 condition"):
        Release.open(tmp_path)
    with pytest.raises(NclueError, match="not found"):
        Release.open(tmp_path / "nope")


def test_cli_search_json_and_table(lexical_collection: Path, cli) -> None:  # noqa: ANN001
    result = cli("search", lexical_collection, '"regression model"; "data frame"', "-k", "3", "--format", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert [r["rank"] for r in rows] == [1, 2, 3]
    assert set(rows[0]["evidence"]) == {"regression model", "data frame"}
    from nclue.api import open_collection

    coll = open_collection(lexical_collection)
    for condition, shown in rows[0]["snippets"].items():
        assert shown["page"] == rows[0]["evidence"][condition][0]
        page = " ".join(coll.page_text(rows[0]["doc_id"], shown["page"]).split())
        assert " ".join(shown["text"].replace("…", " ").split())[:40] in page
        words = condition.lower().split()
        assert shown["spans"] and all(
            any(shown["text"][a:b].lower().startswith(w[:4]) for w in words) for a, b in shown["spans"]
        )
    result = cli("search", lexical_collection, "", "-c", "algorithm", "-c", "pseudocode", "-k", "2")
    assert result.exit_code == 0 and "algorithm" in result.output
    result = cli("search", lexical_collection, '"only one"')
    assert result.exit_code == 2 and "only one condition" in result.output


def test_cli_run(lexical_collection: Path, workspace, tmp_path: Path, cli) -> None:  # noqa: ANN001
    bench = make_release(tmp_path / "bench", workspace, rename=False)
    result = cli("run", bench, lexical_collection, "-s", "bm25.cover", "-o", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "bm25.cover.trec").is_file() and (tmp_path / "out" / "bm25.cover.jsonl").is_file()


def test_cli_search_takes_requirements_like_coverage_select_and_splits_sentences(lexical_collection: Path, cli) -> None:  # noqa: ANN001
    # --require: the conditions are exactly those; the question text is not a third condition
    result = cli("search", lexical_collection, "--query", "pseudocode in papers", "-r", "algorithm", "-r", "pseudocode")
    assert result.exit_code == 0, result.output
    assert "only one" not in result.output and "split from the sentence" not in result.output
    with_flags = cli("search", lexical_collection, "-r", "algorithm", "-r", "pseudocode", "-k", "3", "--format", "json")
    rows = json.loads(with_flags.stdout)
    assert all(set(r["evidence"]) <= {"algorithm", "pseudocode"} for r in rows)
    # a plain sentence is split, and the split is said
    sentence = cli("search", lexical_collection, "how do I write pseudocode with an algorithm environment", "-k", "2")
    assert sentence.exit_code == 0, sentence.output
    assert 'conditions split from the sentence: "write pseudocode"; "algorithm environment"' in sentence.stderr
    one = cli("search", lexical_collection, "pseudocode")
    assert one.exit_code == 2 and "only one condition" in one.output
    both = cli("search", lexical_collection, '"a"; "b"', "--query", "c; d")
    assert both.exit_code == 2 and "give the query once" in both.output


def test_split_sentence_examples() -> None:
    from nclue.query import split_sentence

    assert split_sentence("how do I typeset a critical edition with line numbers and footnotes?") == (
        "typeset a critical edition",
        "line numbers",
        "footnotes",
    )
    assert split_sentence("Find documents about kernel modules, package maintainers and the Debian policy") == (
        "kernel modules",
        "package maintainers",
        "Debian policy",
    )
    assert split_sentence("regression model and data frame") == ("regression model", "data frame")
    assert split_sentence("") == ()
