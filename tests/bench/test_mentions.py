"""Loose mentions (``nclue.bench.mentions``): where a reader may find a condition the rule does not see."""

from __future__ import annotations

import numpy as np

from nclue.bench.mentions import WINDOW, loose_mention_docs, loose_stem


def test_loose_stems_fold_inflection_derivation_and_spelling() -> None:
    assert loose_stem("parsing") == loose_stem("parses") == loose_stem("Parse")
    assert loose_stem("colour") == loose_stem("color") == loose_stem("colorization")[: len(loose_stem("color"))]
    assert loose_stem("organise") == loose_stem("organize")


def test_documents_that_mention_a_condition_loosely() -> None:
    surface = ["methods", "class", "data", "frame", "x", "parses", "Class"]
    # doc 0: "methods ( class = data frame )"; doc 1: "parses"; doc 2: "class" far from "methods"
    tokens = [(0, 0), (1, 0), (2, 0), (3, 0), (5, 1), (0, 2)] + [(4, 2)] * (WINDOW + 1) + [(6, 2)]
    orig = np.array([t for t, _ in tokens])
    row = np.array([r for _, r in tokens])
    page_doc = np.array([0, 1, 2])
    found = loose_mention_docs(
        surface, orig, row, np.zeros(len(orig), dtype=bool), page_doc, ["class methods", "parsing"]
    )
    assert found == [{0}, {1}]
    named = np.zeros(len(orig), dtype=bool)
    named[:2] = True  # inside a proper name it is no mention
    assert loose_mention_docs(surface, orig, row, named, page_doc, ["class methods"]) == [set()]
