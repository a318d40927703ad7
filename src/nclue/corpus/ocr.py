"""OCR fallback for pages without a text layer: pypdfium2 renders, Tesseract reads.

The page is rendered in greyscale at ``dpi`` (300 by default, Tesseract's recommended
input resolution), encoded as PNG and piped to ``tesseract stdin stdout -l LANG --psm 3``
(fully automatic page segmentation). ``OMP_THREAD_LIMIT=1`` keeps Tesseract on one core,
so a process pool does not oversubscribe the CPU and output does not depend on threading.

The bitmap is capped at :data:`MAX_OCR_PIXELS` pixels and :data:`MAX_OCR_SIDE` pixels a side
(:func:`nclue.corpus.render.capped_scale`): an A4 or Letter page at 300 dpi (about 8.7 million
pixels) and anything up to A2 (34.8 million) keep the full resolution, while a larger page
(PDF allows 14,400 pt a side: 3.6 billion pixels at 300 dpi) is read at the highest resolution
that fits, so one page costs at most a few hundred MB and a bounded OCR time. A page with no
area has nothing to read and yields no text.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess

from nclue.corpus.render import capped_scale, renderable
from nclue.errors import NclueError

DEFAULT_DPI = 300
MAX_OCR_PIXELS = 40_000_000
"""Most pixels a page is rendered with for OCR (40 MB greyscale; A2 at 300 dpi fits)."""
MAX_OCR_SIDE = 32_767
"""Longest side, in pixels, of a page rendered for OCR: Tesseract refuses larger images."""
DEFAULT_LANG = "eng"
INSTALL_HINT = "install it with `apt-get install -y tesseract-ocr` (or `brew install tesseract`), or pass --ocr off"


def tesseract_path() -> str | None:
    """Path of the ``tesseract`` binary, or ``None`` when it is not installed."""
    return shutil.which("tesseract")


def require_tesseract() -> str:
    """Return the ``tesseract`` path or raise :class:`NclueError` saying how to install it."""
    path = tesseract_path()
    if path is None:
        raise NclueError(f"tesseract not found on PATH; {INSTALL_HINT}")
    return path


def ocr_png(png: bytes, lang: str = DEFAULT_LANG) -> str:
    """Text Tesseract reads from one PNG image (form feeds removed, outer whitespace stripped)."""
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    result = subprocess.run(
        [require_tesseract(), "stdin", "stdout", "-l", lang, "--psm", "3"],
        input=png,
        capture_output=True,
        env=env,
        check=False,
    )
    if result.returncode != 0:
        message = result.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RuntimeError(f"tesseract failed: {message[-1] if message else result.returncode}")
    return result.stdout.decode("utf-8", "replace").replace("\f", "").strip()


def ocr_scale(width_pt: float, height_pt: float, dpi: int = DEFAULT_DPI) -> float:
    """Render scale for OCR of a page of that size: ``dpi / 72``, lowered to fit the pixel caps.

    The caps are :data:`MAX_OCR_PIXELS` and :data:`MAX_OCR_SIDE`.
    """
    return capped_scale(width_pt, height_pt, dpi / 72.0, MAX_OCR_PIXELS, MAX_OCR_SIDE)


def ocr_page(page: object, dpi: int = DEFAULT_DPI, lang: str = DEFAULT_LANG) -> str:
    """OCR one ``pypdfium2.PdfPage``: render in greyscale at :func:`ocr_scale`, then :func:`ocr_png`.

    Returns the page's text, or ``""`` for a page with no area (zero, negative or infinite size).
    """
    width, height = page.get_size()
    if not renderable(width, height):
        return ""
    bitmap = page.render(scale=ocr_scale(width, height, dpi), grayscale=True)
    buffer = io.BytesIO()
    bitmap.to_pil().save(buffer, format="PNG")
    return ocr_png(buffer.getvalue(), lang=lang)
