"""The transformer's own PyTorch weights in bfloat16, mean-pooled like sentence-transformers.

Why: on CPUs with native bfloat16 dot products (AVX512-BF16, AMX) a bfloat16 matrix
product runs at about twice the fp32 rate, and bfloat16 keeps fp32's exponent range, so
the embeddings stay within cosine ≈ 0.9998 of fp32 (measured in ``benchmarks/encode.py``,
where the dev-benchmark top-10 agreement with exact fp32 is also reported). Weights are
loaded in bfloat16 with PyTorch's scaled-dot-product attention (``attn_implementation="sdpa"``);
token states are cast back to float32 before pooling and normalisation, which
:class:`~nclue.models.onnx_encoder.MeanPoolEncoder` does exactly as on the ONNX path.
On a CPU without native bfloat16 the same code runs but is slower than ``onnx``.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from nclue.errors import NclueError
from nclue.models.onnx_encoder import MeanPoolEncoder
from nclue.models.quiet_loading import no_loading_bars
from nclue.models.st_layout import read_layout
from nclue.models.tokenizer import load_tokenizer_dir


class Bf16MeanPoolEncoder(MeanPoolEncoder):
    """``AutoModel`` of a sentence-transformers directory in bfloat16 (mean pooling only)."""

    def __init__(self, model_path: str | os.PathLike[str], max_length: int | None = None, batch_size: int = 32) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import torch
        from transformers import AutoModel

        layout = read_layout(Path(model_path))
        if layout.pooling != "mean":
            raise NclueError(
                f"{model_path}: pooling mode is {layout.pooling!r}; the bfloat16 path implements mean pooling only — "
                "use --dense-backend torch for this model"
            )
        try:
            with no_loading_bars():
                self.model = AutoModel.from_pretrained(
                    str(layout.transformer_dir), dtype=torch.bfloat16, attn_implementation="sdpa"
                ).eval()
        except (OSError, ValueError) as exc:
            raise NclueError(f"{layout.transformer_dir}: cannot load the transformer ({exc})") from None
        self._torch = torch
        self.max_length = int(min(max_length or layout.max_seq_length, layout.max_seq_length))
        self.batch_size = int(batch_size)
        self.pad_id = int(getattr(self.model.config, "pad_token_id", None) or 0)
        names = ["input_ids", "attention_mask"]
        if getattr(self.model.config, "type_vocab_size", 0):
            names.append("token_type_ids")
        self.input_names = names
        self._setup_tokenizer(load_tokenizer_dir(layout.transformer_dir))
        self._dim = int(self.model.config.hidden_size)

    @property
    def dim(self) -> int:
        """Hidden size of the transformer."""
        return self._dim

    def states(self, feeds: dict[str, np.ndarray]) -> np.ndarray:
        """Token states of one batch, computed in bfloat16, returned as float32."""
        torch = self._torch
        with torch.inference_mode():
            inputs = {name: torch.from_numpy(value) for name, value in feeds.items()}
            return self.model(**inputs).last_hidden_state.float().numpy()
