"""Quote normalisation and the OCR-tolerant fuzzy route, against hand cases and brute force."""

from __future__ import annotations

import numpy as np
import pytest

from nclue.audit.quote_match import FuzzyText, letters, normalise, quote_problem, substring_distances, verbatim


def brute_substring_distance(pattern: str, text: str) -> int:
    """min over all substrings of the Levenshtein distance to ``pattern`` (plain O(n² m) DP)."""
    best = len(pattern)
    for i in range(len(text) + 1):
        prev = list(range(len(pattern) + 1))
        for j in range(i, len(text)):
            cur = [prev[0] + 1]
            for k, ch in enumerate(pattern, start=1):
                cur.append(min(prev[k] + 1, cur[k - 1] + 1, prev[k - 1] + (ch != text[j])))
            prev = cur
            best = min(best, prev[-1])
    return best


@pytest.mark.parametrize("seed", range(25))
def test_sellers_equals_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    alphabet = "abc "
    pattern = "".join(rng.choice(list(alphabet), int(rng.integers(1, 6))))
    text = "".join(rng.choice(list(alphabet), int(rng.integers(0, 14))))
    assert int(substring_distances(pattern, text).min()) == brute_substring_distance(pattern, text)


@pytest.mark.parametrize("seed", range(25))
def test_filtered_page_search_finds_exactly_the_brute_force_pages(seed: int) -> None:
    """The q-gram filter never drops a page that holds a match within the budget."""
    rng = np.random.default_rng(1000 + seed)
    pattern = "".join(rng.choice(list("abcde"), int(rng.integers(7, 11))))
    pages = []
    for _ in range(int(rng.integers(1, 6))):
        noise = "".join(rng.choice(list("abcde "), int(rng.integers(0, 25))))
        if rng.random() < 0.6:  # plant a corrupted copy of the pattern
            copy = list(pattern)
            for _ in range(int(rng.integers(0, 3))):
                copy[int(rng.integers(0, len(copy)))] = str(rng.choice(list("abcde")))
            noise = noise[: len(noise) // 2] + "".join(copy) + noise[len(noise) // 2 :]
        pages.append(noise)
    budget = 1
    expected = {i: d for i, p in enumerate(pages) if (d := brute_substring_distance(pattern, p)) <= budget}
    assert FuzzyText(pages).distances(pattern, budget) == expected


def test_fuzzy_hits_ocr_damage_but_not_other_words() -> None:
    pages = [letters(t) for t in ("The bib1iography lists works.", "Biography of the author.", "bibliography")]
    assert FuzzyText(pages).distances(letters("bibliography"), 1) == {0: 1, 2: 0}
    assert FuzzyText(pages).distances(letters("bibliography"), 0) == {2: 0}


def test_normalisation_and_quote_rules() -> None:
    assert normalise("  Foot\u00adnotes\n  are\tNOTES\u00a0here ") == "footnotes are notes here"
    assert normalise("ﬁle") == "file"  # NFKC ligature
    page = "3.2 Footnotes\nFootnotes are placed at the foot\nof the page."
    assert quote_problem("footnotes are placed at the FOOT of", page) is None
    assert quote_problem("", page) == "the quote is empty"
    assert quote_problem("Footnotes", page).startswith("the quote has 9 characters")
    assert quote_problem("footnotes are placed at the top", page).startswith("the quote is not on the page")
    assert verbatim("Footnotes are placed", page) and not verbatim("footnotes are placed", page)
    assert verbatim("Footnotes\nFootnotes", "3.2 Footnotes\r\nFootnotes are") and not verbatim("", page)
