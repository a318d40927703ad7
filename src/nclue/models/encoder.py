"""One entry point for bi-encoders: :func:`load_encoder` over five interchangeable backends.

==========  ==============================================================  =====================
backend     what runs                                                       vectors equal torch?
==========  ==============================================================  =====================
torch       ``SentenceTransformer.encode`` (any sentence-transformers dir)  (reference)
torch-bf16  the same weights in bfloat16, SDPA attention, length-sorted      close (cos ≈ 0.9998)
onnx        the same transformer exported to ONNX, ONNX Runtime fp32         yes, to ~1e-6
onnx-int8   ONNX Runtime with dynamic int8 weights                           close (cos ≈ 0.98+)
static      model2vec static embeddings distilled from the model             no (a different model)
==========  ==============================================================  =====================

The default for building dense indexes (:data:`DEFAULT_BACKEND`, :func:`default_backend`) depends
on the CPU: ``torch-bf16`` where it multiplies bfloat16 natively (AVX512-BF16 or AMX) — there the
fastest path whose rankings agree with exact fp32 (``benchmarks/encode.py``,
``benchmarks/dense_agreement.py``) — and ``onnx`` elsewhere, where bfloat16 is emulated and ran
6× slower than fp32 (64 chunks of 256 tokens: 29.8 s against 5.0 s for ``onnx`` and ``torch`` on
an AVX2 machine). Queries against a bfloat16 index are encoded in fp32 (:data:`QUERY_BACKEND`).
The backend is part of an index's name and manifest, so an index records which one made it.

Every encoder has ``identity`` (:class:`~nclue.models.identity.ModelIdentity`),
``backend``, ``max_length``, ``dim``, ``encode(texts) -> (n, dim) float32`` (L2-normalised)
and — except ``static`` — ``token_vectors(texts) -> list[(n_tokens, dim)]``;
:func:`encode_with_tokens` gives both from one forward pass where the backend can.

:func:`with_prompt` wraps an encoder so that every text is encoded as ``prompt + text`` (a
model's query or passage prompt, :func:`nclue.models.st_layout.resolve_prompts`), on any backend.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from nclue.engine import env_thread_count
from nclue.errors import NclueError
from nclue.models.identity import ModelIdentity, bundled_model_path, cache_dir, model_identity
from nclue.models.st_layout import read_layout
from nclue.models.tokenizer import load_tokenizer_dir

if TYPE_CHECKING:
    from nclue.models.onnx_encoder import MeanPoolEncoder

BACKENDS: tuple[str, ...] = ("torch", "torch-bf16", "onnx", "onnx-int8", "static")
NATIVE_BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16"})
"""``/proc/cpuinfo`` flags of a CPU with native bfloat16 dot products."""
CPUINFO = Path("/proc/cpuinfo")


def native_bf16(cpuinfo: str | None = None) -> bool:
    """Whether the CPU multiplies bfloat16 natively: one of :data:`NATIVE_BF16_FLAGS` among the
    ``flags`` of ``cpuinfo`` (default: this machine's ``/proc/cpuinfo``; ``False`` where there is none)."""
    if cpuinfo is None:
        try:
            cpuinfo = CPUINFO.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return False
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features") and NATIVE_BF16_FLAGS & set(value.split()):
            return True
    return False


def default_backend(cpuinfo: str | None = None) -> str:
    """``torch-bf16`` on a CPU with native bfloat16 (:func:`native_bf16`), else ``onnx`` (exact fp32)."""
    return "torch-bf16" if native_bf16(cpuinfo) else "onnx"


DEFAULT_BACKEND = default_backend()
"""This machine's default backend for building dense indexes (:func:`default_backend`)."""
DEFAULT_BATCH_SIZE = 32
QUERY_BACKEND: dict[str, str] = {"torch-bf16": "onnx"}
"""Query-time backend of an index made on another one: bfloat16 is a bulk-encoding precision;
queries (few, short) are encoded exactly, by the fp32 ONNX graph of the same model files."""


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


class _Wrapped:
    """An inner :class:`~nclue.models.onnx_encoder.MeanPoolEncoder` carrying the *source* model's
    identity and a backend tag."""

    inner: MeanPoolEncoder
    identity: ModelIdentity
    backend: str
    max_length: int
    batch_size: int
    threads: tuple[int, ...]

    @property
    def dim(self) -> int:
        return self.inner.dim

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.encode(texts)

    def token_vectors(self, texts: Sequence[str]) -> list[np.ndarray]:
        return self.inner.token_vectors(texts)

    def encode_with_tokens(self, texts: Sequence[str]) -> tuple[np.ndarray, list[np.ndarray]]:
        return self.inner.encode_with_tokens(texts)


class _OnnxBackend(_Wrapped):
    """ONNX Runtime over the cached export of the model (fp32 or dynamic int8)."""

    def __init__(
        self, model_path: Path, int8: bool, batch_size: int, threads: int, max_length: int | None, inter_threads: int
    ) -> None:
        from nclue.models.onnx_encoder import OnnxMeanPoolEncoder
        from nclue.models.onnx_export import export_onnx

        layout = read_layout(model_path)
        onnx_dir = export_onnx(model_path, cache_dir() / "onnx", quantize_int8=int8)
        self.inner = OnnxMeanPoolEncoder(
            onnx_dir,
            max_length=min(max_length or layout.max_seq_length, layout.max_seq_length),
            batch_size=batch_size,
            intra_op_threads=threads,
            inter_op_threads=inter_threads,
        )
        self.identity = model_identity(model_path)
        self.backend = "onnx-int8" if int8 else "onnx"
        self.max_length = self.inner.max_length
        self.batch_size = batch_size
        self.threads = (threads, inter_threads)


class _Bf16Backend(_Wrapped):
    """:class:`~nclue.models.bf16_encoder.Bf16MeanPoolEncoder` with the model's identity and backend tag."""

    def __init__(self, model_path: Path, batch_size: int, max_length: int | None, threads: tuple[int, ...]) -> None:
        from nclue.models.bf16_encoder import Bf16MeanPoolEncoder

        self.inner = Bf16MeanPoolEncoder(model_path, max_length=max_length, batch_size=batch_size)
        self.identity = model_identity(model_path)
        self.backend = "torch-bf16"
        self.max_length = self.inner.max_length
        self.batch_size = batch_size
        self.threads = threads


def encode_with_tokens(encoder: Encoder, texts: Sequence[str]) -> tuple[np.ndarray, list[np.ndarray]]:
    """``(encode(texts), token_vectors(texts))``: one forward pass on the ONNX and bfloat16
    backends, two on ``torch`` (``SentenceTransformer`` returns one output per call)."""
    both = getattr(encoder, "encode_with_tokens", None)
    if both is not None:
        return both(texts)
    return encoder.encode(texts), encoder.token_vectors(texts)


class PromptedEncoder:
    """``base`` encoding ``prompt + text`` for every text; everything else (identity, backend,
    ``max_length``, batching) is ``base``'s. The prompt counts towards ``max_length`` (truncation
    happens after prepending, as in ``SentenceTransformer.encode(prompt=...)``)."""

    def __init__(self, base: Encoder, prompt: str) -> None:
        self.base = base
        self.prompt = prompt

    def __getattr__(self, name: str):  # noqa: ANN204 - identity, backend, max_length, batch_size, threads, inner
        if name == "base":  # not set yet (e.g. while unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.base, name)

    @property
    def dim(self) -> int:
        return self.base.dim

    def _prompted(self, texts: Sequence[str]) -> list[str]:
        return [self.prompt + t for t in texts]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return self.base.encode(self._prompted(texts))

    def token_vectors(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Token vectors of ``prompt + text`` (the prompt's tokens included)."""
        return self.base.token_vectors(self._prompted(texts))

    def encode_with_tokens(self, texts: Sequence[str]) -> tuple[np.ndarray, list[np.ndarray]]:
        return encode_with_tokens(self.base, self._prompted(texts))


def with_prompt(encoder: Encoder, prompt: str) -> Encoder:
    """``encoder`` prepending ``prompt`` to every text; ``encoder`` itself when ``prompt`` is empty."""
    return PromptedEncoder(encoder, prompt) if prompt else encoder


def unprompted(encoder: Encoder) -> Encoder:
    """``encoder`` without the prompt :func:`with_prompt` added (``encoder`` itself when it has none)."""
    return encoder.base if isinstance(encoder, PromptedEncoder) else encoder


def describe(encoder: Encoder) -> dict:
    """What defines an encoder's vectors: model identity, backend, truncation, batching, threads.

    Stored in manifests that must change whenever the vectors could (the coverage freeze, indexes).
    ONNX backends add the SHA-256 of the exported graph files; a prompted encoder adds its ``prompt``.
    """
    out: dict = {
        "model": encoder.identity.name,
        "sha256": encoder.identity.sha256,
        "backend": encoder.backend,
        "max_length": int(encoder.max_length),
        "batch_size": int(getattr(encoder, "batch_size", 0)),
        "threads": list(getattr(encoder, "threads", ())),
        "pooling": "attention-mask mean",
        "normalise": "l2",
    }
    inner = getattr(encoder, "inner", None)
    if inner is not None and hasattr(inner, "onnx_dir"):
        from nclue.io import sha256_file

        out["onnx_sha256"] = {p.name: sha256_file(p) for p in sorted(Path(inner.onnx_dir).glob("*.onnx"))}
    if getattr(encoder, "prompt", ""):
        out["prompt"] = encoder.prompt
    return out


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
    max_length: int | None = None,
    inter_threads: int = 1,
) -> Encoder:
    """Load a bi-encoder from a local sentence-transformers directory (default: bundled MiniLM).

    ``max_length`` truncates inputs below the model's own limit (word pieces); ``threads`` /
    ``inter_threads`` set the intra-/inter-op thread counts (torch: process-wide, only when
    given; ONNX Runtime: ``$OMP_NUM_THREADS``, else one per CPU, when not given). Raises :class:`NclueError` for an unknown backend, a missing path or a directory
    that is not a sentence-transformers model.
    """
    if backend not in BACKENDS:
        raise NclueError(f"unknown encoder backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    path = resolve_model_path(model_path)
    read_layout(path)
    if backend in ("torch", "torch-bf16"):
        if threads is not None:
            import torch

            torch.set_num_threads(int(threads))  # process-wide: only when the caller asks
            try:
                torch.set_num_interop_threads(int(inter_threads))
            except RuntimeError:  # torch allows this once per process
                pass
        if backend == "torch-bf16":
            used = (int(threads), int(inter_threads)) if threads is not None else ()
            return _Bf16Backend(path, batch_size, max_length, used)
        from nclue.models.st_encoder import SentenceTransformerEncoder

        return SentenceTransformerEncoder(path, batch_size=batch_size, max_length=max_length)
    if backend == "static":
        from nclue.models.static import StaticEncoder

        return StaticEncoder(path)
    n_threads = int(threads or env_thread_count() or os.cpu_count() or 1)
    return _OnnxBackend(path, backend == "onnx-int8", batch_size, n_threads, max_length, inter_threads)


def load_tokenizer(model_path: str | os.PathLike[str] | None = None):  # noqa: ANN201 - tokenizers.Tokenizer
    """The sentence-transformers model's fast tokenizer (``tokenizers.Tokenizer``), untruncated and unpadded."""
    return load_tokenizer_dir(read_layout(resolve_model_path(model_path)).transformer_dir)
