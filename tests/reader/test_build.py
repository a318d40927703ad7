"""``nclue build --judge reader`` on the 12-document fixture, with a scripted reader.

The reader is a local replay server with a rule of its own (a condition is established on a
shown page where its name occurs at least twice, quoting a line that names it; one prompt in seven gets prose instead of
JSON). The test keeps its own record of every verdict, maps each prompt back to its document
through the page texts, and recomputes every label by brute force — gold: an assignment of
distinct pages, one per condition, from the pages the reader quoted, and no single page holding
them all; partial: some condition read as established — so the release is checked against the
reader's answers, not against the code that wrote it.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from nclue.bench.construction_params import ReaderParams
from nclue.corpus.store import PageStore
from nclue.errors import NclueError
from nclue.index.lexical import build_lexical_index
from nclue.llm.cache import BatchPending
from nclue.reader.build import build_read_benchmark
from tests.fixtures.chat_replay import closed_port_url
from tests.fixtures.small_collection import small_build_options

pytestmark = pytest.mark.slow

_BLOCK = re.compile(r'^Condition \d+: "(.+)"$', re.MULTILINE)
_PAGE = re.compile(r"^--- page (\d+) ---$", re.MULTILINE)
READER = ReaderParams(candidates=40, pool_systems=("bm25.and", "bm25.decompose(distinct)"), pool_depth=3, max_docs=5)


def shown(prompt: str) -> list[tuple[str, list[tuple[int, str]]]]:
    """``[(condition, [(page, text), …]), …]`` as the prompt displays them."""
    body = prompt.split("\n\nAnswer with JSON only", 1)[0]
    starts = list(_BLOCK.finditer(body))
    out = []
    for k, head in enumerate(starts):
        block = body[head.end() : starts[k + 1].start() if k + 1 < len(starts) else len(body)]
        marks = list(_PAGE.finditer(block))
        pages = []
        for j, mark in enumerate(marks):
            end = marks[j + 1].start() if j + 1 < len(marks) else len(block)
            pages.append((int(mark.group(1)), block[mark.end() + 1 : end].rstrip("\n")))
        out.append((head.group(1), pages))
    return out


class ScriptedReader:
    """Answers prompts by its rule and remembers every verdict it gave (prompt → condition → pages)."""

    def __init__(self) -> None:
        self.verdicts: dict[str, dict[str, tuple[int, ...]]] = {}

    def __call__(self, prompt: str) -> str:
        if int(hashlib.sha256(prompt.encode()).hexdigest(), 16) % 7 == 0:
            return "I cannot judge these pages."
        entries, verdict = [], {}
        for name, pages in shown(prompt):
            evidence = []
            for page, text in pages:
                lines = [ln.strip() for ln in text.splitlines() if name.lower() in ln.lower() and len(ln.strip()) >= 20]
                if lines and len(re.findall(re.escape(name), text, flags=re.IGNORECASE)) >= 2:
                    evidence.append({"page": page, "quote": lines[0]})
            entries.append({"condition": name, "established": bool(evidence), "evidence": evidence})
            verdict[name] = tuple(sorted(e["page"] for e in evidence))
        self.verdicts[prompt] = verdict
        return json.dumps({"conditions": entries})


def page_owners(store: PageStore) -> dict[tuple[int, str], set[str]]:
    """(page number, displayed text) → the documents with that page."""
    out: dict[tuple[int, str], set[str]] = {}
    ids = store.doc_ids.tolist()
    for doc, page, text in zip(store.page_doc.tolist(), store.page_number.tolist(), store.texts):
        out.setdefault((page, text[:4000].rstrip("\n")), set()).add(ids[doc])
    return out


def doc_of(prompt: str, owners: dict[tuple[int, str], set[str]]) -> str:
    """The one document whose pages the prompt shows."""
    docs = set.intersection(*(owners.get(key, set()) for _, pages in shown(prompt) for key in pages))
    assert len(docs) == 1, "a prompt must show pages of exactly one document"
    return next(iter(docs))


def brute_label(evidence: list[tuple[int, ...]]) -> str:
    """gold / partial / none from the pages quoted per condition (SPEC: distinct pages, no single page)."""
    if not any(evidence):
        return "none"
    if all(evidence):
        one_page = set.intersection(*(set(p) for p in evidence))
        distinct = any(len(set(choice)) == len(choice) for choice in itertools.product(*evidence))
        if distinct and not one_page:
            return "gold"
    return "partial"


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.fixtures.small_collection import FIXTURE_COLLECTION

    coll = tmp_path_factory.mktemp("reader") / "coll"
    shutil.copytree(FIXTURE_COLLECTION, coll)
    build_lexical_index(coll)
    return coll


def _options(**kw: object):  # noqa: ANN202 - a BuildOptions
    return replace(small_build_options(12, judge="reader", **kw), reader=READER)


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_labels_are_the_readers_and_rebuild_offline(indexed: Path, tmp_path: Path, replay_server) -> None:
    reader = ScriptedReader()
    server = replay_server(reader)
    out = tmp_path / "bench"
    summary = build_read_benchmark(indexed, out, _options(llm_url=server.url, llm_model="scripted"))
    assert summary.problems == [] and summary.manifest["counts"]["queries"] > 0
    owners = page_owners(PageStore.open(indexed))
    truth: dict[tuple[str, str], tuple[int, ...]] = {}
    for prompt, verdict in reader.verdicts.items():
        doc = doc_of(prompt, owners)
        truth |= {(doc, name): pages for name, pages in verdict.items()}

    queries = {q["qid"]: q for q in map(json.loads, (out / "queries.jsonl").read_text().splitlines())}
    qrels: dict[str, dict[str, str]] = {}
    for line in (out / "qrels.jsonl").read_text().splitlines():
        row = json.loads(line)
        qrels.setdefault(row["qid"], {})[row["doc_id"]] = row["label"]
    reading = [json.loads(line) for line in (out / "reading.jsonl").read_text().splitlines()]
    assert sorted(r["qid"] for r in reading) == sorted(queries)
    unread = 0
    for row in reading:
        conds = row["conditions"]
        assert conds == queries[row["qid"]]["conditions"]
        found = sorted({d for (d, c), pages in truth.items() if pages and c in conds} - set(row["pool"]))
        considered = [*row["pool"], *found]
        judged = [d for d in considered if all((d, c) in truth for c in conds)]
        unread += len(considered) - len(judged)
        assert row["judged"] == judged and row["read_beyond_pool"] == [d for d in judged if d in found]
        assert not any(truth.get((d, c)) for d in set(considered) - set(judged) for c in conds)
        expected = {d: brute_label([truth[(d, c)] for c in conds]) for d in judged}
        expected = {d: lab for d, lab in expected.items() if lab != "none"}
        assert qrels[row["qid"]] == expected, row["qid"]
        golds = sum(1 for lab in expected.values() if lab == "gold")
        assert 1 <= golds <= summary.manifest["parameters"]["compose"]["max_golds"]
        assert len(expected) > golds  # a natural partial
    judgments = [json.loads(line) for line in (out / "judgments.jsonl").read_text().splitlines()]
    assert {(r["doc_id"], r["condition"]): tuple(r["established"]) for r in judgments} == truth
    assert all(set(r["established"]) <= set(r["shown"]) and r["shown"] for r in judgments)
    assert unread > 0  # the prose replies left pairs unread, and their documents unjudged
    record = summary.manifest["reading"]
    assert record["replies_malformed"] > 0 and 0 < record["judged_fraction"] < 1
    assert "reader" in (out / "README.md").read_text() and "blind readers" in (out / "README.md").read_text()
    from nclue.bench.card import label_signals

    replies = record["provenance"]["replies"]
    assert label_signals(summary.manifest).startswith(f"blind readers ({replies} replies")
    assert label_signals({"conditions": {"kind": "sections"}}).startswith("a heading rule")
    assert label_signals({"conditions": {"kind": "lexical"}, "judge": "offline"}).startswith("a lexical rule")

    before = _files(out)
    server.close()
    rebuilt = build_read_benchmark(indexed, out, _options(llm_url=closed_port_url(), llm_model="scripted"))
    assert rebuilt.problems == [] and _files(out) == before


def test_batch_round_trip_gives_the_online_labels(indexed: Path, tmp_path: Path, replay_server) -> None:
    reader = ScriptedReader()
    online = tmp_path / "online"
    build_read_benchmark(indexed, online, _options(llm_url=replay_server(reader).url, llm_model="scripted"))

    batch_out, out, replies = tmp_path / "requests.jsonl", tmp_path / "batch", tmp_path / "replies.jsonl"
    with pytest.raises(BatchPending):
        build_read_benchmark(indexed, out, _options(llm_model="scripted", llm_batch_out=batch_out))
    assert not (out / "qrels.jsonl").exists()
    cycles = 0
    while True:  # one import per round of reading: later rounds ask about documents earlier rounds found
        rows = [json.loads(line) for line in batch_out.read_text().splitlines()]
        replies.write_text(
            "".join(
                json.dumps({"custom_id": r["custom_id"], "reply": reader(r["body"]["messages"][0]["content"])}) + "\n"
                for r in rows
            )
        )
        cycles += 1
        options = _options(
            llm_model="scripted", llm_batch_in=replies, llm_batch_out=batch_out, llm_answered_by="script"
        )
        try:
            build_read_benchmark(indexed, out, options)
            break
        except BatchPending:
            assert cycles < READER.rounds
    assert cycles > 1
    for name in ("queries.jsonl", "qrels.jsonl", "reading.jsonl"):
        assert (out / name).read_bytes() == (online / name).read_bytes()
    manifest = json.loads((out / "MANIFEST.json").read_text())
    assert manifest["reading"]["provenance"]["answered_by"] == {"script": manifest["reading"]["provenance"]["replies"]}


def test_refuses_section_conditions(indexed: Path, tmp_path: Path) -> None:
    with pytest.raises(NclueError, match="--conditions lexical"):
        build_read_benchmark(indexed, tmp_path / "b", replace(_options(), conditions="sections"))
