"""Near-duplicate groups and the rule every selector obeys: resemblance against brute-force set
Jaccard, the ledmac family of the real Debian corpus, the rule on hand-built pools for every
selector, set cover against exhaustive search, MMR's commensurate scales."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import numpy as np
import pytest

from nclue.index.duplicates import components, resemblance_pairs, shingle_hashes, text_duplicates
from nclue.select import diversify
from nclue.select.inputs import TaskVectors
from nclue.select.redundancy import first_redundant, redundant_slots, select_distinct
from nclue.select.selectors import SELECTORS, run_selector

RNG = np.random.default_rng(7)


def test_resemblance_equals_brute_force_jaccard_of_the_shingle_sets():
    docs = [RNG.integers(0, 40, size=RNG.integers(0, 300)) for _ in range(12)]
    docs.append(docs[3].copy())  # an exact copy
    docs.append(np.concatenate([docs[4][:150], RNG.integers(0, 40, size=150)]))  # half shared
    shingles = [shingle_hashes(d) for d in docs]
    i, j, r = resemblance_pairs(shingles, min_resemblance=0.0)
    got = {(a, b): v for a, b, v in zip(i.tolist(), j.tolist(), r.tolist(), strict=True)}
    for a, b in itertools.combinations(range(len(docs)), 2):
        sa = {tuple(docs[a][p : p + 5]) for p in range(max(1, len(docs[a]) - 4))} if len(docs[a]) else set()
        sb = {tuple(docs[b][p : p + 5]) for p in range(max(1, len(docs[b]) - 4))} if len(docs[b]) else set()
        union = len(sa | sb)
        expected = len(sa & sb) / union if union else 0.0
        assert got.get((a, b), 0.0) == pytest.approx(expected), (a, b)
    assert got[(3, 12)] == pytest.approx(1.0)


def test_short_and_empty_documents_have_one_or_no_shingle():
    assert shingle_hashes(np.array([], dtype=np.int64)).size == 0
    assert shingle_hashes(np.array([4, 2])).size == 1
    assert shingle_hashes(np.array([1, 2, 3, 4, 5, 1, 2, 3, 4, 5])).size == 5  # 6 runs, one repeated


def test_groups_are_single_linkage_components():
    assert components(5, np.array([0, 3]), np.array([2, 4])).tolist() == [0, 1, 0, 3, 3]
    assert components(4, np.array([1, 0]), np.array([2, 1])).tolist() == [0, 0, 0, 3]


def test_texts_share_resemblance_through_the_lexical_analysis():
    base = " ".join(f"word{i} critical apparatus line numbering" for i in range(60))
    pairs = text_duplicates({"a": base, "b": base + " and an appendix on footnotes", "c": "something else entirely"})
    groups = pairs.groups(["a", "b", "c"])
    assert groups[0] == groups[1] != groups[2]
    assert pairs.resemblance_of("a", "b") > 0.9


LEDMAC_FAMILY = {
    "ledmac/ledmac": "manual",
    "eledmac/eledmac": "manual",
    "reledmac/reledmac": "manual",
    "ledmac/ledpar": "par",
    "eledmac/eledpar": "par",
    "reledmac/reledpar": "par",
    "ledmac/ledarab": "ledarab",
    "edfnotes/edfnotes": "edfnotes",
}


@pytest.mark.slow
def test_the_ledmac_family_groups_by_version_on_the_real_pdfs(debian_pdf_dir: Path, tmp_path: Path):
    """Three versions of one manual and three of its companion form two groups; the Arabic add-on
    and another package's manual stay alone (the resemblance values are recorded in the docs)."""
    from nclue.corpus.ingest import ingest
    from nclue.index.duplicates import build_duplicates, open_duplicates
    from nclue.index.lexical import build_lexical_index

    root = "texlive-humanities-doc/texlive-doc/latex"
    for rel in LEDMAC_FAMILY:
        target = tmp_path / "pdfs" / root / f"{rel}.pdf"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(debian_pdf_dir / root / f"{rel}.pdf", target)
    ingest(tmp_path / "pdfs", tmp_path / "coll", workers=2)
    build_duplicates(tmp_path / "coll")  # from the page texts (no lexical index yet)
    from_texts = open_duplicates(tmp_path / "coll")
    build_lexical_index(tmp_path / "coll")
    build_duplicates(tmp_path / "coll", rebuild=True)  # from the lexical index's term sequences
    pairs = open_duplicates(tmp_path / "coll")
    assert np.allclose(pairs.resemblance, from_texts.resemblance) and pairs.i.tolist() == from_texts.i.tolist()
    ids = [f"{root}/{rel}" for rel in LEDMAC_FAMILY]
    groups = pairs.groups(ids)
    by_kind: dict[str, set[int]] = {}
    for rel, g in zip(LEDMAC_FAMILY.values(), groups.tolist(), strict=True):
        by_kind.setdefault(rel, set()).add(g)
    assert all(len(v) == 1 for v in by_kind.values())
    assert len({next(iter(v)) for v in by_kind.values()}) == 4
    assert 0.15 < pairs.resemblance_of(ids[1], ids[2]) < 0.2  # eledmac ~ reledmac
    assert pairs.resemblance_of(ids[0], ids[6]) < 0.01  # ledmac ~ ledarab


def pool(probs: list[list[float]], groups: list[int] | None = None) -> TaskVectors:
    p = np.array(probs, dtype=np.float64)
    n, m = p.shape
    vectors = np.eye(n)
    return TaskVectors(
        "t",
        tuple(str(i) for i in range(n)),
        vectors.mean(axis=0),
        np.tile(vectors.mean(axis=0), (m, 1)),
        vectors,
        p,
        np.linspace(1.0, 0.0, n),
        None if groups is None else np.array(groups),
        np.linspace(1.0, 0.0, n),
    )


# documents 0 and 1 are near-copies covering requirements 1-2; 2 covers requirement 3; 3-5 are weak
COPIES = [[0.9, 0.9, 0.0], [0.9, 0.9, 0.0], [0.0, 0.0, 0.9], [0.1, 0.1, 0.1], [0.05, 0.0, 0.1], [0.0, 0.1, 0.0]]


@pytest.mark.parametrize("name", list(SELECTORS))
def test_no_selector_spends_a_slot_on_a_copy_that_adds_no_coverage(name: str):
    tv = pool(COPIES, [0, 0, 2, 3, 4, 5])
    ranking = [int(d) for d in run_selector(name, tv, 4)]
    assert not {0, 1} <= set(ranking), ranking
    assert redundant_slots(ranking, tv.groups, tv.probs) == 0


def test_the_copy_is_what_expected_coverage_picks_without_the_rule():
    assert {0, 1} <= {int(d) for d in run_selector("expected", pool(COPIES), 3)}
    ranking, left_out = select_distinct(diversify.select_expected, pool(COPIES, [0, 0, 2, 3, 4, 5]), 3)
    assert left_out == [1] and sorted(ranking) == [0, 2, 3]


def test_a_copy_that_covers_a_new_requirement_keeps_its_slot():
    probs = [[0.9, 0.9, 0.0], [0.9, 0.2, 0.9], [0.1, 0.1, 0.1], [0.0, 0.1, 0.0]]
    assert first_redundant([0, 1], np.array([0, 0, 2, 3]), np.array(probs)) is None
    assert {0, 1} <= {int(d) for d in run_selector("expected", pool(probs, [0, 0, 2, 3]), 2)}


def test_without_evidence_a_copy_never_adds_coverage():
    assert first_redundant([2, 0, 1], np.array([0, 0, 2]), None) == 1


def test_a_pool_of_copies_still_fills_k_slots():
    tv = pool(COPIES[:3], [0, 0, 0])
    assert len(run_selector("expected", tv, 3)) == 3


def brute_cover(probs: np.ndarray) -> tuple[int, float]:
    covers = probs >= 0.5
    target = covers.any(axis=0)
    for size in range(1, len(probs) + 1):
        found = [
            float(probs[list(s)].sum())
            for s in itertools.combinations(range(len(probs)), size)
            if np.array_equal(covers[list(s)].any(axis=0), target)
        ]
        if found:
            return size, max(found)
    return 0, 0.0


@pytest.mark.parametrize("seed", range(25))
def test_set_cover_is_the_smallest_covering_set(seed: int):
    rng = np.random.default_rng(seed)
    probs = rng.random((9, 4)) ** 3
    tv = pool(probs.tolist())
    chosen = diversify.select_setcover(tv)
    size, mass = brute_cover(probs)
    assert len(chosen) == max(size, 1)
    assert (probs[chosen] >= 0.5).any(axis=0).tolist() == (probs >= 0.5).any(axis=0).tolist()
    if size:
        assert probs[chosen].sum() == pytest.approx(mass)


def test_greedy_set_cover_bound_is_the_harmonic_number():
    assert diversify.harmonic(1) == 1.0
    assert diversify.harmonic(4) == pytest.approx(25 / 12)


def test_mmr_terms_share_one_scale():
    rel = np.array([0.02, 0.01, 0.0])
    docs = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]])
    rel_n, sim_n = diversify.commensurate(rel, docs)
    assert rel_n.tolist() == [1.0, 0.5, 0.0]
    off = sim_n[~np.eye(3, dtype=bool)]
    assert off.min() == 0.0 and off.max() == 1.0  # cosines 0, 0.6, 0.8 scaled to [0, 1]
    assert sim_n[0, 1] == pytest.approx(1.0) and sim_n[1, 2] == pytest.approx(0.75)
