"""The paraphrase form: filled once through a chat endpoint, frozen in the release, run like any other form."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from nclue.bench.paraphrase_fill import fill_paraphrases, render_prompt
from nclue.bench.prompts.paraphrase import parse
from nclue.bench.verify import verify
from nclue.errors import NclueError
from nclue.release import Release
from nclue.types import Judgment, Query
from tests.fixtures.small_collection import small_build_options

SMALL = small_build_options(20)


def hand_paraphrase(conditions: list[str] | tuple[str, ...]) -> str:
    """The paraphrase the replay server gives: the conditions, lower-cased, in a sentence."""
    return "manuals that explain " + " together with ".join(c.lower() for c in conditions)


@pytest.fixture(scope="module")
def indexed(small_collection: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A private indexed copy of the small collection and a release built on it."""
    from nclue.bench.pipeline import build
    from nclue.index.lexical import build_lexical_index

    root = tmp_path_factory.mktemp("paraphrase")
    coll = root / "collection"
    shutil.copytree(small_collection, coll)
    build_lexical_index(coll)
    build(coll, root / "bench", SMALL)
    return coll, root / "bench"


def _copy(bench: Path, tmp_path: Path) -> Path:
    out = tmp_path / "bench"
    shutil.copytree(bench, out)
    return out


def test_release_reads_the_frozen_cache_and_refuses_bad_rows(tmp_path: Path) -> None:
    queries = [Query("q1", ("Line numbering", "Poetry")), Query("q2", ("Footnotes", "Bibliography"))]
    Release.from_records(queries, [Judgment("q1", "d", 2, "gold")]).write(tmp_path)
    cache = tmp_path / "paraphrases.jsonl"
    cache.write_text('{"qid": "q1", "text": "poems with numbered lines"}\n')
    release = Release.open(tmp_path)
    assert release.query("q1").text("paraphrase") == "poems with numbered lines"
    assert "paraphrases.jsonl" in release.hashes
    with pytest.raises(NclueError, match="no 'paraphrase' text"):
        release.query("q2").text("paraphrase")
    for content, message in (
        ('{"qid": "q9", "text": "x"}\n', r"paraphrases.jsonl:1: qid 'q9' is not in queries.jsonl"),
        ('{"qid": "q1", "text": "a"}\n{"qid": "q1", "text": "b"}\n', r":2: qid 'q1' repeated \(first at line 1\)"),
        ('{"qid": "q1", "text": " "}\n', r":1: qid 'q1' has no non-empty 'text'"),
    ):
        cache.write_text(content)
        with pytest.raises(NclueError, match=message):
            Release.open(tmp_path)
    # written back, a paraphrase goes to paraphrases.jsonl, never into queries.jsonl
    cache.write_text('{"qid": "q2", "text": "notes and references"}\n')
    out = tmp_path / "copy"
    Release.open(tmp_path).write(out)
    assert "paraphrase" not in (out / "queries.jsonl").read_text()
    assert json.loads((out / "paraphrases.jsonl").read_text()) == {"qid": "q2", "text": "notes and references"}


def test_run_and_matrix_read_the_paraphrase_form(indexed: tuple[Path, Path], tmp_path: Path, cli) -> None:
    coll, built = indexed
    bench = _copy(built, tmp_path)
    queries = [json.loads(line) for line in (bench / "queries.jsonl").read_text().splitlines()]
    rows = [{"qid": q["qid"], "text": hand_paraphrase(q["conditions"])} for q in queries]
    (bench / "paraphrases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    runs = tmp_path / "runs"
    result = cli("run", bench, coll, "-s", "bm25.joint", "--form", "paraphrase", "-o", runs)
    assert result.exit_code == 0, result.output
    written = {
        json.loads(line)["qid"]: json.loads(line)["docs"]
        for line in (runs / "bm25.joint@paraphrase.jsonl").read_text().splitlines()
    }

    from nclue.systems.backbone import Request
    from nclue.systems.registry import Workspace

    system = Workspace(coll).system("bm25.joint")
    for q in queries[:5]:
        expected = system.search(Request(tuple(q["conditions"]), hand_paraphrase(q["conditions"])), 100)
        assert [d["doc_id"] for d in written[q["qid"]]] == [d.doc_id for d in expected]

    matrix = tmp_path / "m.toml"
    matrix.write_text('form = "clean_v2"\n[[run]]\nsystem = "bm25.and"\nforms = ["clean_v2", "paraphrase"]\n')
    result = cli("run", bench, coll, "--matrix", matrix, "-o", tmp_path / "mruns")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "mruns" / "bm25.and@paraphrase.jsonl").is_file()


def _answer(prompt: str) -> str:
    """First attempts of queries with a 2-condition list get prose (rejected); retries and others get JSON."""
    conditions = [line[2:] for line in prompt.splitlines() if line.startswith("- ")]
    if len(conditions) == 2 and "earlier answer" not in prompt:
        return "Sure! Here is a paraphrase."
    return json.dumps({"paraphrase": hand_paraphrase(conditions)})


def test_bench_paraphrase_fills_freezes_and_replays_offline(
    indexed: tuple[Path, Path], tmp_path: Path, cli, replay_server
) -> None:
    bench = _copy(indexed[1], tmp_path)
    server = replay_server(_answer)
    result = cli("bench", "paraphrase", bench, "--endpoint", server.url, "--model", "replay")
    assert result.exit_code == 0, result.output
    release = Release.open(bench)
    two = sum(q.n == 2 for q in release.queries)
    assert two and len(server.requests) == len(release.queries) + two  # one retry per 2-condition query
    assert all(q.text("paraphrase") == hand_paraphrase(q.conditions) for q in release.queries)
    manifest = json.loads((bench / "MANIFEST.json").read_text())
    record = manifest["paraphrase"]
    assert (record["accepted"], record["rejected_replies"], record["missing"]) == (len(release.queries), two, [])
    assert "## Paraphrases" in (bench / "README.md").read_text()
    sums = (bench / "SHA256SUMS").read_text()
    assert "  paraphrases.jsonl\n" in sums and "  judge/paraphrase_cache.jsonl\n" in sums
    assert verify(bench)[0] == []
    cache = [json.loads(line) for line in (bench / "judge" / "paraphrase_cache.jsonl").read_text().splitlines()]
    assert sum(row["response"].startswith("Sure") for row in cache) == two  # rejected replies are frozen too
    before = {p: p.read_bytes() for p in sorted(bench.rglob("*")) if p.is_file()}
    server.close()
    again = fill_paraphrases(bench, _offline())
    assert (again.fresh, again.cached) == (0, len(cache))
    assert {p: p.read_bytes() for p in sorted(bench.rglob("*")) if p.is_file()} == before


def _offline():  # noqa: ANN202
    from nclue.llm.client import LLMConfig

    return LLMConfig(url="http://127.0.0.1:9/v1", model="replay")


def test_missing_paraphrases_fail_loudly(indexed: tuple[Path, Path], tmp_path: Path, cli, replay_server) -> None:
    bench = _copy(indexed[1], tmp_path)
    server = replay_server(lambda prompt: "no JSON here")
    result = cli("bench", "paraphrase", bench, "--endpoint", server.url, "--model", "m", "--attempts", "2")
    assert result.exit_code == 1 and "have no paraphrase after 2 attempts" in result.output
    runs = cli("run", bench, indexed[0], "-s", "bm25.joint", "--form", "paraphrase", "-o", tmp_path / "r")
    assert runs.exit_code != 0 and "never generated at run time" in runs.output


def test_parser_accepts_one_line_json_and_names_each_problem() -> None:
    conds = ("Line numbering", "Poetry")
    assert parse('```json\n{"paraphrase": "poems whose  lines are numbered"}\n```', conds) == (
        "poems whose lines are numbered"
    )
    for reply, message in (
        ("numbered poems", "no JSON object"),
        ('{"text": "x"}', "no string 'paraphrase'"),
        ('{"paraphrase": "say \\"this\\""}', "without quotation marks"),
        ('{"paraphrase": "ab"}', "3 to 300 characters"),
        ('{"paraphrase": "line numbering  poetry"}', "repeats a verbatim rendering"),
    ):
        with pytest.raises(ValueError, match=message):
            parse(reply, conds)
    assert "earlier answer could not be used (no JSON object)" in render_prompt(Query("q", conds), "no JSON object")
