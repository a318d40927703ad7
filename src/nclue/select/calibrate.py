"""Fit the evidence weights of :mod:`nclue.select.evidence` on a labeled benchmark release.

``docs/coverage.md#calibration``. Labels come from the release's qrels evidence pages (read
through :class:`nclue.release.Release`): page ``p`` is positive for condition ``c`` when some
qrels row lists ``p`` for ``c``; document ``d`` covers ``c`` when it has a positive page. A
release lists every document with evidence for any condition of each query, so for every
condition used by some query the positives are complete and every other page is negative.

Two stages, each a logistic regression fitted by maximum likelihood (SciPy L-BFGS-B on the mean
log-loss and its exact gradient) with a ridge term ``L2 · ||w||²`` on the non-intercept weights
that is only there to keep the weights finite if a signal separates the labels (``L2 = 1e-8``;
a penalty of the size of the mean log-loss, ~1e-3, would shrink the weights visibly):

1. **page model** over every (condition, page) pair of the collection: ``σ(b + Σ_s w_s x_s)``;
2. **document model** (Platt scaling) over every (condition, document) pair:
   ``σ(a + c · max_{p ∈ d} z(p))`` with ``z`` the page logit.

**Cross-fitting.** Conditions are split into :data:`~nclue.select.evidence.N_FOLDS` folds by a
hash of their text (:func:`~nclue.select.evidence.fold_of`); ``folds[f]`` is fitted on the other
folds only and is the model a cross-fitted freeze applies to fold ``f``'s requirements, so no
requirement's probability comes from a model that saw its labels. The held-out table scores
exactly those predictions: log-loss, Brier score, expected calibration error (10 equal-width
bins; Naeini et al., AAAI 2015), and precision / recall of ``P ≥ 0.5``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nclue.errors import NclueError
from nclue.io import json_safe, write_json
from nclue.select.evidence import (
    N_FOLDS,
    Calibration,
    EvidenceSource,
    Model,
    fold_of,
    segment_best,
    sigmoid,
    signal_matrix,
)
from nclue.select.params import DEFAULT_SIGNALS
from nclue.tables import Table, Tabular

L2 = 1e-8
ECE_BINS = 10


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = L2) -> np.ndarray:
    """``(1 + features,)`` weights (intercept first) minimising mean log-loss + ``l2 · ||w[1:]||²``."""
    from scipy.optimize import minimize

    design = np.hstack([np.ones((x.shape[0], 1)), np.asarray(x, dtype=np.float64)])
    target = np.asarray(y, dtype=np.float64)
    n = len(target)
    if n == 0 or target.min() == target.max():
        raise NclueError("calibration needs both positive and negative examples; the labels have only one class")

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        z = design @ w
        value = float((np.logaddexp(0.0, z) - target * z).mean() + l2 * (w[1:] @ w[1:]))
        grad = design.T @ (sigmoid(z) - target) / n
        grad[1:] += 2.0 * l2 * w[1:]
        return value, grad

    result = minimize(loss, np.zeros(design.shape[1]), jac=True, method="L-BFGS-B", options={"maxiter": 500})
    return result.x


@dataclass(frozen=True)
class LabeledPages:
    """Features and labels of every (condition, page) pair of a collection."""

    conditions: tuple[str, ...]
    features: np.ndarray
    page_labels: np.ndarray
    doc_labels: np.ndarray
    starts: np.ndarray


def labeled_pages(release, source: EvidenceSource, signals: tuple[str, ...]) -> LabeledPages:  # noqa: ANN001
    """Features of every condition of ``release`` on every page of ``source``, with qrels labels."""
    pages = source.pages
    row_of = {(int(d), int(p)): i for i, (d, p) in enumerate(zip(pages.page_doc, pages.page_number))}
    doc_of = {d: i for i, d in enumerate(pages.id_list)}
    conditions = tuple(sorted({c for q in release.queries for c in q.conditions}))
    position = {c: i for i, c in enumerate(conditions)}
    labels = np.zeros((len(conditions), pages.n_pages), dtype=bool)
    for j in release.judgments:
        if j.pages is None:
            raise NclueError(
                f"{release.files.get('qrels')}: the qrels carry no evidence pages, so page labels are unknown; "
                "calibrate on a release written by `nclue build`"
            )
        d = doc_of.get(j.doc_id)
        if d is None:
            raise NclueError(
                f"{release.files.get('qrels')}: judged document {j.doc_id!r} is not in the collection; "
                "pass the collection the release was built from"
            )
        for condition, numbers in j.pages.items():
            for p in numbers:
                row = row_of.get((d, int(p)))
                if row is None:
                    raise NclueError(
                        f"{release.files.get('qrels')}: query {j.qid!r} cites page {p} of {j.doc_id!r}, "
                        "which the collection does not have"
                    )
                labels[position[condition], row] = True
    starts = np.asarray(pages.doc_offsets[:-1], dtype=np.int64)
    doc_labels = np.logical_or.reduceat(labels, starts, axis=1)
    features = signal_matrix(source, signals, conditions)
    return LabeledPages(conditions, features, labels, doc_labels, starts)


def _fit(data: LabeledPages, members: np.ndarray, l2: float) -> Model:
    feats = data.features[:, members, :].reshape(data.features.shape[0], -1).T
    page = fit_logistic(feats, data.page_labels[members].ravel(), l2)
    z = page[0] + np.tensordot(page[1:], data.features[:, members, :], axes=1)
    best, _ = segment_best(z, data.starts)
    doc = fit_logistic(best.reshape(-1, 1), data.doc_labels[members].ravel(), l2)
    return Model(tuple(float(w) for w in page), (float(doc[0]), float(doc[1])))


def _predict(data: LabeledPages, members: np.ndarray, model: Model) -> tuple[np.ndarray, np.ndarray]:
    w = np.asarray(model.page)
    z = w[0] + np.tensordot(w[1:], data.features[:, members, :], axes=1)
    best, _ = segment_best(z, data.starts)
    return sigmoid(z), sigmoid(model.doc[0] + model.doc[1] * best)


def scores(prob: np.ndarray, label: np.ndarray) -> dict[str, float]:
    """Log-loss, Brier, ECE (10 equal-width bins), base rate, mean prediction, precision/recall at 0.5."""
    p = np.clip(np.asarray(prob, dtype=np.float64).ravel(), 1e-12, 1 - 1e-12)
    y = np.asarray(label, dtype=np.float64).ravel()
    bins = np.minimum((p * ECE_BINS).astype(np.int64), ECE_BINS - 1)
    counts = np.bincount(bins, minlength=ECE_BINS)
    gap = np.abs(np.bincount(bins, weights=p, minlength=ECE_BINS) - np.bincount(bins, weights=y, minlength=ECE_BINS))
    called = p >= 0.5
    return {
        "pairs": int(len(y)),
        "positives": int(y.sum()),
        "base_rate": float(y.mean()),
        "mean_prediction": float(p.mean()),
        "log_loss": float(-(y * np.log(p) + (1 - y) * np.log(1 - p)).mean()),
        "brier": float(((p - y) ** 2).mean()),
        "ece": float(gap.sum() / len(y)) if counts.sum() else 0.0,
        "precision": float(y[called].mean()) if called.any() else 0.0,
        "recall": float(called[y > 0].mean()) if (y > 0).any() else 0.0,
    }


@dataclass(frozen=True)
class CalibrationReport(Tabular):
    """The fitted :class:`~nclue.select.evidence.Calibration` and its held-out (cross-fitted) scores."""

    calibration: Calibration
    heldout: dict[str, dict[str, float]]

    def to_json(self) -> dict:
        return json_safe({**self.calibration.to_json(), "heldout": self.heldout})

    def tables(self) -> list[Table]:
        cal = self.calibration
        header = ("Model", "Intercept", *cal.signals, "Doc a", "Doc c")
        models = [("all conditions", cal.model)] + [(f"fold {f} held out", m) for f, m in enumerate(cal.folds)]
        rows = tuple(
            (name, *(f"{w:+.3f}" for w in m.page), f"{m.doc[0]:+.3f}", f"{m.doc[1]:+.3f}") for name, m in models
        )
        weights = Table(header, rows, caption="Evidence calibration: fitted weights")
        cols = ("pairs", "positives", "base_rate", "mean_prediction", "log_loss", "brier", "ece", "precision", "recall")
        held = Table(
            (
                "Level",
                "Pairs",
                "Positives",
                "Base rate",
                "Mean P",
                "Log-loss",
                "Brier",
                "ECE",
                "Precision@0.5",
                "Recall@0.5",
            ),
            tuple(
                (level, *(f"{s[c]:,}" if c in ("pairs", "positives") else f"{s[c]:.4f}" for c in cols))
                for level, s in self.heldout.items()
            ),
            caption="Cross-fitted (held-out fold) scores",
            notes=("Each condition is scored by the model fitted without its fold (split by a hash of its text).",),
        )
        return [weights, held]


def calibrate(
    bench_dir: str | os.PathLike[str],
    collection_dir: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    signals: tuple[str, ...] = DEFAULT_SIGNALS,
    l2: float = L2,
) -> CalibrationReport:
    """Fit the page and document models on the release's evidence pages; write ``out`` when given."""
    from nclue.release import Release
    from nclue.systems.registry import Workspace

    release = Release.open(bench_dir, require_qrels=True)
    workspace = Workspace(collection_dir)
    source = EvidenceSource.from_workspace(workspace)
    data = labeled_pages(release, source, tuple(signals))
    folds = np.array([fold_of(c, N_FOLDS) for c in data.conditions])
    if len(set(folds.tolist())) < N_FOLDS:
        raise NclueError(f"{bench_dir}: too few conditions ({len(data.conditions)}) to cross-fit {N_FOLDS} folds")
    everything = np.arange(len(data.conditions))
    fold_models = tuple(_fit(data, np.nonzero(folds != f)[0], l2) for f in range(N_FOLDS))
    page_prob = np.zeros(data.page_labels.shape)
    doc_prob = np.zeros(data.doc_labels.shape)
    for f, model in enumerate(fold_models):
        held = np.nonzero(folds == f)[0]
        page_prob[held], doc_prob[held] = _predict(data, held, model)
    dense = getattr(workspace.backbone("dense"), "index", None) if "dense" in signals else None
    flags = "".join(f" --signal {s}" for s in signals) if tuple(signals) != DEFAULT_SIGNALS else ""
    provenance = {
        "command": f"nclue coverage calibrate {bench_dir} {collection_dir} -o FILE{flags}",
        "release": str(bench_dir),
        "release_sha256": release.hashes,
        "collection": str(collection_dir),
        "collection_pages_sha256": workspace.store.fingerprint,
        "dense_index": dense.key if dense is not None else None,
        "conditions": len(data.conditions),
        "pages": int(data.page_labels.shape[1]),
        "positive_pages": int(data.page_labels.sum()),
        "positive_documents": int(data.doc_labels.sum()),
        "l2": l2,
    }
    calibration = Calibration(tuple(signals), _fit(data, everything, l2), fold_models, provenance)
    report = CalibrationReport(
        calibration,
        {"document": scores(doc_prob, data.doc_labels), "page": scores(page_prob, data.page_labels)},
    )
    if out is not None:
        write_json(Path(out), report.to_json())
    return report
