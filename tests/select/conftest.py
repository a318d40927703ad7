"""Fixtures for coverage-selection tests: a bag-of-words hashing encoder and task-set copies."""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "coverage"


class HashingEncoder:
    """Deterministic stand-in for MiniLM: hashed bag of lower-cased words, L2-normalised."""

    backend = "hashing"
    max_length = 512
    batch_size = 0

    def __init__(self, dim: int = 64) -> None:
        from nclue.models.identity import ModelIdentity

        self.dim = dim
        self.calls = 0
        self.identity = ModelIdentity(f"hashing-test-{dim}", "0" * 64)

    def encode(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                out[i, int(hashlib.sha256(word.encode()).hexdigest()[:8], 16) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms > 0, norms, 1.0)


@pytest.fixture
def encoder() -> HashingEncoder:
    return HashingEncoder()


@pytest.fixture
def task_dir(tmp_path: Path) -> Path:
    """A writable copy of the hand-made example task set."""
    target = tmp_path / "tasks"
    shutil.copytree(EXAMPLES, target)
    return target
