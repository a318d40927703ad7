"""Passage scorers for reranking: a sentence-transformers ``CrossEncoder`` or a bi-encoder.

A scorer in a system name (``rerank(BASE, SCORER, pool=100)``) is a word of the name grammar
(``[A-Za-z0-9_+-]``, one optional ``:``), so it cannot hold a path; it names a model *key*:

* ``cross:KEY`` — a cross-encoder, ``bi:KEY`` — a bi-encoder (the directory must be of that kind);
* a plain ``KEY`` — the model ``KEY`` names, whichever kind it is (``minilm``, ``minilm-cross``).

A key resolves to a local directory, first match wins: ``minilm`` / ``bundled`` — the bundled
all-MiniLM-L6-v2 bi-encoder; the environment variable ``NCLUE_MODEL_<KEY>`` (key upper-cased,
``-`` → ``_``), e.g. ``NCLUE_MODEL_MS_MARCO=/models/ms-marco-MiniLM-L6-v2``; the folder ``KEY`` of
the models folder, ``$NCLUE_MODELS`` (default ``$NCLUE_CACHE/models``), e.g.
``cross:ms-marco-MiniLM-L6-v2`` → ``$NCLUE_MODELS/ms-marco-MiniLM-L6-v2``. A directory whose
``config.json`` declares a ``*ForSequenceClassification`` architecture is a cross-encoder; one
with ``modules.json`` is a bi-encoder.

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
from nclue.models.identity import ModelIdentity, bundled_model_path, cache_dir, model_identity
from nclue.models.quiet_loading import no_loading_bars

BUILTIN = "minilm"
BUNDLED_KEYS: tuple[str, ...] = ("minilm", "bundled")
KINDS: tuple[str, ...] = ("cross", "bi")
MODELS_ENV = "NCLUE_MODELS"


def scorer_env(token: str) -> str:
    """The environment variable that names the model directory of scorer ``token``."""
    return "NCLUE_MODEL_" + token.upper().replace("-", "_")


def models_folder() -> Path:
    """The folder whose sub-folders are model keys: ``$NCLUE_MODELS``, else nclue's model cache."""
    value = os.environ.get(MODELS_ENV)
    return Path(value) if value else cache_dir()


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


def model_path(key: str) -> Path:
    """The local directory of model ``key`` (resolution order in the module docstring)."""
    if key in BUNDLED_KEYS:
        return bundled_model_path()
    env = scorer_env(key)
    value = os.environ.get(env)
    if value:
        return Path(value)
    folder = models_folder() / key
    if folder.is_dir():
        return folder
    raise NclueError(
        f"unknown reranking scorer {key!r}: use {BUILTIN!r} (the bundled bi-encoder), set {env}=MODEL_DIR "
        f"or put the model in {folder} (the models folder is ${MODELS_ENV}) — a local cross-encoder or "
        "sentence-transformers model"
    )


def resolve_scorer(token: str) -> tuple[str, Path]:
    """``(kind, model_dir)`` of a scorer token ``KEY``, ``cross:KEY`` or ``bi:KEY`` (see the module docstring)."""
    want, sep, key = token.partition(":")
    if not sep:
        path = model_path(token)
        return scorer_kind(path), path
    if want not in KINDS:
        raise NclueError(
            f"reranking scorer {token!r}: {want + ':'!r} is not a scorer kind; write cross:KEY (a cross-encoder), "
            "bi:KEY (a bi-encoder), llm or llm:MODEL (an LLM endpoint), or a plain model key"
        )
    path = model_path(key)
    kind = scorer_kind(path)
    if kind != want:
        raise NclueError(
            f"reranking scorer {token!r}: {path} is a {'cross-encoder' if kind == 'cross' else 'bi-encoder'}, "
            f"not a {'cross-encoder' if want == 'cross' else 'bi-encoder'}; write {kind}:{key}"
        )
    return kind, path


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
            with no_loading_bars():
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
