"""A static (model2vec) encoder distilled locally from a sentence-transformers model.

Distillation (Tulkens & van Dongen, *Model2Vec*, 2024; ``model2vec.distill.distill``)
embeds every vocabulary token with the source transformer, reduces with PCA to
``pca_dims`` and applies SIF/Zipf token weighting; a text's embedding is then the mean
of its tokens' static vectors — no transformer at encode time. The distilled model is
cached under ``cache_dir()/static/<source-key>-pca<dims>/`` so it is built once.
Static models have no contextual token vectors, so late interaction is not offered.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from nclue.errors import NclueError
from nclue.models.identity import ModelIdentity, cache_dir, model_identity
from nclue.models.onnx_encoder import l2_normalize
from nclue.models.st_layout import read_layout


def distill_static(
    model_path: str | os.PathLike[str], out_dir: str | os.PathLike[str] | None = None, pca_dims: int = 256
) -> Path:
    """Distil (or reuse the cached distillation of) ``model_path`` into a model2vec directory."""
    source = Path(model_path)
    layout = read_layout(source)
    identity = model_identity(source)
    target = Path(out_dir) if out_dir is not None else cache_dir() / "static" / f"{identity.key}-pca{pca_dims}"
    if (target / "config.json").is_file():
        return target
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        from model2vec.distill import distill
    except ImportError as exc:
        raise NclueError(f"static distillation needs model2vec's distill extra ({exc}); install `skeletoken`") from None
    saved = np.random.get_state()
    np.random.seed(0)  # sklearn's randomized PCA solver draws from the global state: fix it, then restore it
    try:
        static = distill(model_name=str(layout.transformer_dir), pca_dims=pca_dims, device="cpu")
    finally:
        np.random.set_state(saved)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        static.save_pretrained(str(tmp))
        (tmp / "nclue_source.txt").write_text(f"{identity.name}\t{identity.sha256}\n", encoding="utf-8")
        os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


class StaticEncoder:
    """model2vec ``StaticModel`` behind nclue's encoder interface."""

    backend = "static"

    def __init__(self, model_path: str | os.PathLike[str], pca_dims: int = 256, batch_size: int = 1024) -> None:
        from model2vec import StaticModel

        source = Path(model_path)
        self.source_identity = model_identity(source)
        self.static_dir = distill_static(source, pca_dims=pca_dims)
        self.model = StaticModel.from_pretrained(str(self.static_dir), force_download=False)
        self.identity = ModelIdentity(
            name=f"{self.source_identity.name}-static{pca_dims}", sha256=model_identity(self.static_dir).sha256
        )
        self.max_length = int(read_layout(source).max_seq_length)
        self.batch_size = int(batch_size)

    @property
    def dim(self) -> int:
        """Embedding dimension."""
        return int(self.model.dim)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32 L2-normalised embeddings, input order."""
        if not len(texts):
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self.model.encode(list(texts), batch_size=self.batch_size, max_length=None, use_multiprocessing=False)
        return l2_normalize(vectors)

    def token_vectors(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Not available: a static model has no contextual token vectors."""
        raise NclueError(
            "the static backend has no contextual token vectors; use --backend torch or onnx for late interaction"
        )
