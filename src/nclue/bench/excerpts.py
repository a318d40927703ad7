"""Evidence excerpts: the words around a condition's first surface form on a page.

Judges (embedding, LLM) and the dataset card read these short windows instead of whole
pages: a page is long and mixed, while the question is whether *this* passage is about the
condition. A surface form matches case-insensitively with any run of spaces, hyphens or
soft hyphens between its words.
"""

from __future__ import annotations

import re
from functools import lru_cache

_SPACE = re.compile(r"\s+")


@lru_cache(maxsize=4096)
def alias_pattern(aliases: tuple[str, ...]) -> re.Pattern[str]:
    """One regex matching any alias as whole words (longest alias first)."""
    parts = []
    for alias in sorted(set(aliases), key=lambda a: (-len(a), a)):
        words = [re.escape(w) for w in re.split(r"[\s\-]+", alias) if w]
        parts.append(r"[\s\-\u00ad\ufffe]+".join(words))
    return re.compile(r"(?<![A-Za-z])(?:" + "|".join(parts) + r")(?![A-Za-z])", re.IGNORECASE)


def window(text: str, aliases: tuple[str, ...], words: int = 60) -> str:
    """About ``words`` words centred on the first alias occurrence (the page start if none)."""
    match = alias_pattern(tuple(aliases)).search(text)
    centre = match.start() if match else 0
    before = _SPACE.split(text[:centre])[-(words // 2) :] if centre else []
    after = _SPACE.split(text[centre:])[: words - len(before)]
    return " ".join(w for w in before + after if w)


def mentions(text: str, aliases: tuple[str, ...]) -> bool:
    """True iff some alias occurs on the page."""
    return alias_pattern(tuple(aliases)).search(text) is not None
