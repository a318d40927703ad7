"""Does evidence read better when the lexical signals also read the other spelling?

Run (after ``make demo-full``): ``.venv/bin/python benchmarks/evidence_spelling.py``

Porter 2 keeps British and American spellings apart (``customis`` / ``custom``), so a condition
written one way read 0 under ``bm25`` and ``phrase`` on a page written the other way. Since
calibration format 4 both signals also score the condition rewritten into the other convention
(:mod:`nclue.index.spelling`, only where the collection uses the rewritten word) and keep the
higher value per page.

For each variant, both reader calibrations are refitted (development readings on the development
collection, shift readings on the shift collection) and each is scored on the *other* corpus's
readings, as ``make calibrations`` does. Printed per direction, at the document level: Brier,
ECE, precision and recall at ``P ≥ 0.5``, the area under the ROC curve (SciPy's Mann–Whitney
``U / (n₊ n₋)``), and the best threshold's balance — the highest ``min(precision, recall)`` over
every threshold, which bounds what any verdict threshold can reach on these readings. First, how
many conditions of each corpus have an alternate spelling. Nothing on disk changes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.stats import mannwhitneyu

from nclue.evidence import fit as fitting
from nclue.evidence import signals
from nclue.evidence.labels import load_labels
from nclue.systems.registry import Workspace

DEMO = "nclue-demo"


def one_spelling_bm25(source: signals.EvidenceSource, texts: Sequence[str]) -> np.ndarray:
    """``bm25`` before format 4: the condition as written only."""
    return signals._bm25_ratio(source.lexical.index, list(texts))


def one_spelling_phrase(source: signals.EvidenceSource, texts: Sequence[str]) -> np.ndarray:
    """``phrase`` before format 4."""
    return source.lexical.page_phrase_matches(list(texts)).astype(np.float32)


def balance(prob: np.ndarray, label: np.ndarray) -> tuple[float, float]:
    """``(max over thresholds of min(precision, recall), that threshold)``."""
    order = np.argsort(-prob, kind="stable")
    y = label[order]
    tp = np.cumsum(y)
    precision, recall = tp / np.arange(1, len(y) + 1), tp / y.sum()
    both = np.minimum(precision, recall)
    i = int(np.argmax(both))
    return float(both[i]), float(prob[order][i])


def document_scores(calibration, bench: str, workspace: Workspace) -> dict[str, float]:  # noqa: ANN001
    source = fitting._source(workspace, calibration.signals)
    data = load_labels(bench, source, calibration.signals, "reader")
    _, doc_prob = fitting._predict(data, np.arange(len(data.conditions)), calibration.model)
    p, y = doc_prob[data.doc_mask], data.doc_labels[data.doc_mask].astype(np.float64)
    out = fitting.scores(p, y)
    out["auc"] = float(mannwhitneyu(p[y > 0], p[y == 0]).statistic / ((y > 0).sum() * (y == 0).sum()))
    out["balance"], out["balance_at"] = balance(p, y)
    return out


def main() -> None:
    dev, shift = Workspace(f"{DEMO}/collection"), Workspace(f"{DEMO}/shift-collection")
    for name, bench, workspace in (("development", "bench-reader", dev), ("shift", "bench-shift-reader", shift)):
        conditions = fitting.load_labels(
            f"{DEMO}/{bench}", fitting._source(workspace, ("bm25",)), ("bm25",), "reader"
        ).conditions
        rewritten, _ = signals.spelling_alternates(workspace.backbone("bm25").index, conditions)
        print(f"{name}: {len(rewritten)} of {len(conditions)} read conditions have an alternate spelling")
    original = dict(signals.SIGNALS)
    print()
    print(
        "| lexical signals read | fitted on → scored on | Brier | ECE | precision@0.5 | recall@0.5 | ROC AUC | best min(P, R) (at P ≥) |"
    )
    print("| :--- | :--- | ---: | ---: | ---: | ---: | ---: | ---: |")
    variants = (
        ("the spelling as written (before format 4)", {"bm25": one_spelling_bm25, "phrase": one_spelling_phrase}),
        ("both spellings (shipped)", {}),
    )
    for variant, replaced in variants:
        signals.SIGNALS.update(replaced)
        try:
            on_dev = fitting.fit(f"{DEMO}/bench-reader", dev).calibration
            on_shift = fitting.fit(f"{DEMO}/bench-shift-reader", shift).calibration
            pairs = (
                ("development → shift", on_dev, f"{DEMO}/bench-shift-reader", shift),
                ("shift → development", on_shift, f"{DEMO}/bench-reader", dev),
            )
            for direction, calibration, bench, workspace in pairs:
                s = document_scores(calibration, bench, workspace)
                print(
                    f"| {variant} | {direction} | {s['brier']:.4f} | {s['ece']:.4f} | {s['precision']:.3f} "
                    f"| {s['recall']:.3f} | {s['auc']:.4f} | {s['balance']:.3f} ({s['balance_at']:.2f}) |"
                )
        finally:
            signals.SIGNALS.clear()
            signals.SIGNALS.update(original)


if __name__ == "__main__":
    main()
