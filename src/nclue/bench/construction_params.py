"""Every parameter of benchmark construction, as frozen dataclasses with their defaults.

Kept free of heavy imports so the command line takes its defaults from here without loading
the builder (``docs/construction.md#parameters``). Every value is recorded in the release's
``MANIFEST.json``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from nclue.errors import NclueError, require_seed
from nclue.types import DEFAULT_SEED

JUDGES: tuple[str, ...] = ("offline", "embedding", "llm", "reader")
SINGLE_PAGE: tuple[str, ...] = ("drop", "partial")
LABEL_UNITS: tuple[str, ...] = ("page", "document")
"""``page``: the distinct-page gold rule (``docs/labels.md#gold``); ``document``: gold iff every
condition is established somewhere in the document (SourceShift's document-level labels)."""
CONDITIONS: tuple[str, ...] = ("lexical", "sections")


@dataclass(frozen=True)
class MineParams:
    """Inventory mining parameters (recorded in MANIFEST.json)."""

    min_df: int = 3
    max_df_frac: float = 0.08
    max_n: int = 3
    min_word_len: int = 3
    min_heading_df: int = 1
    min_english: float = 0.2
    min_topicality: float = 0.25
    min_single_len: int = 5
    max_foreign: float = 0.05
    min_repeats: int = 3
    max_fragment_share: float = 0.6

    def max_df(self, n_docs: int) -> int:
        """Largest document frequency a candidate may have: ``max(min_df, ⌊max_df_frac·N⌋)``."""
        return max(self.min_df, int(self.max_df_frac * n_docs))


@dataclass(frozen=True)
class ComposeParams:
    """Composition and selection parameters (recorded in MANIFEST.json)."""

    n_queries: int = 1000
    seed: int = DEFAULT_SEED
    p_three: float = 0.35
    max_golds: int = 10
    max_condition_reuse: int = 20
    max_gold_reuse: int = 30
    attempts_per_query: int = 200
    max_contested: int | None = 0
    single_page: str = "drop"
    labels: str = "page"

    def __post_init__(self) -> None:
        require_seed(self.seed, f"{type(self).__name__}.seed")
        if self.labels not in LABEL_UNITS:
            raise NclueError(f"labels {self.labels!r}: choose one of {', '.join(LABEL_UNITS)}")


@dataclass(frozen=True)
class SectionParams:
    """Section-concept mining (``--conditions sections``, ``docs/structure.md#section-concepts``)."""

    min_df: int = 3
    max_df_frac: float = 0.25
    max_words: int = 4
    alias_threshold: float = 0.8
    origins: tuple[str, ...] = ("outline", "numbered", "font")


@dataclass(frozen=True)
class ReaderParams:
    """Reader-judged construction (``nclue build --judge reader``, ``docs/construction.md#reader-judged-construction``).

    ``candidates`` conjunctions (drawn like the lexical rule's, contested absences allowed) get a
    document pool each: the rule's union and the top ``pool_depth`` documents of every
    ``pool_systems`` ranking, interleaved, at most ``max_docs``. Every (condition, document) of a
    pool is read on ``pages_per_condition`` pages of the audit's high-recall routes, at most
    ``conditions_per_prompt`` conditions of one document per prompt. A document read as
    establishing one condition of a candidate is then read on its other conditions, for at most
    ``rounds`` rounds of reading in all.
    """

    candidates: int = 240
    pool_systems: tuple[str, ...] = ("bm25.and", "bm25.decompose(distinct)", "dense.joint(ptop3)")
    pool_depth: int = 5
    max_docs: int = 8
    pages_per_condition: int = 2
    conditions_per_prompt: int = 4
    rounds: int = 3


@dataclass
class BuildOptions:
    """Everything ``nclue build`` takes besides the paths.

    ``gate_threshold`` / ``gate_min_chars`` are the per-source extraction gate
    (``docs/construction.md#extraction-gate``); a source below it is left out of the release
    unless it is named in ``allow_ungated``.
    """

    judge: str = "offline"
    conditions: str = "lexical"
    sections: SectionParams = field(default_factory=SectionParams)
    reader: ReaderParams = field(default_factory=ReaderParams)
    name: str = "nclue-bench"
    mine: MineParams = field(default_factory=MineParams)
    compose: ComposeParams = field(default_factory=ComposeParams)
    embed_threshold: float = 0.15
    gate_threshold: float = 0.98
    gate_min_chars: int = 10
    allow_ungated: tuple[str, ...] = ()
    llm_url: str | None = None
    llm_model: str | None = None
    llm_key: str | None = None
    llm_cache: Path | None = None
    llm_api: str = "openai"
    llm_batch_out: Path | None = None
    llm_batch_in: Path | None = None
    llm_answered_by: str = ""
    llm_answered_on: str | None = None
