"""``bm25.and_tuned``: BM25-AND with ``k1`` and ``b`` chosen on a declared tuning split (the paper's ``bm25_and_tuned``).

The paper lists a tuned BM25-AND baseline without its procedure; ours is declared here and
recorded in full so that a reader can redo it:

* **split** — the release's queries ordered by ``sha256("<seed>:<qid>")``; the first
  ``round(fraction · n)`` are the *tuning* queries, the rest are *held out* (stable per query:
  adding a query never moves another between the halves);
* **grid** — :data:`GRID`, every ``(k1, b)`` pair, on the index's BM25 variant;
* **objective** — n-Clue Score@10 (:mod:`nclue.scoring`) over the tuning queries, with the
  release's own judgments; ties go to the pair first in grid order (``k1`` then ``b`` ascending);
* **report** — n-Clue Score@10 of the chosen pair and of the index's own parameters on the
  *held-out* queries (the only figure that may be quoted as the tuned baseline's gain).

Rankings are those of ``bm25.and`` (documents containing every condition's analysed terms,
ranked by document-level BM25 of the rendered query) with document weights recomputed at each
pair by :class:`nclue.index.reweight.DocTermCounts`. :func:`nclue.matrix.bm25_tuning.tune_bm25_and` writes the record to
``COLLECTION/tuning/bm25.and_tuned.json``; the system reads it back and refuses to run when the
collection's pages changed since (``pages_sha256``).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from nclue.errors import NclueError
from nclue.index.options import BM25Params

GRID: dict[str, tuple[float, ...]] = {"k1": (0.3, 0.6, 0.9, 1.2, 1.5, 2.0, 3.0), "b": (0.0, 0.25, 0.5, 0.75, 1.0)}
"""The declared grid: 7 × 5 = 35 ``(k1, b)`` pairs."""
TUNING_FILE = Path("tuning") / "bm25.and_tuned.json"
OBJECTIVE = "n_clue_score@10"
FORMAT = 1


@dataclass(frozen=True)
class TuningRecord:
    """What ``nclue tune`` chose and how (every field is written to the record file)."""

    release: str
    qrels_sha256: str
    pages_sha256: str
    form: str
    seed: int
    fraction: float
    tuning_qids: tuple[str, ...]
    heldout_qids: tuple[str, ...]
    grid: dict[str, tuple[float, ...]]
    method: str
    table: tuple[dict[str, float], ...]
    chosen: dict[str, float]
    default: dict[str, float]
    heldout: dict[str, float]

    @property
    def params(self) -> BM25Params:
        """The chosen parameters on the index's variant."""
        return BM25Params(k1=self.chosen["k1"], b=self.chosen["b"], method=self.method)

    def to_json(self) -> str:
        """The record file's text (sorted keys, one trailing newline)."""
        body = asdict(self)
        body["format"] = FORMAT
        body["objective"] = OBJECTIVE
        return json.dumps(body, indent=2, sort_keys=True) + "\n"


def tuning_split(qids: list[str], seed: int, fraction: float) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(tuning, held_out)`` qids (module docstring), each in the given order."""
    if not 0 < fraction < 1:
        raise NclueError(f"--fraction must be strictly between 0 and 1 (got {fraction})")
    if len(qids) < 2:
        raise NclueError(
            f"tuning needs at least two queries (a tuning and a held-out one); the release has {len(qids)}"
        )
    order = sorted(qids, key=lambda q: hashlib.sha256(f"{seed}:{q}".encode()).hexdigest())
    cut = min(max(1, round(fraction * len(qids))), len(qids) - 1)
    chosen = set(order[:cut])
    return tuple(q for q in qids if q in chosen), tuple(q for q in qids if q not in chosen)


def grid_pairs(grid: dict[str, tuple[float, ...]]) -> list[tuple[float, float]]:
    """Every ``(k1, b)`` of ``grid``, ``k1`` then ``b`` ascending (the tie order)."""
    return [(float(k1), float(b)) for k1 in sorted(grid["k1"]) for b in sorted(grid["b"])]


def read_tuning(collection_dir: str | os.PathLike[str], pages_sha256: str) -> TuningRecord:
    """The collection's tuning record, checked against its pages; a clear error when absent or stale."""
    path = Path(collection_dir) / TUNING_FILE
    hint = f"run `nclue tune BENCH {collection_dir}` first (it tunes k1 and b of bm25.and on a declared split)"
    if not path.is_file():
        raise NclueError(f"bm25.and_tuned: {path} not found; {hint}")
    try:
        body: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        body.pop("format", None)
        body.pop("objective", None)
        record = TuningRecord(
            **{
                **body,
                "tuning_qids": tuple(body["tuning_qids"]),
                "heldout_qids": tuple(body["heldout_qids"]),
                "table": tuple(body["table"]),
                "grid": {k: tuple(v) for k, v in body["grid"].items()},
            }
        )
        record.params  # noqa: B018 - validates the chosen pair
    except (ValueError, TypeError, KeyError) as exc:
        raise NclueError(f"{path}: not a tuning record ({type(exc).__name__}: {exc}); {hint}") from None
    if record.pages_sha256 != pages_sha256:
        raise NclueError(f"{path}: tuned on other pages than this collection's (pages changed since); {hint}")
    return record
