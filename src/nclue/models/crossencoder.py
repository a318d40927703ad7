"""Passage scorers for reranking: a sentence-transformers ``CrossEncoder`` or a bi-encoder.

Scorer tokens in system names (``rerank(BASE, SCORER, pool=100)``) are plain words, so a
local model is named through the environment: ``NCLUE_MODEL_<TOKEN>`` (token upper-cased,
``-`` → ``_``) holds its directory, e.g. ``NCLUE_MODEL_MINILM_CROSS=/models/ms-marco-MiniLM-L6``.
``minilm`` is built in: the bundled all-MiniLM-L6-v2 bi-encoder. A directory whose
``config.json`` declares a ``*ForSequenceClassification`` architecture is a
cross-encoder; one with ``modules.json`` is a bi-encoder.

Scores: cross-encoder — ``CrossEncoder.predict`` on ``(query, passage)`` pairs (the
model's own activation); bi-encoder — cosine of the L2-normalised embeddings.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from nclue.errors import NclueError
from nclue.models.identity import ModelIdentity, bundled_model_path, model_identity

BUILTIN = "minilm"


def scorer_env(token: str) -> str:
    """The environment variable that names the model directory of scorer ``token``."""
    return "NCLUE_MODEL_" + token.upper().replace("-", "_")


def scorer_kind(model_dir: Path) -> str:
    """``"cross"`` or ``"bi"`` for a local model directory; NclueError otherwise."""
    if not model_dir.is_dir():
        raise NclueError(
            f"{model_dir}: model path not found; pass a local cross-encoder or sentence-transformers directory"
        )
    config = model_dir / "config.json"
    if config.is_file():
        try:
            arch = json.loads(config.read_text(encoding="utf-8")).get("architectures") or []
        except json.JSONDecodeError as exc:
            raise NclueError(f"{config}: malformed JSON ({exc})") from None
        if any(str(a).endswith("ForSequenceClassification") for a in arch):
            return "cross"
    if (model_dir / "modules.json").is_file():
        return "bi"
    raise NclueError(
        f"{model_dir}: neither a cross-encoder (config.json with a *ForSequenceClassification architecture) "
        "nor a sentence-transformers model (modules.json)"
    )


def resolve_scorer(token: str) -> tuple[str, Path]:
    """``(kind, model_dir)`` of a scorer token (see the module docstring)."""
    if token == BUILTIN:
        return "bi", bundled_model_path()
    env = scorer_env(token)
    value = os.environ.get(env)
    if not value:
        raise NclueError(
            f"unknown reranking scorer {token!r}: use {BUILTIN!r} (the bundled bi-encoder) or set {env}=MODEL_DIR "
            "to a local cross-encoder or sentence-transformers model"
        )
    path = Path(value)
    return scorer_kind(path), path


class CrossEncoderScorer:
    """``CrossEncoder(model_dir).predict`` over (query, passage) pairs."""

    kind = "cross"

    def __init__(self, model_dir: str | os.PathLike[str], batch_size: int = 16) -> None:
        path = Path(model_dir)
        if scorer_kind(path) != "cross":
            raise NclueError(
                f"{path}: not a cross-encoder (config.json has no *ForSequenceClassification architecture)"
            )
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from sentence_transformers import CrossEncoder

        try:
            self.model = CrossEncoder(str(path), device="cpu", local_files_only=True)
        except (OSError, ValueError) as exc:
            raise NclueError(f"{path}: cannot load as a CrossEncoder ({exc})") from None
        self.identity: ModelIdentity = model_identity(path)
        self.batch_size = int(batch_size)
        limit = getattr(self.model, "max_seq_length", None) if hasattr(type(self.model), "max_seq_length") else None
        self.max_length = int(limit or getattr(self.model, "max_length", None) or 512)

    def score(self, query: str, passages: Sequence[str]) -> np.ndarray:
        """One float32 relevance score per passage."""
        if not len(passages):
            return np.zeros(0, np.float32)
        pairs = [(query, p) for p in passages]
        scores = self.model.predict(pairs, batch_size=self.batch_size, show_progress_bar=False, convert_to_numpy=True)
        return np.asarray(scores, dtype=np.float32).reshape(len(passages), -1)[:, 0]
