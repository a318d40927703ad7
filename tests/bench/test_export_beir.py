"""``nclue bench export --format beir``: a folder the beir package loads, with the collection's page
text, that nclue reads back and scores exactly as the release."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures.small_collection import build_small_release


@pytest.fixture(scope="module")
def release(small_collection: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_small_release(small_collection, tmp_path_factory.mktemp("export"))


def test_document_export_loads_in_beir_and_scores_as_the_release(release: Path, tmp_path: Path, cli) -> None:  # noqa: ANN001
    from beir.datasets.data_loader import GenericDataLoader

    import nclue
    from nclue.corpus.store import PageStore

    out = tmp_path / "beir"
    result = cli("bench", "export", release / "bench", release / "coll", "-o", out)
    assert result.exit_code == 0, result.output
    corpus, queries, qrels = GenericDataLoader(str(out)).load(split="test")
    bench = nclue.open_release(release / "bench")
    store = PageStore.open(release / "coll")
    assert set(corpus) == {str(d) for d in store.doc_ids.tolist()}
    assert set(queries) == {q.qid for q in bench.queries}
    assert {(q, d): s for q, docs in qrels.items() for d, s in docs.items()} == {
        (j.qid, j.doc_id): j.grade for j in bench.judgments
    }
    # the corpus text is the page store's: a document's first page opens its text
    first = next(iter(corpus))
    row = int(list(store.doc_ids).index(first))
    first_page = store.texts[int(list(store.page_doc).index(row))]
    assert corpus[first]["text"].startswith(first_page)
    q0 = bench.queries[0]
    assert queries[q0.qid] == q0.text("clean_v2")
    meta = json.loads((out / "queries.jsonl").read_text().splitlines()[0])["metadata"]
    assert meta["conditions"] == list(q0.conditions) and set(meta["forms"]) >= {"raw", "clean_v2", "natural"}
    # nclue reads the folder back as a benchmark and scores a run the same
    run = nclue.run_system(bench, nclue.open_collection(release / "coll"), "bm25.and")
    ours, back = nclue.evaluate(release / "bench", [run]), nclue.evaluate(out, [run])
    assert back["bm25.and"].n_clue_score == ours["bm25.and"].n_clue_score


def test_page_export_labels_evidence_pages(release: Path, tmp_path: Path, cli) -> None:  # noqa: ANN001
    from beir.datasets.data_loader import GenericDataLoader

    import nclue

    out = tmp_path / "pages"
    assert (
        cli(
            "bench", "export", release / "bench", release / "coll", "-o", out, "--unit", "page", "--form", "natural"
        ).exit_code
        == 0
    )
    corpus, queries, qrels = GenericDataLoader(str(out)).load(split="test")
    bench = nclue.open_release(release / "bench")
    q0 = bench.queries[0]
    assert queries[q0.qid] == q0.text("natural")
    # by hand from qrels.jsonl: each evidence page, scored by how many conditions it establishes
    expected: dict[tuple[str, str], int] = {}
    for j in bench.judgments:
        for pages in j.pages.values():
            for p in set(pages):
                key = (j.qid, f"{j.doc_id}#p{p}")
                expected[key] = expected.get(key, 0) + 1
    assert {(q, d): s for q, docs in qrels.items() for d, s in docs.items()} == expected
    from nclue.corpus.store import PageStore

    store = PageStore.open(release / "coll")
    doc_ids = [str(d) for d in store.doc_ids.tolist()]
    some = next(iter(expected))[1]
    doc, page = some.rsplit("#p", 1)
    row = next(
        r
        for r, (d, n) in enumerate(zip(store.page_doc.tolist(), store.page_number.tolist()))
        if doc_ids[d] == doc and n == int(page)
    )
    assert corpus[some]["text"] == store.texts[row] and len(corpus) == store.n_pages
    again = cli("bench", "export", release / "bench", release / "coll", "-o", out)
    assert again.exit_code != 0 and "not empty" in again.output
