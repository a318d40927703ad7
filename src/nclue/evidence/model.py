"""The page-evidence model and its calibration format (``docs/evidence.md#model``).

A page logit ``z(c, p) = b + Σ_s w_s x_s(c, p)`` over the signals ``x_s`` of
:mod:`nclue.evidence.signals`; ``σ(z)`` is the probability that page ``p`` establishes condition
``c``. A document's evidence is its best page, ``p*(d, c) = argmax_{p ∈ d} z(c, p)`` (ties: the
earlier page), and ``P(d establishes c) = σ(a + c_d · z(c, p*))`` (Platt scaling of the best-page
logit against document labels).

A :class:`Calibration` holds the signals, the weights fitted on every labelled condition, one
model per cross-fitting fold (``folds[f]`` fitted without the conditions of fold ``f``,
:func:`fold_of`), and its provenance: which labels (reader judgments, qrels evidence pages), of
which release, over which collection and sources. ``struct`` reads the page probabilities,
coverage selection the document probabilities; both load calibrations through this module.

nclue ships calibrations fitted on the blind-reader judgments of its two reader-judged
benchmarks (:data:`SHIPPED`, ``calibrations/``). :func:`for_sources` picks, for a collection, the
first one fitted on documents of *other* sources, so no shipped calibration scores the corpus
whose readings fitted it.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from nclue.errors import NclueError
from nclue.io import read_json

N_FOLDS = 2
FORMAT = 4
BM25_BOUND_FORMAT = 3
"""The first calibration format whose ``bm25`` signal is divided by its upper bound (:mod:`nclue.evidence.signals`)."""
SPELLING_FORMAT = 4
"""The first calibration format whose lexical signals (``bm25``, ``phrase``) also read the other
spelling convention (:mod:`nclue.index.spelling`)."""
LEXICAL_SIGNALS = frozenset({"bm25", "phrase"})
SHIPPED: tuple[str, ...] = ("reader-debian-docs-shift", "reader-debian-docs")
"""Shipped calibrations (``calibrations/NAME.json``), in order of preference."""
FIT_HINT = "write one with `nclue evidence fit BENCH COLLECTION -o FILE`"


def fold_of(text: str, n_folds: int = N_FOLDS) -> int:
    """Cross-fitting fold of a condition: SHA-256 of its stripped, lower-cased text, first 8 hex digits, mod ``n_folds``."""
    return int(hashlib.sha256(text.strip().lower().encode("utf-8")).hexdigest()[:8], 16) % n_folds


def sigmoid(z: np.ndarray) -> np.ndarray:
    """Logistic function, overflow-safe."""
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(z, dtype=np.float64)))


@dataclass(frozen=True)
class Model:
    """Page weights ``(b, w_1..w_S)`` and document Platt scaling ``(a, c)``."""

    page: tuple[float, ...]
    doc: tuple[float, float]

    def to_json(self) -> dict:
        return {"page": list(self.page), "doc": list(self.doc)}

    @classmethod
    def from_json(cls, row: Mapping) -> Model:
        return cls(tuple(float(x) for x in row["page"]), (float(row["doc"][0]), float(row["doc"][1])))


@dataclass(frozen=True)
class Calibration:
    """Fitted evidence weights: one model on every labelled condition and one per cross-fitting
    fold (``folds[f]`` was fitted without the conditions of fold ``f``), plus provenance."""

    signals: tuple[str, ...]
    model: Model
    folds: tuple[Model, ...] = ()
    provenance: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            "format": FORMAT,
            "signals": list(self.signals),
            "model": self.model.to_json(),
            "folds": [f.to_json() for f in self.folds],
            "fold_rule": "sha256(stripped lower-cased condition)[:8] as hex, mod number of folds",
            "provenance": dict(self.provenance),
        }

    @property
    def sha256(self) -> str:
        """SHA-256 of the canonical JSON (recorded by freezes and runs)."""
        from nclue.io import dumps_canonical

        return hashlib.sha256(dumps_canonical(self.to_json()).encode("utf-8")).hexdigest()

    @property
    def sources(self) -> frozenset[str]:
        """The document sources (packages) of the collection whose labels fitted it."""
        return frozenset(self.provenance.get("sources", ()))

    @classmethod
    def from_json(cls, data: Mapping, where: str = "calibration") -> Calibration:
        try:
            signals = tuple(str(s) for s in data["signals"])
            model = Model.from_json(data["model"])
            folds = tuple(Model.from_json(f) for f in data.get("folds", []))
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise NclueError(
                f"{where}: not an evidence calibration ({type(exc).__name__}: {exc}); {FIT_HINT}"
            ) from None
        from nclue.evidence.signals import SIGNALS

        unknown = [s for s in signals if s not in SIGNALS]
        if unknown:
            raise NclueError(
                f"{where}: unknown evidence signal {unknown[0]!r} (known: {', '.join(SIGNALS)}); {FIT_HINT}"
            )
        version = data.get("format", 1)
        if "bm25" in signals and (not isinstance(version, int) or version < BM25_BOUND_FORMAT):
            raise NclueError(
                f"{where}: fitted in calibration format {version}, when the bm25 signal was divided by the "
                f"collection's best score; since format {BM25_BOUND_FORMAT} it is divided by BM25's upper bound, "
                f"so these weights no longer fit it; {FIT_HINT}"
            )
        if LEXICAL_SIGNALS & set(signals) and isinstance(version, int) and version < SPELLING_FORMAT:
            raise NclueError(
                f"{where}: fitted in calibration format {version}, before the bm25 and phrase signals read both "
                f"spellings (customisation / customization); since format {SPELLING_FORMAT} a page written in the "
                f"other spelling no longer reads 0, so these weights no longer fit; {FIT_HINT}"
            )
        for m in (model, *folds):
            if len(m.page) != len(signals) + 1:
                raise NclueError(f"{where}: {len(m.page)} page weights for {len(signals)} signals (need signals + 1)")
        return cls(signals, model, folds, dict(data.get("provenance", {})))

    @classmethod
    def shipped(cls, name: str) -> Calibration:
        """A calibration shipped with nclue (:data:`SHIPPED`)."""
        if name not in SHIPPED:
            raise NclueError(f"no shipped evidence calibration {name!r}; shipped: {', '.join(SHIPPED)}")
        text = resources.files("nclue.evidence").joinpath("calibrations", f"{name}.json").read_text(encoding="utf-8")
        return cls.from_json(json.loads(text), f"nclue/evidence/calibrations/{name}.json")

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None, sources: Collection[str] = ()) -> Calibration:
        """Read a calibration file; ``None`` = the shipped one for a collection of ``sources`` (:func:`for_sources`)."""
        if path is None:
            return for_sources(sources)
        p = Path(path)
        if not p.is_file():
            raise NclueError(f"{p}: calibration file not found; {FIT_HINT.replace('FILE', str(p))}")
        data = read_json(p, FIT_HINT, "calibration file")
        return cls.from_json(data, str(p))

    def check_source(self, describe: Mapping[str, Any]) -> None:
        """Refuse a source whose dense model is not the one the calibration was fitted with.

        The ``dense`` and heading signals are cosines of that model; another model's cosines sit on
        another scale, so the weights would not mean what they were fitted to. The encoder backend
        (``torch``, ``onnx``, ...) may differ: it computes the same model. A source that does not
        record its dense index (a hand-written document set) is not checked.
        """
        fitted, here = self.provenance.get("dense_index"), describe.get("dense_index")
        if not fitted or not here or not set(self.signals) & DENSE_SIGNALS:
            return
        if dense_model(fitted) != dense_model(here):
            raise NclueError(
                f"the evidence calibration was fitted with dense model {dense_model(fitted)!r}, but "
                f"{describe.get('collection', 'this collection')} is indexed with {dense_model(here)!r}; "
                f"{FIT_HINT} on reader judgments over a collection indexed with this model, or index this "
                "collection with the calibration's model"
            )

    def model_for(self, text: str, crossfit: bool) -> Model:
        """The model applied to a condition: its held-out fold's under ``crossfit``, else the full one."""
        if not crossfit:
            return self.model
        if not self.folds:
            raise NclueError(f"this calibration has no cross-fitting folds; {FIT_HINT}")
        return self.folds[fold_of(text, len(self.folds))]


DENSE_SIGNALS = frozenset({"dense", "head", "head_high", "head_level", "maxsim"})
"""Signals that are cosines of the collection's dense model."""


def dense_model(index_key: str) -> str:
    """The model part of a dense index key ``<model-key>-<backend>`` (the backend suffix removed)."""
    from nclue.models.encoder import BACKENDS

    for backend in sorted(BACKENDS, key=len, reverse=True):
        if index_key.endswith(f"-{backend}"):
            return index_key[: -len(backend) - 1]
    return index_key


def for_sources(sources: Collection[str]) -> Calibration:
    """The first shipped calibration fitted on none of ``sources`` (a collection's document
    sources); with no sources known (a hand-written document set), the first shipped one."""
    wanted = frozenset(sources)
    for name in SHIPPED:
        calibration = Calibration.shipped(name)
        if not calibration.sources & wanted:
            return calibration
    raise NclueError(
        f"every shipped evidence calibration was fitted on some of these sources ({', '.join(sorted(wanted))}); "
        f"{FIT_HINT} on reader judgments of another corpus and pass it with --calibration"
    )


def page_logits(features: np.ndarray, models: Sequence[Model]) -> np.ndarray:
    """``(T, P)`` page logits ``b + Σ_s w_s x_s`` for features ``(S, T, P)`` and one model per text."""
    weights = np.array([m.page for m in models], dtype=np.float64)  # (T, S+1)
    out = np.repeat(weights[:, :1], features.shape[2], axis=1)
    for s in range(features.shape[0]):
        out += weights[:, s + 1 : s + 2] * features[s]
    return out


def segment_best(values: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``values (T, R)`` and segment (``starts``): the maximum and its first column."""
    best = np.maximum.reduceat(values, starts, axis=1)
    lengths = np.diff(np.r_[starts, values.shape[1]])
    hit = values == np.repeat(best, lengths, axis=1)
    cols = np.arange(values.shape[1])
    first = -np.maximum.reduceat(np.where(hit, -cols, -values.shape[1]), starts, axis=1)
    return best, first
