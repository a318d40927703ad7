"""Defaults of the evidence layer, in one light module (the CLI reads them without importing NumPy)."""

from __future__ import annotations

DEFAULT_SIGNALS: tuple[str, ...] = ("head", "head_high", "head_level", "dense", "bm25", "phrase", "role")
"""The signals ``nclue evidence fit`` fits by default (every signal of :mod:`nclue.evidence.signals` but ``maxsim``)."""
