"""Sentence embeddings from an exported ONNX transformer with attention-mask mean pooling.

For a text with token states ``h_t`` and mask ``m_t`` the embedding is
``e = Σ_t m_t h_t / max(Σ_t m_t, 1e-9)`` followed by ``e / ‖e‖₂`` — the
sentence-transformers ``Pooling(mean)`` + ``Normalize`` pipeline. Texts are tokenised
with the model's own ``tokenizer.json`` (Hugging Face ``tokenizers``), truncated to
``max_length`` and batched by length (longest first) to minimise padding; outputs come
back in input order.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from nclue.errors import NclueError
from nclue.models.identity import ModelIdentity
from nclue.models.onnx_export import META_FILE, MODEL_FILE, TOKENIZER_FILE


def l2_normalize(matrix: np.ndarray) -> np.ndarray:
    """Rows divided by their L2 norm (zero rows stay zero), float32."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return matrix / np.maximum(norms, 1e-12)


class OnnxMeanPoolEncoder:
    """ONNX Runtime encoder over a directory written by :func:`nclue.models.onnx_export.export_onnx`."""

    def __init__(
        self,
        onnx_dir: str | os.PathLike[str],
        max_length: int = 256,
        batch_size: int = 16,
        intra_op_threads: int = 4,
        inter_op_threads: int = 1,
    ) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.onnx_dir = Path(onnx_dir)
        meta_path = self.onnx_dir / META_FILE
        if not meta_path.is_file():
            raise NclueError(
                f"{self.onnx_dir}: not an nclue ONNX export (no {META_FILE}); create it with export_onnx()"
            )
        self.meta = json.loads(meta_path.read_text(encoding="utf-8"))
        self.identity = ModelIdentity(**self.meta["model"])
        self.quantized = bool(self.meta.get("quantized", False))
        self.max_length = int(min(max_length, self.meta.get("max_length", max_length)))
        self.batch_size = int(batch_size)
        self.input_names: list[str] = list(self.meta["inputs"])
        self.pad_id = int(self.meta.get("pad_id", 0))
        self.tokenizer = Tokenizer.from_file(str(self.onnx_dir / TOKENIZER_FILE))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=self.max_length)
        options = ort.SessionOptions()
        options.intra_op_num_threads = int(intra_op_threads)
        options.inter_op_num_threads = int(inter_op_threads)
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = ort.InferenceSession(
            str(self.onnx_dir / MODEL_FILE), options, providers=["CPUExecutionProvider"]
        )

    @property
    def dim(self) -> int:
        """Embedding dimension (from the graph's output shape, else by encoding one text)."""
        shape = self.session.get_outputs()[0].shape
        if isinstance(shape[-1], int):
            return int(shape[-1])
        return int(self.encode(["x"]).shape[1])

    def _batches(self, texts: Sequence[str]):
        """Yield ``(positions, feeds)`` for length-sorted batches of ``texts``."""
        encodings = self.tokenizer.encode_batch([t or "" for t in texts])
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(encodings))
        order = np.argsort(-lengths, kind="stable")
        for start in range(0, len(order), self.batch_size):
            positions = order[start : start + self.batch_size]
            width = int(lengths[positions].max())
            ids = np.full((len(positions), width), self.pad_id, dtype=np.int64)
            mask = np.zeros((len(positions), width), dtype=np.int64)
            types = np.zeros((len(positions), width), dtype=np.int64)
            for row, pos in enumerate(positions):
                enc = encodings[pos]
                n = len(enc.ids)
                ids[row, :n] = enc.ids
                mask[row, :n] = 1
                types[row, :n] = enc.type_ids
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            yield positions, {name: feeds[name] for name in self.input_names}

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32 L2-normalised mean-pooled embeddings, input order."""
        out: np.ndarray | None = None
        for positions, feeds in self._batches(texts):
            states = self.session.run(None, feeds)[0]
            mask = feeds["attention_mask"][:, :, None].astype(np.float32)
            pooled = (states * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
            if out is None:
                out = np.empty((len(texts), pooled.shape[1]), dtype=np.float32)
            out[positions] = pooled
        if out is None:
            return np.zeros((0, self.dim), dtype=np.float32)
        return l2_normalize(out)

    def token_vectors(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Per text, ``(n_tokens, dim)`` float32 L2-normalised contextual token vectors (padding removed)."""
        out: list[np.ndarray | None] = [None] * len(texts)
        for positions, feeds in self._batches(texts):
            states = self.session.run(None, feeds)[0]
            counts = feeds["attention_mask"].sum(axis=1)
            for row, pos in enumerate(positions):
                out[pos] = l2_normalize(states[row, : int(counts[row])])
        return [v for v in out if v is not None]
