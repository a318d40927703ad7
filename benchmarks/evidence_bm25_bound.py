"""Does BM25 evidence transfer better when normalised by its upper bound instead of the collection maximum?

Run (after ``make demo-full``): ``.venv/bin/python benchmarks/evidence_bm25_bound.py``

The ``bm25`` signal of the evidence layer (:mod:`nclue.evidence.signals`) divides a page's BM25
score by the condition's best score over the collection. A document's probability therefore moves
when an unrelated document that scores higher is added. The candidate divides instead by the
score's upper bound, ``(k1 + 1) · Σ_{t ∈ condition} idf(t)`` (BM25's term-frequency factor tends
to ``k1 + 1``; ``idf`` as the lexical index computes it, ``log(1 + (N − df + 0.5)/(df + 0.5))``).
That depends on the collection only through each term's ``idf``.

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


def bound_bm25(source: signals.EvidenceSource, texts: Sequence[str]) -> np.ndarray:
    """BM25 page scores over ``(k1 + 1) · Σ idf`` of each condition's analysed terms."""
    index = source.lexical.index
    raw = index.page_scores(list(texts))
    df = np.diff(np.asarray(index.pages.scores["indptr"])).astype(np.float64)
    n = float(source.pages.n_pages)
    idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5))
    out = np.zeros(raw.shape, dtype=np.float32)
    for i, text in enumerate(texts):
        ids = index.analyse(text)[1]
        ids = ids[(ids >= 0) & (ids < len(idf))]
        upper = (index.params.k1 + 1.0) * float(idf[ids].sum())
        out[i] = raw[i] / upper if upper > 0 else 0.0
    return out


def main() -> None:
    dev, shift = Workspace(f"{DEMO}/collection"), Workspace(f"{DEMO}/shift-collection")
    original = signals.SIGNALS["bm25"]
    print("| bm25 normalised by | fitted on → scored on | level | Brier | ECE | precision@0.5 | recall@0.5 |")
    print("| :--- | :--- | :--- | ---: | ---: | ---: | ---: |")
    for variant, scorer in (("collection maximum (shipped)", original), ("upper bound", bound_bm25)):
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
