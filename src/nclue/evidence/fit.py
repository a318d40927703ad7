"""Fit and score the page-evidence model (``docs/evidence.md#fitting``).

**Labels** (:mod:`nclue.evidence.labels`) are (condition, page) and (condition, document) pairs
with a yes/no each: blind readers' judgments of a reader-judged release (the default, and the
only kind nclue ships), or a release's qrels evidence pages.

Two stages, each a logistic regression fitted by maximum likelihood (SciPy L-BFGS-B on the mean
log-loss and its exact gradient) with a ridge term ``L2 · ||w||²`` on the non-intercept weights
that is only there to keep the weights finite if a signal separates the labels (``L2 = 1e-8``;
a penalty of the size of the mean log-loss, ~1e-3, would shrink the weights visibly):

1. **page model** over the labelled (condition, page) pairs: ``σ(b + Σ_s w_s x_s)``;
2. **document model** (Platt scaling) over the labelled (condition, document) pairs:
   ``σ(a + c · max_{p ∈ d} z(p))`` with ``z`` the page logit over *every* page of the document.

**Cross-fitting.** Conditions are split into :data:`~nclue.evidence.model.N_FOLDS` folds by a
hash of their text (:func:`~nclue.evidence.model.fold_of`); ``folds[f]`` is fitted on the other
folds only. The held-out table scores exactly those predictions: log-loss, Brier score, expected
calibration error (10 equal-width bins; Naeini et al., AAAI 2015), and precision / recall of
``P ≥ 0.5``. :func:`score` applies a fitted calibration to the labels of *another* corpus (the
transfer check).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nclue.errors import NclueError
from nclue.evidence.evidence_defaults import DEFAULT_SIGNALS
from nclue.evidence.labels import LABELS, Labels, load_labels
from nclue.evidence.model import N_FOLDS, Calibration, Model, fold_of, segment_best, sigmoid
from nclue.evidence.signals import EvidenceSource
from nclue.io import json_safe, write_json
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


def _logits(data: Labels, members: np.ndarray, page: Sequence[float]) -> np.ndarray:
    w = np.asarray(page, dtype=np.float64)
    return w[0] + np.tensordot(w[1:], data.features[:, members, :], axes=1)


def _fit(data: Labels, members: np.ndarray, l2: float) -> Model:
    mask = data.page_mask[members]
    feats = np.moveaxis(data.features[:, members, :], 0, -1)[mask]  # (pairs, S)
    page = fit_logistic(feats, data.page_labels[members][mask], l2)
    best, _ = segment_best(_logits(data, members, page), data.starts)
    doc_mask = data.doc_mask[members]
    doc = fit_logistic(best[doc_mask].reshape(-1, 1), data.doc_labels[members][doc_mask], l2)
    return Model(tuple(float(w) for w in page), (float(doc[0]), float(doc[1])))


def _predict(data: Labels, members: np.ndarray, model: Model) -> tuple[np.ndarray, np.ndarray]:
    z = _logits(data, members, model.page)
    best, _ = segment_best(z, data.starts)
    return sigmoid(z), sigmoid(model.doc[0] + model.doc[1] * best)


def scores(prob: np.ndarray, label: np.ndarray) -> dict[str, float]:
    """Log-loss, Brier, ECE (10 equal-width bins), base rate, mean prediction, precision/recall at 0.5.

    ``brier_base_rate`` is the Brier score of always predicting the base rate, ``ȳ(1 − ȳ)``: the
    score to beat."""
    p = np.clip(np.asarray(prob, dtype=np.float64).ravel(), 1e-12, 1 - 1e-12)
    y = np.asarray(label, dtype=np.float64).ravel()
    if not len(y):
        raise NclueError("no labelled pairs to score")
    bins = np.minimum((p * ECE_BINS).astype(np.int64), ECE_BINS - 1)
    gap = np.abs(np.bincount(bins, weights=p, minlength=ECE_BINS) - np.bincount(bins, weights=y, minlength=ECE_BINS))
    called = p >= 0.5
    return {
        "pairs": int(len(y)),
        "positives": int(y.sum()),
        "base_rate": float(y.mean()),
        "mean_prediction": float(p.mean()),
        "log_loss": float(-(y * np.log(p) + (1 - y) * np.log(1 - p)).mean()),
        "brier": float(((p - y) ** 2).mean()),
        "brier_base_rate": float(y.mean() * (1 - y.mean())),
        "ece": float(gap.sum() / len(y)),
        "precision": float(y[called].mean()) if called.any() else 0.0,
        "recall": float(called[y > 0].mean()) if (y > 0).any() else 0.0,
    }


def _levels(data: Labels, page_prob: np.ndarray, doc_prob: np.ndarray) -> dict[str, dict[str, float]]:
    return {
        "document": scores(doc_prob[data.doc_mask], data.doc_labels[data.doc_mask]),
        "page": scores(page_prob[data.page_mask], data.page_labels[data.page_mask]),
    }


def _score_table(levels: dict[str, dict[str, float]], caption: str, note: str) -> Table:
    cols = ("pairs", "positives", "base_rate", "mean_prediction", "log_loss", "brier", "ece", "precision", "recall")
    return Table(
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
            for level, s in levels.items()
        ),
        caption=caption,
        notes=(note,),
    )


@dataclass(frozen=True)
class CalibrationReport(Tabular):
    """The fitted :class:`~nclue.evidence.model.Calibration` and its held-out (cross-fitted) scores."""

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
        held = _score_table(
            self.heldout,
            "Cross-fitted (held-out fold) scores",
            "Each condition is scored by the model fitted without its fold (split by a hash of its text).",
        )
        return [weights, held]


@dataclass(frozen=True)
class TransferReport(Tabular):
    """A calibration's scores on the labels of another release (:func:`score`)."""

    calibration: str
    fitted_on: str
    scored_on: str
    levels: dict[str, dict[str, float]]

    def to_json(self) -> dict:
        return json_safe(
            {"calibration": self.calibration, "fitted_on": self.fitted_on, "scored_on": self.scored_on, **self.levels}
        )

    def tables(self) -> list[Table]:
        return [
            _score_table(
                self.levels,
                f"Evidence calibration fitted on {self.fitted_on}, scored on {self.scored_on}",
                "The full model (no fold held out): none of these labels was seen in fitting when the releases differ.",
            )
        ]


STRUCTURE_SIGNALS = frozenset({"head", "head_high", "head_level", "role"})


def _source(workspace: Any, signals: Sequence[str]) -> EvidenceSource:
    return EvidenceSource.from_workspace(workspace, require_structure=bool(STRUCTURE_SIGNALS & set(signals)))


def fit(
    bench_dir: str | os.PathLike[str],
    workspace: Any,
    out: str | os.PathLike[str] | None = None,
    signals: tuple[str, ...] = DEFAULT_SIGNALS,
    labels: str = "reader",
    l2: float = L2,
) -> CalibrationReport:
    """Fit the page and document models on a release's labels (``labels``: ``reader`` or ``qrels``)
    over an opened :class:`~nclue.systems.registry.Workspace` of its collection; write ``out`` when given."""
    source = _source(workspace, signals)
    collection_dir = workspace.collection_dir
    data = load_labels(bench_dir, source, tuple(signals), labels)
    folds = np.array([fold_of(c, N_FOLDS) for c in data.conditions])
    if len(set(folds.tolist())) < N_FOLDS:
        raise NclueError(f"{bench_dir}: too few conditions ({len(data.conditions)}) to cross-fit {N_FOLDS} folds")
    fold_models = tuple(_fit(data, np.nonzero(folds != f)[0], l2) for f in range(N_FOLDS))
    page_prob = np.zeros(data.page_labels.shape)
    doc_prob = np.zeros(data.doc_labels.shape)
    for f, model in enumerate(fold_models):
        held = np.nonzero(folds == f)[0]
        page_prob[held], doc_prob[held] = _predict(data, held, model)
    dense = getattr(workspace.backbone("dense"), "index", None) if "dense" in signals else None
    flags = "".join(f" --signal {s}" for s in signals) if tuple(signals) != DEFAULT_SIGNALS else ""
    provenance = {
        "command": f"nclue evidence fit {bench_dir} {collection_dir} -o FILE --labels {labels}{flags}",
        "labels": LABELS[labels],
        **data.provenance,
        "collection": str(collection_dir),
        "collection_pages_sha256": workspace.store.fingerprint,
        "sources": source.describe["sources"],
        "dense_index": dense.key if dense is not None else None,
        "conditions": len(data.conditions),
        "labelled_pages": int(data.page_mask.sum()),
        "positive_pages": int(data.page_labels[data.page_mask].sum()),
        "labelled_documents": int(data.doc_mask.sum()),
        "positive_documents": int(data.doc_labels[data.doc_mask].sum()),
        "l2": l2,
    }
    everything = np.arange(len(data.conditions))
    calibration = Calibration(tuple(signals), _fit(data, everything, l2), fold_models, provenance)
    report = CalibrationReport(calibration, _levels(data, page_prob, doc_prob))
    if out is not None:
        write_json(Path(out), report.to_json())
    return report


def score(
    calibration: Calibration,
    bench_dir: str | os.PathLike[str],
    workspace: Any,
    labels: str = "reader",
    name: str = "",
) -> TransferReport:
    """Score ``calibration``'s full model on the labels of ``bench_dir`` (another corpus's release)."""
    source = _source(workspace, calibration.signals)
    data = load_labels(bench_dir, source, calibration.signals, labels)
    members = np.arange(len(data.conditions))
    page_prob, doc_prob = _predict(data, members, calibration.model)
    fitted_on = str(calibration.provenance.get("release", "?"))
    return TransferReport(
        name or calibration.sha256[:12], fitted_on, str(bench_dir), _levels(data, page_prob, doc_prob)
    )
