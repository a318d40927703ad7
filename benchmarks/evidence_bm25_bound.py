"""Does BM25 evidence transfer better over its upper bound than over the collection maximum?

Run (after ``make demo-full``): ``.venv/bin/python benchmarks/evidence_bm25_bound.py``

Until calibration format 3, the ``bm25`` signal of the evidence layer (:mod:`nclue.evidence.signals`)
divided a page's BM25 score by the condition's best score over the collection. A document's
probability therefore moved when an unrelated document that scores higher was added. Since format
3 it divides by the score's upper bound (``LexicalIndex.page_upper_bounds``: ``Σ idf`` times the
term-frequency factor's limit), which depends on the collection only through ``idf``.

For each variant, both reader calibrations are refitted (development readings on the development
collection, shift readings on the shift collection), and each is scored on the *other* corpus's
readings, as ``make calibrations`` does. The script prints document- and page-level Brier, ECE,
precision@0.5 and recall@0.5, and changes nothing on disk.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from nclue.evidence import signals
from nclue.evidence.fit import fit, score
from nclue.systems.registry import Workspace

DEMO = "nclue-demo"


def max_bm25(source: signals.EvidenceSource, texts: Sequence[str]) -> np.ndarray:
    """The signal before format 3: BM25 page scores over the condition's best page score."""
    return signals.normalise(source.lexical.page_scores(list(texts)))


def main() -> None:
    dev, shift = Workspace(f"{DEMO}/collection"), Workspace(f"{DEMO}/shift-collection")
    original = signals.SIGNALS["bm25"]
    print("| bm25 normalised by | fitted on → scored on | level | Brier | ECE | precision@0.5 | recall@0.5 |")
    print("| :--- | :--- | :--- | ---: | ---: | ---: | ---: |")
    for variant, scorer in (("collection maximum (before format 3)", max_bm25), ("upper bound (shipped)", original)):
        signals.SIGNALS["bm25"] = scorer
        try:
            on_dev = fit(f"{DEMO}/bench-reader", dev).calibration
            on_shift = fit(f"{DEMO}/bench-shift-reader", shift).calibration
            pairs = (
                ("development → shift", on_dev, f"{DEMO}/bench-shift-reader", shift),
                ("shift → development", on_shift, f"{DEMO}/bench-reader", dev),
            )
            for direction, calibration, bench, workspace in pairs:
                levels = score(calibration, bench, workspace).to_json()
                for level in ("document", "page"):
                    s = levels[level]
                    print(
                        f"| {variant} | {direction} | {level} | {s['brier']:.4f} | {s['ece']:.4f} "
                        f"| {s['precision']:.3f} | {s['recall']:.3f} |"
                    )
        finally:
            signals.SIGNALS["bm25"] = original


if __name__ == "__main__":
    main()
