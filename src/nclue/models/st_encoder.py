"""A sentence-transformers bi-encoder from any local model directory (the torch path).

Sentence embeddings are ``SentenceTransformer.encode(..., normalize_embeddings=True)``;
token vectors (for late interaction) are ``encode(..., output_value="token_embeddings")``
with padding removed, each row L2-normalised. Works for any sentence-transformers model
(MiniLM, E5, BGE-M3, Qwen3-Embedding, ...) saved locally; nothing is downloaded.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from nclue.errors import NclueError
from nclue.models.identity import model_identity
from nclue.models.onnx_encoder import l2_normalize
from nclue.models.quiet_loading import no_loading_bars
from nclue.models.st_layout import check_sentence_transformer


def load_sentence_transformer(model_path: str | os.PathLike[str], device: str = "cpu"):  # noqa: ANN201 - lazy type
    """``SentenceTransformer(model_path)`` offline, with NclueError for a missing or non-ST directory."""
    root = check_sentence_transformer(model_path)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    try:
        with no_loading_bars():
            return SentenceTransformer(str(root), device=device, local_files_only=True)
    except (OSError, ValueError, KeyError, RuntimeError) as exc:
        raise NclueError(f"{root}: cannot load as a sentence-transformers model ({exc})") from None


class SentenceTransformerEncoder:
    """The torch encoder: ``encode`` → normalised float32 embeddings, ``token_vectors`` → per-text arrays."""

    backend = "torch"

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        batch_size: int = 16,
        device: str = "cpu",
        max_length: int | None = None,
    ) -> None:
        self.model_path = Path(model_path)
        self.model = load_sentence_transformer(self.model_path, device=device)
        if max_length is not None:
            self.model.max_seq_length = min(int(max_length), int(self.model.max_seq_length or max_length))
        self.identity = model_identity(self.model_path)
        self.batch_size = int(batch_size)
        self.max_length = int(self.model.max_seq_length or 512)

    @property
    def dim(self) -> int:
        """Embedding dimension."""
        getter = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        dim = getter()
        return int(dim) if dim else int(self.encode(["x"]).shape[1])

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32 L2-normalised embeddings, input order."""
        if not len(texts):
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self.model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

    def token_vectors(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Per text, ``(n_tokens, dim)`` float32 L2-normalised contextual token vectors."""
        if not len(texts):
            return []
        outputs = self.model.encode(
            list(texts), batch_size=self.batch_size, output_value="token_embeddings", show_progress_bar=False
        )
        return [l2_normalize(np.asarray(o.float().cpu().numpy() if hasattr(o, "cpu") else o)) for o in outputs]
