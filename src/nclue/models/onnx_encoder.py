"""Sentence embeddings by attention-mask mean pooling over a transformer's token states.

For a text with token states ``h_t`` and mask ``m_t`` the embedding is
``e = Σ_t m_t h_t / max(Σ_t m_t, 1e-9)`` followed by ``e / ‖e‖₂`` — the
sentence-transformers ``Pooling(mean)`` + ``Normalize`` pipeline. Texts are tokenised
with the model's own ``tokenizer.json`` (Hugging Face ``tokenizers``, one batched call),
truncated to ``max_length`` and batched by length (longest first) so a batch carries
little padding; outputs come back in input order.

:class:`MeanPoolEncoder` holds that shared pipeline; a subclass supplies only the
transformer forward pass (:meth:`MeanPoolEncoder.states`): :class:`OnnxMeanPoolEncoder`
runs an exported ONNX graph in ONNX Runtime, :class:`nclue.models.bf16_encoder.Bf16MeanPoolEncoder`
the PyTorch weights in bfloat16. One forward pass yields both the pooled embedding and
the contextual token vectors (:meth:`MeanPoolEncoder.encode_with_tokens`), which is how
the dense index and the late-interaction token index are built together.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from nclue.errors import NclueError
from nclue.io import read_json_object
from nclue.models.identity import ModelIdentity
from nclue.models.onnx_export import META_FILE, MODEL_FILE, TOKENIZER_FILE

FEEDS = ("input_ids", "attention_mask", "token_type_ids")


def l2_normalize(matrix: np.ndarray) -> np.ndarray:
    """Rows divided by their L2 norm (zero rows stay zero), float32."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return matrix / np.maximum(norms, 1e-12)


class MeanPoolEncoder:
    """Tokenise, length-sort, batch, run :meth:`states`, mean-pool and normalise.

    Subclasses set ``tokenizer`` (a ``tokenizers.Tokenizer``), ``max_length``,
    ``batch_size``, ``pad_id`` and ``input_names``, and implement :meth:`states`.
    """

    tokenizer: object
    max_length: int
    batch_size: int
    pad_id: int
    input_names: list[str]

    def _setup_tokenizer(self, tokenizer) -> None:  # noqa: ANN001 - tokenizers.Tokenizer
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=self.max_length)
        self.tokenizer = tokenizer

    def states(self, feeds: dict[str, np.ndarray]) -> np.ndarray:
        """``(batch, width, dim)`` float32 last-layer token states for int64 ``feeds``."""
        raise NotImplementedError

    @property
    def dim(self) -> int:
        """Embedding dimension (by encoding one text)."""
        return int(self.encode(["x"]).shape[1])

    def batches(self, texts: Sequence[str]) -> Iterator[tuple[np.ndarray, dict[str, np.ndarray]]]:
        """Yield ``(positions, feeds)`` for length-sorted batches of ``texts`` (longest first)."""
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
            feeds = dict(zip(FEEDS, (ids, mask, types)))
            yield positions, {name: feeds[name] for name in self.input_names}

    def _run(self, texts: Sequence[str], pooled: bool, tokens: bool) -> tuple[np.ndarray | None, list[np.ndarray]]:
        out: np.ndarray | None = None
        vectors: list[np.ndarray | None] = [None] * len(texts) if tokens else []
        for positions, feeds in self.batches(texts):
            states = self.states(feeds)
            mask = feeds["attention_mask"]
            if pooled:
                weights = mask[:, :, None].astype(np.float32)
                mean = (states * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
                if out is None:
                    out = np.empty((len(texts), mean.shape[1]), dtype=np.float32)
                out[positions] = mean
            if tokens:
                counts = mask.sum(axis=1)
                for row, pos in enumerate(positions):
                    vectors[pos] = l2_normalize(states[row, : int(counts[row])])
        return (None if out is None else l2_normalize(out)), [v for v in vectors if v is not None]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32 L2-normalised mean-pooled embeddings, input order."""
        pooled, _ = self._run(texts, pooled=True, tokens=False)
        return pooled if pooled is not None else np.zeros((0, self.dim), dtype=np.float32)

    def token_vectors(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Per text, ``(n_tokens, dim)`` float32 L2-normalised contextual token vectors (padding removed)."""
        return self._run(texts, pooled=False, tokens=True)[1]

    def encode_with_tokens(self, texts: Sequence[str]) -> tuple[np.ndarray, list[np.ndarray]]:
        """:meth:`encode` and :meth:`token_vectors` of the same texts from one forward pass."""
        pooled, vectors = self._run(texts, pooled=True, tokens=True)
        return (pooled if pooled is not None else np.zeros((0, self.dim), dtype=np.float32)), vectors


class OnnxMeanPoolEncoder(MeanPoolEncoder):
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
        fix = "re-create the export with export_onnx()"
        self.meta = read_json_object(meta_path, fix, f"ONNX export record ({META_FILE})")
        try:
            self.identity = ModelIdentity(**self.meta["model"])
        except (KeyError, TypeError):
            raise NclueError(f"{meta_path}: no usable 'model' record (the model's identity); {fix}") from None
        self.quantized = bool(self.meta.get("quantized", False))
        self.max_length = int(min(max_length, self.meta.get("max_length", max_length)))
        self.batch_size = int(batch_size)
        self.input_names: list[str] = list(self.meta["inputs"])
        self.pad_id = int(self.meta.get("pad_id", 0))
        self._setup_tokenizer(Tokenizer.from_file(str(self.onnx_dir / TOKENIZER_FILE)))
        options = ort.SessionOptions()
        options.intra_op_num_threads = int(intra_op_threads)
        options.inter_op_num_threads = int(inter_op_threads)
        # Idle intra-op threads sleep instead of spinning: a spinning pool holds every core for a
        # while after each run, and the NumPy/BLAS scoring that follows a query's encoding ran
        # 5x slower beside it (benchmarks/RESULTS.md, "one query at a time"). Values do not change.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
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

    def states(self, feeds: dict[str, np.ndarray]) -> np.ndarray:
        """Token states from the ONNX graph."""
        return self.session.run(None, feeds)[0]
