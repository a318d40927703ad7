"""The embedding gate with the bundled MiniLM: on-topic evidence passes, off-topic evidence is removed."""

from __future__ import annotations

import numpy as np
import pytest

from nclue.bench.compose import ComposeParams, evaluate, select_gated
from nclue.bench.gate import EmbeddingGate
from nclue.bench.inventory import Condition, Inventory
from nclue.corpus.store import PageStore

LOREM = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore."


@pytest.mark.slow
def test_gate_keeps_on_topic_and_removes_off_topic(make_collection) -> None:
    docs = {
        "d/good": [
            "3 Footnotes\nFootnotes are placed at the bottom of the page and numbered; a footnote mark follows the word.",
            "4 Bibliography\nThe bibliography lists cited books and articles, formatted by BibTeX styles.",
        ],
        "d/bad": [f"{LOREM} {LOREM}", "4 Bibliography\nThe bibliography lists cited books and articles."],
        "d/part": ["The bibliography lists cited books; bibliography entries.", "x"],
    }
    store = PageStore.open(make_collection(docs))
    ix = {d: i for i, d in enumerate(store.doc_ids.tolist())}
    good_id, bad_id, part_id = ix["d/good"], ix["d/bad"], ix["d/part"]
    inv = Inventory(
        doc_ids=store.doc_ids.tolist(),
        n_pages=np.array([2, 2, 2]),
        conditions=[
            Condition(name="bibliography", aliases=("bibliography",), key=("bibliography",), heading_df=2),
            Condition(name="footnotes", aliases=("footnote", "footnotes"), key=("footnote",), heading_df=2),
        ],
        pages=[{good_id: (2,), part_id: (1,)}, {good_id: (1,)}],
    )
    gate = EmbeddingGate(inv, store, threshold=0.3)
    good = evaluate(inv, (0, 1), max_golds=5)
    assert good is not None
    sims = gate.similarity(1, good_id, (1,))
    assert sims[0] > 0.3
    # same query, but the footnote evidence page is filler text (a mining error): the gate removes the item
    inv_bad = Inventory(inv.doc_ids, inv.n_pages, inv.conditions, [{bad_id: (2,), part_id: (1,)}, {bad_id: (1,)}])
    bad = evaluate(inv_bad, (0, 1), max_golds=5)
    assert bad is not None and inv.doc_ids[bad.golds[0]] == "d/bad"
    gate_bad = EmbeddingGate(inv_bad, store, threshold=0.3)
    chosen, drops = select_gated([bad], ComposeParams(n_queries=1), gate_bad, gate_bad.known, gate_bad.prefetch)
    assert chosen == [] and drops["rejected by judge gate"] == 1
    assert gate(good) is True
