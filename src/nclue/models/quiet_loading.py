"""Loading Hugging Face models without their "Loading weights" progress bar.

Why: ``transformers`` draws a bar on stderr for every ``from_pretrained``; a library call and a
command like ``make demo`` that loads several models printed one per load, between nclue's own
progress bars. The bar setting is global to ``transformers``, so it is restored afterwards.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def no_loading_bars() -> Iterator[None]:
    """Within the block, ``transformers`` draws no progress bar; the previous setting is restored."""
    from transformers.utils import logging as hf_logging

    shown = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if shown:
            hf_logging.enable_progress_bar()
