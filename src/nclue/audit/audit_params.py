"""Every parameter of the label audit, with its default (``docs/audit.md``).

Kept free of heavy imports so the command line takes its defaults and choices from here.
"""

from __future__ import annotations

from dataclasses import dataclass

from nclue.errors import require_seed
from nclue.types import DEFAULT_SEED

STRATA_FIELDS: tuple[str, ...] = ("source", "label", "n", "grade")
"""Pair attributes a sample can be stratified by (``docs/audit.md#sampling``)."""

ALLOCATIONS: tuple[str, ...] = ("equal", "proportional")
"""How the sample size is split across strata (``docs/audit.md#sampling``)."""

KINDS: tuple[str, ...] = ("audit", "adjudication", "tiebreak", "challenge")
"""Packet kinds: the initial blind audit, the expanded-page poll, a tie-break round, the targeted challenge."""

ROUTES: tuple[str, ...] = ("construction", "alias", "bm25", "fuzzy")
"""Candidate-page routes, in round-robin order (``docs/audit.md#candidate-pages``)."""

POOL_ROUTES: tuple[str, ...] = ("original", "evaluator", *ROUTES)
"""Routes of the expanded adjudication pool: the three initial pages, evaluator selections, then the automatic routes."""

CHALLENGE_METRICS: tuple[str, ...] = ("n_clue_score", "gold_ndcg", "graded_ndcg", "gold_hit")
"""Per-query metrics whose A − B contrast a targeted challenge can address."""

IMPACT_METRICS: tuple[str, ...] = ("gold_ndcg", "n_clue_score")
"""Metrics ``nclue audit impact`` can rank runs and test its contrasts by."""

MIN_QUOTE_CHARS = 12
"""A quote is non-trivial when its normalised form has at least this many characters."""

EXPORT_FORMAT = "nclue-audit-export"
PACKET_FORMAT = "nclue-audit-packet"
FORMAT_VERSION = 1


@dataclass(frozen=True)
class SampleParams:
    """``nclue audit sample``: how many pairs, stratified by what, split how, with which seed."""

    pairs: int = 300
    seed: int = DEFAULT_SEED
    strata: tuple[str, ...] = ("source", "label", "n")
    allocation: str = "equal"

    def __post_init__(self) -> None:
        require_seed(self.seed, f"{type(self).__name__}.seed")


@dataclass(frozen=True)
class PoolParams:
    """Candidate pages per condition: ``initial`` in the blind packet, ``expanded_min..expanded_max`` in polls.

    ``fuzzy_rate`` is the edit budget of the OCR-tolerant route as a share of the surface
    form's length (forms shorter than ``fuzzy_min_len`` characters must match exactly);
    ``max_chars`` caps the displayed text of one page (longer pages are cut, and say so).
    """

    initial: int = 3
    expanded_min: int = 6
    expanded_max: int = 9
    fuzzy_rate: float = 0.15
    fuzzy_min_len: int = 6
    max_chars: int = 12000


@dataclass(frozen=True)
class ChallengeParams:
    """``nclue audit challenge``: top-k cutoff, neutral controls, the contrast's metric and the seed.

    The default metric is Gold-NDCG: the supplement's targeted challenge was selected on the
    gold-only NDCG@10 contrast of the frozen runs (``docs/audit.md#targeted-challenge``).
    """

    k: int = 10
    controls: int = 25
    metric: str = "gold_ndcg"
    seed: int = DEFAULT_SEED

    def __post_init__(self) -> None:
        require_seed(self.seed, f"{type(self).__name__}.seed")
