"""British/American spelling alternates: the word rules, and the gate on the collection's vocabulary."""

from __future__ import annotations

import numpy as np
import pytest

from nclue.index.spelling import alternate_text, alternates


@pytest.mark.parametrize(
    ("word", "other"),
    [
        ("customisation", "customization"),
        ("customization", "customisation"),
        ("organisations", "organizations"),
        ("analysed", "analyzed"),
        ("colour", "color"),
        ("behaviours", "behaviors"),
        ("favourite", "favorite"),
        ("centre", "center"),
        ("centred", "centered"),
        ("metres", "meters"),
        ("catalogue", "catalog"),
        ("labelled", "labeled"),
        ("modeling", "modelling"),
        ("licence", "license"),
        ("defense", "defence"),
        ("grey", "gray"),
        ("programme", "program"),
    ],
)
def test_listed_and_suffix_spellings_swap_both_ways(word: str, other: str) -> None:
    assert alternates(word) == other


@pytest.mark.parametrize(
    "word", ["size", "rise", "wise", "four", "hour", "tour", "filled", "called", "analysis", "basis"]
)
def test_words_that_only_look_british_have_no_alternate(word: str) -> None:
    assert alternates(word) is None


def test_rewrite_keeps_words_whose_other_spelling_the_collection_never_uses() -> None:
    vocab = {"customization": "custom", "colour": "colour", "color": "color", "option": "option"}
    known = vocab.get
    # "precise" → "precize" is not in the vocabulary: left as written; "options" is not a spelling variant
    assert alternate_text("precise customisation options", known) == "precise customization options"
    assert alternate_text("colour", known) == "color"
    assert alternate_text("precise options", known) is None
    assert alternate_text("", known) is None


def test_rewrite_needs_a_different_term() -> None:
    # both spellings stem to the same term: nothing to gain, no rewrite
    assert alternate_text("labelled", {"labelled": "label", "labeled": "label"}.get) is None


def test_bm25_and_phrase_signals_read_the_other_spelling(tmp_path) -> None:  # noqa: ANN001
    from nclue.evidence.signals import signal_matrix
    from nclue.select.coverage_evidence import docs_source

    texts = {
        "a": "Options and customization of the colour scheme",
        "b": "Nothing about the topic at all, only unrelated words",
    }
    source = docs_source(texts, np.zeros((2, 3), np.float32), lambda q: np.zeros((len(q), 3), np.float32), tmp_path)
    feats = signal_matrix(source, ("bm25", "phrase"), ["customisation", "color scheme", "unrelated words"])
    bm25, phrase = feats
    assert bm25[0, 0] > 0 and bm25[0, 1] == 0  # British condition, American page
    assert phrase[1, 0] == 1.0  # "color scheme" → "colour scheme", the page's own phrase
    # the same condition written in the page's spelling reads exactly as high
    same = signal_matrix(source, ("bm25",), ["customization"])[0]
    assert bm25[0, 0] == pytest.approx(same[0, 0])
    # a condition without variants is untouched
    assert bm25[2, 1] > 0 and bm25[2, 0] == 0
