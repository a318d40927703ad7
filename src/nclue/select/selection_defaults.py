"""Defaults of coverage selection, in one light module (the CLI reads its defaults from here
without importing NumPy or the indexes)."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_POOL = "bm25.decompose(distinct)"
"""The retrieval system that makes pools (``docs/coverage.md#pools``)."""
DEFAULT_DEPTH = 30
"""Documents per pool."""
DEFAULT_SELECTOR = "expected"
"""The selector ``nclue coverage select`` uses."""
JUDGMENT_PATTERNS: tuple[str, ...] = ("*judgment*", "*qrels*")
"""Path-component patterns of label files the freeze barrier refuses."""
OUTCOME_PATTERNS: tuple[str, ...] = ("scores.jsonl", "summary.json", "ledger.jsonl")
"""Outcome files of ``nclue coverage evaluate`` (per-task scores, the summary, the ledger) the barrier refuses."""
BARRIER_PATTERNS: tuple[str, ...] = JUDGMENT_PATTERNS + OUTCOME_PATTERNS
"""Everything the freeze barrier refuses by name."""
ORACLE_POOL = "qrels"
"""The pool name that selects the labeled (oracle) pool."""
JUDGED_POOL = "judged"
"""The pool name that selects the protocol's judged pool: every document judged for the query, grade 0 included."""
VERIFY_FLOOR = 0.02
"""Reader verification (:mod:`nclue.reader.verified_coverage`) reads the pairs with ``P`` at least this. Declared
before measuring: on the development readings, 94% of the pairs readers accept have ``P ≥ 0.02``
under the other corpus's calibration, and 39% of all read pairs do."""
VERIFY_PAGES = 2
"""Best evidence pages a reader is shown per pair (the reader benchmark shows two per condition)."""
VERIFY_CONDITIONS_PER_PROMPT = 4
"""Requirements of one document per verification prompt, as in the reader benchmark's reading."""


@dataclass(frozen=True)
class SelectOptions:
    """Defaults of one selection (``nclue coverage select``)."""

    k: int = 5
    pool: str = DEFAULT_POOL
    pool_depth: int = DEFAULT_DEPTH
    selector: str = DEFAULT_SELECTOR
    near_duplicates: float = 0.10
    """Word-shingle resemblance at which two pool documents are near-copies (:mod:`nclue.index.duplicates`)."""
