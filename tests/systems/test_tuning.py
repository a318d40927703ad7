"""``bm25.and_tuned``: re-weighted document BM25 against a brute-force count, the declared split,
and the tuning record against scores re-derived through ``nclue run`` + the scorer."""

from __future__ import annotations

import json
import math
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from nclue.errors import NclueError
from nclue.index.options import BM25Params
from nclue.io import write_jsonl
from nclue.query import render_forms
from nclue.systems.tuning import GRID, TUNING_FILE, grid_pairs, tuning_split

WORDS = ["regression", "data", "algorithm", "loop", "equation", "font", "table", "figure", "package", "function",
         "matrix", "plot", "citation", "index", "page", "chapter", "section", "example"]  # fmt: skip


def _brute_force_bm25(workspace, text: str, params: BM25Params) -> np.ndarray:  # noqa: ANN001
    """Lucene BM25 of ``text`` per document, counted here from each document's page texts."""
    analyzer = workspace.backbone("bm25").index.analyzer
    store = workspace.store
    docs: list[Counter] = [Counter() for _ in store.doc_ids]
    for row, doc in enumerate(store.page_doc):
        docs[doc].update(analyzer.terms(store.texts[row]))
    lengths = np.array([sum(c.values()) for c in docs], dtype=float)
    avg = lengths.mean()
    n = len(docs)
    out = np.zeros(n)
    for term in analyzer.terms(text):
        df = sum(1 for c in docs if term in c)
        if not df:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        for d, c in enumerate(docs):
            tf = c[term]
            out[d] += idf * tf / (tf + params.k1 * (1 - params.b + params.b * lengths[d] / avg))
    return out


def test_reweighted_scores_equal_a_brute_force_count_and_the_index(workspace) -> None:  # noqa: ANN001
    from nclue.systems.lexical import doc_term_counts

    backbone = workspace.backbone("bm25")
    counts = doc_term_counts(workspace, backbone)
    texts = ["regression data frame", "font font table", "algorithm loop"]
    at_index = counts.scores(texts, backbone.index.params)
    np.testing.assert_allclose(at_index, backbone.index.doc_scores(texts), rtol=1e-4, atol=1e-5)
    other = BM25Params(k1=0.6, b=0.25)
    got = counts.scores(texts, other)
    for row, text in enumerate(texts):
        np.testing.assert_allclose(got[row], _brute_force_bm25(workspace, text, other), rtol=1e-4, atol=1e-5)
    assert not np.allclose(got, at_index)  # the parameters do change the scores


def test_split_is_declared_disjoint_and_stable() -> None:
    qids = [f"q{i}" for i in range(41)]
    tune, held = tuning_split(qids, seed=3, fraction=0.5)
    assert len(tune) == 20 and len(held) == 21 and not set(tune) & set(held) and set(tune) | set(held) == set(qids)
    assert list(tune) == [q for q in qids if q in set(tune)]  # kept in release order
    assert tuning_split(qids, 3, 0.5) == (tune, held)
    grown, _ = tuning_split(qids + ["q99"], 3, 0.5)
    assert set(tune) <= set(grown)  # a new query never moves an old one out of the tuning half
    assert tuning_split(qids, 4, 0.5)[0] != tune
    with pytest.raises(NclueError, match="between 0 and 1"):
        tuning_split(qids, 0, 1.0)
    assert grid_pairs(GRID)[:2] == [(0.3, 0.0), (0.3, 0.25)] and len(grid_pairs(GRID)) == 35


def _release(root: Path, workspace) -> Path:  # noqa: ANN001
    """Queries of two words each; golds = the longer half of the documents containing both words."""
    backbone = workspace.backbone("bm25")
    store = workspace.store
    lengths = np.bincount(store.page_doc, weights=[len(t) for t in store.texts], minlength=len(store.doc_ids))
    queries, qrels = [], []
    for i in range(len(WORDS) - 1):
        conds = [WORDS[i], WORDS[i + 1]]
        both = np.flatnonzero(np.all(backbone.doc_matches(conds), axis=0))
        one = np.flatnonzero(np.any(backbone.doc_matches(conds), axis=0) & ~np.isin(np.arange(len(lengths)), both))
        if len(both) < 2:
            continue
        qid = f"t{i:02d}"
        queries.append({"qid": qid, "conditions": conds, "forms": render_forms(conds)})
        ranked = sorted(both.tolist(), key=lambda d: (-lengths[d], d))
        for j, d in enumerate(ranked):
            label = "gold" if j < len(ranked) / 2 else "partial"
            qrels.append({"qid": qid, "doc_id": store.doc_ids[d], "grade": 2, "label": label})
        qrels += [{"qid": qid, "doc_id": store.doc_ids[d], "grade": 1, "label": "partial"} for d in one.tolist()]
    root.mkdir(parents=True)
    write_jsonl(root / "queries.jsonl", queries)
    write_jsonl(root / "qrels.jsonl", qrels)
    return root


@pytest.mark.slow
def test_tuning_record_matches_scores_rederived_from_run_files(
    lexical_collection: Path, workspace, tmp_path: Path, cli
) -> None:  # noqa: ANN001, E501
    from nclue.systems.registry import Workspace

    collection = tmp_path / "coll"
    shutil.copytree(lexical_collection, collection)
    bench = _release(tmp_path / "bench", workspace)
    missing = cli("run", bench, collection, "-s", "bm25.and_tuned", "--form", "raw", "-o", tmp_path / "none")
    assert missing.exit_code != 0 and "nclue tune" in missing.output
    result = cli("tune", bench, collection, "--form", "raw", "--seed", "1")
    assert result.exit_code == 0, result.output
    assert "held-out n-Clue@10" in result.output
    record = json.loads((collection / TUNING_FILE).read_text())
    assert record["objective"] == "n_clue_score@10" and len(record["table"]) == 35
    best = max(row["score"] for row in record["table"])
    first_best = next(row for row in record["table"] if row["score"] == best)
    assert record["chosen"] == {"k1": first_best["k1"], "b": first_best["b"]}
    assert sorted(record["tuning_qids"] + record["heldout_qids"]) == sorted(
        json.loads(line)["qid"] for line in (bench / "queries.jsonl").read_text().splitlines()
    )
    runs = tmp_path / "runs"
    ran = cli("run", bench, collection, "-s", "bm25.and_tuned", "-s", "bm25.and", "--form", "raw", "-o", runs)
    assert ran.exit_code == 0, ran.output
    from nclue.release import Release
    from nclue.runfile import run_path
    from nclue.scoring import Benchmark, load_run_matrix, score_runs

    bench_arrays = Benchmark.from_release(Release.open(bench, require_qrels=True))
    scores = score_runs(
        bench_arrays,
        [load_run_matrix(run_path(runs, f"{n}@raw"), bench_arrays) for n in ("bm25.and_tuned", "bm25.and")],
    )
    held = np.isin(np.array(bench_arrays.qids), record["heldout_qids"])
    rederived = {n: round(100 * float(scores.n_clue[i][held].mean()), 4) for i, n in enumerate(scores.names)}
    assert rederived["bm25.and_tuned@raw"] == pytest.approx(record["heldout"]["tuned"], abs=1e-3)
    assert rederived["bm25.and@raw"] == pytest.approx(record["heldout"]["default"], abs=1e-3)
    tune = np.isin(np.array(bench_arrays.qids), record["tuning_qids"])
    assert round(100 * float(scores.n_clue[0][tune].mean()), 4) == pytest.approx(best, abs=1e-3)
    stale = dict(record, pages_sha256="0" * 64)
    (collection / TUNING_FILE).write_text(json.dumps(stale))
    with pytest.raises(NclueError, match="pages changed"):
        Workspace(collection).system("bm25.and_tuned")
