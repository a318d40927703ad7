"""The offline judge's establishes rule and alias grouping on a small hand-written collection."""

from __future__ import annotations

from nclue.bench.inventory import MineParams, mine
from nclue.corpus.store import PageStore

FILLER = "The reader will find more material in the next part of this guide and in the examples."


def _docs() -> dict[str, list[str]]:
    docs = {}
    for i in range(4):
        docs[f"src/doc{i}"] = [
            f"Manual {i}\n1 Font Encodings\nA font encoding maps character codes to glyphs. {FILLER}",
            f"Manual {i}\n{'3 Hyphenation' if i == 0 else 'Line breaks'}\nWe discuss hyphenation here. "
            f"Patterns control breaks; hyphenation is a craft. {FILLER}",
            f"Manual {i}\nOnly one font encoding mention and one critical apparatus mention. {FILLER}",
            f"Manual {i}\n2 Critical Apparatus\nHere the text encoding initiative (TEI) defines it. We follow TEI; its TEI guidelines use TEI names. {FILLER}",
        ]
    return docs


def test_establishes_rule_and_aliases(make_collection) -> None:
    store = PageStore.open(make_collection(_docs()))
    inv = mine(store, MineParams(min_df=2, max_df_frac=1.0, min_heading_df=1))
    by_name = {c.name: i for i, c in enumerate(inv.conditions)}
    assert "font encoding" in by_name
    fe = by_name["font encoding"]
    assert {"font encoding", "font encodings"} <= set(inv.conditions[fe].aliases)
    # page 1: heading + defining sentence; page 3: a single passing mention does not count
    assert all(pages == (1,) for pages in inv.pages[fe].values())
    assert len(inv.pages[fe]) == 4
    ca = by_name["critical apparatus"]
    assert all(pages == (4,) for pages in inv.pages[ca].values())
    # page 2 establishes hyphenation by repeated use; the running header "Manual i" is ignored
    assert all(2 in pages for pages in inv.pages[by_name["hyphenation"]].values())
    assert not any(c.name.lower() == "manual" for c in inv.conditions)


def test_acronym_pairs_merge(make_collection) -> None:
    store = PageStore.open(make_collection(_docs()))
    inv = mine(store, MineParams(min_df=2, max_df_frac=1.0, min_heading_df=0))
    names = {c.name: c for c in inv.conditions}
    tei = [c for c in inv.conditions if "TEI" in c.acronyms]
    assert tei and tei[0].name == "text encoding initiative" and "TEI" in tei[0].aliases
    # page 4 establishes it through the acronym's repeated use, although the expansion occurs once
    assert all(4 in pages for pages in inv.pages[inv.conditions.index(tei[0])].values())
    assert ("tei",) not in {c.key for c in names.values()}


def test_acronym_matches_are_finditer_on_random_text() -> None:
    """The paren-anchored search finds exactly what ``finditer`` over the whole text finds (brute force),
    on texts built from the characters that make matches start, end, overlap and fail."""
    import random

    from nclue.bench.inventory import _ACRONYM, _acronym_matches

    pieces = ["Text", "Encoding", "Initiative", "t", "e", "i", "-", " ", "\u00a0", "\n", "(", ")", "TEI", "TEIs",
              "(TEI)", "(TE)", "(TEIs)", "(TEXTENC)", "x1", ".", "ab", "Zz"]  # fmt: skip
    rng = random.Random(7)
    found = 0
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 40)))
        want = [(m.span(), m.groups()) for m in _ACRONYM.finditer(text)]
        assert [(m.span(), m.groups()) for m in _acronym_matches(text)] == want, text
        found += len(want)
    assert found > 300  # the texts do hold matches, several per text at times
