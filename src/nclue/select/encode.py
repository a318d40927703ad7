"""Facet and document vectors for coverage selection, and their frozen ``vectors.npz``.

Encoder (the protocol's, exactly): the bundled all-MiniLM-L6-v2 through :func:`nclue.models.encoder.load_encoder`,
attention-mask mean pooling, L2 normalisation, at most 256 word pieces, batch 16, CPU
threads intra 4 / inter 1 — on the ``onnx`` backend by default (a local ONNX export of the
bundled model, cached) or ``torch`` (sentence-transformers on the same weights, the
cross-check path).

Every facet string (the question, each raw requirement) and every document
(``title\ntext``) is encoded as written: no rewriting, no labels.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nclue.errors import NclueError
from nclue.io import atomic_write_bytes
from nclue.models.encoder import Encoder, describe, load_encoder
from nclue.progress import Advance
from nclue.select.inputs import TaskVectors
from nclue.select.tasks import Doc, Task, id_key

MAX_LENGTH = 256
BATCH_SIZE = 16
INTRA_OP_THREADS = 4
INTER_OP_THREADS = 1
ENCODE_BLOCK = 16 * BATCH_SIZE
ENCODERS = ("onnx", "torch")


def make_encoder(backend: str = "onnx") -> Encoder:
    """The protocol's encoder on ``backend`` (``onnx`` or ``torch``; see the module docstring)."""
    if backend not in ENCODERS:
        raise NclueError(f"unknown encoder {backend!r}; choose from {', '.join(ENCODERS)}")
    return load_encoder(None, backend, BATCH_SIZE, INTRA_OP_THREADS, MAX_LENGTH, INTER_OP_THREADS)


def encoder_identity(encoder: Encoder) -> dict:
    """The encoder's description for the freeze manifest (:func:`nclue.models.encoder.describe`)."""
    return describe(encoder)


@dataclass(frozen=True)
class FrozenVectors:
    """Document vectors by ID and facet vectors by (task, facet number; 0 = question)."""

    doc_ids: np.ndarray
    doc_vectors: np.ndarray
    facet_task: np.ndarray
    facet_index: np.ndarray
    facet_vectors: np.ndarray

    def task_vectors(self, task: Task, probs: np.ndarray | None = None) -> TaskVectors:
        """The label-free inputs of ``task`` (with its evidence ``probs`` and its ``pool_scores``);
        raises when the freeze lacks any of them."""
        row_of = {d: i for i, d in enumerate(self.doc_ids.tolist())}
        missing = [d for d in task.pool if d not in row_of]
        rows = np.nonzero(self.facet_task == task.task_id)[0]
        if missing or rows.size != task.m + 1:
            raise NclueError(f"the freeze has no vectors for task {task.task_id!r}; re-run `nclue coverage freeze`")
        rows = rows[np.argsort(self.facet_index[rows], kind="stable")]
        docs = self.doc_vectors[[row_of[d] for d in task.pool]]
        scores = None if task.pool_scores is None else np.asarray(task.pool_scores, dtype=np.float64)
        typed = None if task.typed_scores is None else np.asarray(task.typed_scores, dtype=np.float64)
        return TaskVectors(
            task.task_id,
            task.pool,
            self.facet_vectors[rows[0]],
            self.facet_vectors[rows[1:]],
            docs,
            probs,
            scores,
            typed_scores=typed,
        )


def _encode_blocks(encoder: Encoder, texts: list[str], on_block: Advance | None) -> np.ndarray:
    # blocks only set the progress granularity: masked mean pooling does not depend on which
    # texts share a padded batch (up to float rounding)
    parts = []
    for start in range(0, len(texts), ENCODE_BLOCK):
        parts.append(np.asarray(encoder.encode(texts[start : start + ENCODE_BLOCK]), dtype=np.float32))
        if on_block is not None:
            on_block(len(parts[-1]))
    return np.vstack(parts)


def encode_task_set(
    tasks: list[Task], docs: dict[str, Doc], encoder: Encoder, on_block: Advance | None = None
) -> FrozenVectors:
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
    return FrozenVectors(
        np.array(pooled, dtype=str),
        doc_vectors.astype(np.float32),
        np.array(facet_task, dtype=str),
        np.array(facet_index, dtype=np.int32),
        facet_vectors.astype(np.float32),
    )


def save_arrays(path: str | Path, arrays: dict[str, np.ndarray]) -> None:
    """Write an ``.npz`` byte-deterministically (fixed zip timestamps, members sorted by name)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for name in sorted(arrays):
            member = io.BytesIO()
            np.lib.format.write_array(member, np.ascontiguousarray(arrays[name]), allow_pickle=False)
            archive.writestr(zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0)), member.getvalue())
    atomic_write_bytes(path, buffer.getvalue())


def save_vectors(path: str | Path, vectors: FrozenVectors) -> None:
    """Write ``vectors.npz`` byte-deterministically (:func:`save_arrays`)."""
    names = ("doc_ids", "doc_vectors", "facet_index", "facet_task", "facet_vectors")
    save_arrays(path, {name: getattr(vectors, name) for name in names})


def load_vectors(path: str | Path) -> FrozenVectors:
    """Read ``vectors.npz`` written by :func:`save_vectors`."""
    with np.load(path, allow_pickle=False) as data:
        return FrozenVectors(
            data["doc_ids"], data["doc_vectors"], data["facet_task"], data["facet_index"], data["facet_vectors"]
        )
