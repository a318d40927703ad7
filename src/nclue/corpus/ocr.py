"""OCR fallback for pages without a text layer: pypdfium2 renders, Tesseract reads.

The page is rendered in greyscale at ``dpi`` (300 by default, Tesseract's recommended
input resolution), encoded as PNG and piped to ``tesseract stdin stdout -l LANG --psm 3``
(fully automatic page segmentation). ``OMP_THREAD_LIMIT=1`` keeps Tesseract on one core,
so a process pool does not oversubscribe the CPU and output does not depend on threading.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess

from nclue.errors import NclueError

DEFAULT_DPI = 300
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


def ocr_page(page: object, dpi: int = DEFAULT_DPI, lang: str = DEFAULT_LANG) -> str:
    """OCR one ``pypdfium2.PdfPage``: render at ``dpi`` in greyscale, then :func:`ocr_png`."""
    bitmap = page.render(scale=dpi / 72.0, grayscale=True)
    buffer = io.BytesIO()
    bitmap.to_pil().save(buffer, format="PNG")
    return ocr_png(buffer.getvalue(), lang=lang)
