"""The fast tokenizer of a Hugging Face model directory, untruncated and unpadded (chunking and encoders share it)."""

from __future__ import annotations

import os
from pathlib import Path

from nclue.errors import NclueError


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
