"""Can more page signals lift the evidence model to a reader's verdicts? Two families, measured.

Run (after ``make demo-full``): ``.venv/bin/python benchmarks/evidence_ceiling.py``, optionally with
``--whole-page DEV SHIFT``: copies of the two collections (``pages.parquet``, ``docs.parquet``,
``structure.parquet``, ``collection.json``, ``index/lexical``, ``index/structure``) indexed with
``nclue index COPY --dense minilm`` — every chunk of every page instead of the demo's first window.

Variants, each refitted on one corpus's reader judgments and scored at the document level on the
other's, as ``make calibrations`` does (``benchmarks/evidence_spelling.py`` prints the same
columns):

* **shipped** — the calibration's signals (``nclue.evidence.evidence_defaults.DEFAULT_SIGNALS``);
* **+ offline-judge facts** — four signals from the establishes rule that built the development
  benchmark's *rule* labels (:mod:`nclue.bench.inventory`): the condition names a heading line of the
  page (H), stands in a defining sentence (D), its repeats in prose outside lists and preposition
  objects (R, multi-word conditions, capped at 6), and its occurrences of any kind (capped at 6). A
  condition that is not a mined n-gram key (over three words) reads 0. The reader labels scored here
  were made by readers, not by this rule;
* **whole-page dense** — the ``dense`` signal read over every chunk of the page (its best chunk)
  instead of the first 254-token window.

The column "best min(P, R)" bounds every verdict threshold: the highest ``min(precision, recall)``
over all thresholds on the scored corpus. Nothing on disk changes.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from evidence_spelling import document_scores  # the shared scorer (benchmarks/ is on sys.path)
from nclue.bench.construction_params import MineParams
from nclue.bench.inventory import _analysed, condition_key
from nclue.corpus.store import PageStore
from nclue.evidence import fit as fitting
from nclue.evidence import signals
from nclue.evidence.evidence_defaults import DEFAULT_SIGNALS
from nclue.systems.registry import Workspace

DEMO = "nclue-demo"
FACTS = ("judge_heading", "judge_definition", "judge_prose", "judge_count")
_analysed_stores: dict[str, tuple] = {}


def judge_facts(source: signals.EvidenceSource, texts) -> np.ndarray:  # noqa: ANN001
    """``(4, len(texts), n_pages)``: the offline judge's H, D, R and occurrence facts per page."""
    where = str(source.describe["collection"])
    if where not in _analysed_stores:
        store = PageStore.open(where)
        _, vocab, _, ev = _analysed(store, MineParams(), lambda n: None, None)
        _analysed_stores[where] = (vocab, ev)
    vocab, ev = _analysed_stores[where]
    out = np.zeros((4, len(texts), source.pages.n_pages), np.float32)
    for i, text in enumerate(texts):
        k = vocab.key_of(condition_key(text))
        ki = int(np.searchsorted(ev.uniq, k)) if k is not None else len(ev.uniq)
        if ki >= len(ev.uniq) or ev.uniq[ki] != k:
            continue
        rows = np.nonzero(ev.p_key == ki)[0]
        single, pages = ev.single[rows], ev.p_row[rows]
        out[0, i, pages] = np.where(single, ev.hend[rows], ev.head[rows])
        out[1, i, pages] = ev.define[rows]
        out[2, i, pages] = np.where(single, 0, np.minimum(ev.prose[rows], 6) / 6.0)
        out[3, i, pages] = np.minimum(ev.prose[rows] + 1, 6) / 6.0
    return out


def row(name: str, sig: tuple[str, ...], dev: Workspace, shift: Workspace) -> None:
    on_dev = fitting.fit(f"{DEMO}/bench-reader", dev, signals=sig).calibration
    on_shift = fitting.fit(f"{DEMO}/bench-shift-reader", shift, signals=sig).calibration
    for direction, calibration, bench, workspace in (
        ("development → shift", on_dev, f"{DEMO}/bench-shift-reader", shift),
        ("shift → development", on_shift, f"{DEMO}/bench-reader", dev),
    ):
        s = document_scores(calibration, bench, workspace)
        print(
            f"| {name} | {direction} | {s['brier']:.4f} | {s['precision']:.3f} | {s['recall']:.3f} "
            f"| {s['auc']:.4f} | {s['balance']:.3f} ({s['balance_at']:.2f}) |",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--whole-page", nargs=2, type=Path, metavar=("DEV", "SHIFT"))
    args = parser.parse_args()
    for j, name in enumerate(FACTS):
        signals.SIGNALS[name] = lambda source, texts, j=j: judge_facts(source, texts)[j]
    dev, shift = Workspace(f"{DEMO}/collection"), Workspace(f"{DEMO}/shift-collection")
    print(
        "| signals | fitted on → scored on | Brier | precision@0.5 | recall@0.5 | ROC AUC | best min(P, R) (at P ≥) |"
    )
    print("| :--- | :--- | ---: | ---: | ---: | ---: | ---: |")
    row("shipped", DEFAULT_SIGNALS, dev, shift)
    row("+ offline-judge facts", DEFAULT_SIGNALS + FACTS, dev, shift)
    if args.whole_page:
        row("whole-page dense", DEFAULT_SIGNALS, Workspace(args.whole_page[0]), Workspace(args.whole_page[1]))


if __name__ == "__main__":
    main()
