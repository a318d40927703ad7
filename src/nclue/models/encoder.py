"""One entry point for bi-encoders: :func:`load_encoder` over four interchangeable backends.

=========  ==============================================================  =====================
backend    what runs                                                       vectors equal torch?
=========  ==============================================================  =====================
torch      ``SentenceTransformer.encode`` (any sentence-transformers dir)  (reference)
onnx       the same transformer exported to ONNX, ONNX Runtime fp32         yes, to ~1e-6
onnx-int8  ONNX Runtime with dynamic int8 weights                           close (cos ≈ 0.98+)
static     model2vec static embeddings distilled from the model             no (a different model)
=========  ==============================================================  =====================

Every encoder has ``identity`` (:class:`~nclue.models.identity.ModelIdentity`),
``backend``, ``max_length``, ``dim``, ``encode(texts) -> (n, dim) float32`` (L2-normalised)
and — except ``static`` — ``token_vectors(texts) -> list[(n_tokens, dim)]``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from nclue.errors import NclueError
from nclue.models.identity import ModelIdentity, bundled_model_path, cache_dir, model_identity
from nclue.models.st_layout import read_layout

BACKENDS: tuple[str, ...] = ("torch", "onnx", "onnx-int8", "static")


@runtime_checkable
class Encoder(Protocol):
    """What the dense index and the dense systems need from a bi-encoder."""

    identity: ModelIdentity
    backend: str
    max_length: int

    @property
    def dim(self) -> int: ...

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...

    def token_vectors(self, texts: Sequence[str]) -> list[np.ndarray]: ...


class _OnnxBackend:
    """:class:`OnnxMeanPoolEncoder` carrying the *source* model's identity and a backend tag."""

    def __init__(self, model_path: Path, int8: bool, batch_size: int, threads: int) -> None:
        from nclue.models.onnx_encoder import OnnxMeanPoolEncoder
        from nclue.models.onnx_export import export_onnx

        layout = read_layout(model_path)
        onnx_dir = export_onnx(model_path, cache_dir() / "onnx", quantize_int8=int8)
        self.inner = OnnxMeanPoolEncoder(
            onnx_dir, max_length=layout.max_seq_length, batch_size=batch_size, intra_op_threads=threads
        )
        self.identity = model_identity(model_path)
        self.backend = "onnx-int8" if int8 else "onnx"
        self.max_length = self.inner.max_length

    @property
    def dim(self) -> int:
        return self.inner.dim

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.encode(texts)

    def token_vectors(self, texts: Sequence[str]) -> list[np.ndarray]:
        return self.inner.token_vectors(texts)


BUNDLED_ALIASES: tuple[str, ...] = ("minilm", "bundled")


def resolve_model_path(model_path: str | os.PathLike[str] | None) -> Path:
    """``model_path`` as a Path; the bundled all-MiniLM-L6-v2 for ``None``, ``"minilm"`` or
    ``"bundled"`` (unless a directory of that name exists)."""
    if model_path is None or (str(model_path) in BUNDLED_ALIASES and not Path(model_path).exists()):
        return bundled_model_path()
    return Path(model_path)


def load_encoder(
    model_path: str | os.PathLike[str] | None = None,
    backend: str = "torch",
    batch_size: int = 16,
    threads: int | None = None,
) -> Encoder:
    """Load a bi-encoder from a local sentence-transformers directory (default: bundled MiniLM).

    Raises :class:`NclueError` for an unknown backend, a missing path or a directory that
    is not a sentence-transformers model.
    """
    if backend not in BACKENDS:
        raise NclueError(f"unknown encoder backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    path = resolve_model_path(model_path)
    read_layout(path)
    if backend == "torch":
        from nclue.models.st_encoder import SentenceTransformerEncoder

        if threads is not None:
            import torch

            torch.set_num_threads(int(threads))  # process-wide: only when the caller asks
        return SentenceTransformerEncoder(path, batch_size=batch_size)
    if backend == "static":
        from nclue.models.static import StaticEncoder

        return StaticEncoder(path)
    n_threads = int(threads or os.cpu_count() or 1)
    return _OnnxBackend(path, int8=backend == "onnx-int8", batch_size=batch_size, threads=n_threads)


def load_tokenizer(model_path: str | os.PathLike[str] | None = None):  # noqa: ANN201 - tokenizers.Tokenizer
    """The sentence-transformers model's fast tokenizer (``tokenizers.Tokenizer``), untruncated and unpadded."""
    return load_tokenizer_dir(read_layout(resolve_model_path(model_path)).transformer_dir)


def load_tokenizer_dir(transformer_dir: str | os.PathLike[str]):  # noqa: ANN201 - tokenizers.Tokenizer
    """The fast tokenizer stored in a Hugging Face model directory (``tokenizer.json`` or via Transformers)."""
    from tokenizers import Tokenizer

    directory = Path(transformer_dir)
    path = directory / "tokenizer.json"
    if path.is_file():
        tokenizer = Tokenizer.from_file(str(path))
    else:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from transformers import AutoTokenizer

        auto = AutoTokenizer.from_pretrained(str(directory))
        if not getattr(auto, "is_fast", False):
            raise NclueError(f"{directory}: no fast tokenizer; nclue's chunker needs tokenizer.json")
        tokenizer = auto.backend_tokenizer
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer
