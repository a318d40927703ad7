"""Prompt templates (``*.txt``) and their response parsers for the LLM judge."""

from __future__ import annotations

from importlib import resources


def template(name: str) -> str:
    """The text of prompt template ``name`` (a ``.txt`` file in this package)."""
    return resources.files(__package__).joinpath(f"{name}.txt").read_text(encoding="utf-8")
