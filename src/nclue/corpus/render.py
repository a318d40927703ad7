"""Page rendering under a pixel budget, shared by OCR (:mod:`nclue.corpus.ocr`) and packet images.

A PDF page may be any size (PDF allows 14,400 pt a side, PDFium more), so a scale chosen
for an ordinary page can ask for a multi-gigabyte bitmap. :func:`capped_scale` lowers the
scale just enough that the bitmap PDFium allocates (``ceil(width × scale)`` by
``ceil(height × scale)`` pixels) holds at most ``max_pixels`` pixels and no side longer than
``max_side``; a page that already fits keeps the asked scale exactly, and every side is at
least one pixel. A page whose size is zero, negative or not finite (a malformed MediaBox) is
not :func:`renderable`.
"""

from __future__ import annotations

import math

SHRINK = 1.0 - 1e-9
"""Factor applied until rounding no longer pushes the bitmap over the budget (rarely more than once)."""


def renderable(width_pt: float, height_pt: float) -> bool:
    """Whether a page of that size has an area to draw (both sides finite and positive)."""
    return math.isfinite(width_pt) and math.isfinite(height_pt) and width_pt > 0 and height_pt > 0


def bitmap_size(width_pt: float, height_pt: float, scale: float) -> tuple[int, int]:
    """``(width, height)`` in pixels of the bitmap PDFium allocates for a page rendered at ``scale``."""
    return math.ceil(width_pt * scale), math.ceil(height_pt * scale)


def fits(width_pt: float, height_pt: float, scale: float, max_pixels: int, max_side: int) -> bool:
    """Whether the page's bitmap at ``scale`` holds at most ``max_pixels`` pixels and no side over ``max_side``."""
    width, height = bitmap_size(width_pt, height_pt, scale)
    return width * height <= max_pixels and max(width, height) <= max_side


def capped_scale(
    width_pt: float, height_pt: float, scale: float, max_pixels: int, max_side: int | None = None
) -> float:
    """The render scale to use: ``scale`` when the page fits the budget, else the largest scale found that does.

    The page must be :func:`renderable` and ``max_pixels`` at least 2; ``max_side`` defaults to
    ``max_pixels`` (no separate limit on one side).
    """
    if not renderable(width_pt, height_pt):
        raise ValueError(f"page of {width_pt} × {height_pt} pt has no area to render")
    if max_pixels < 2:
        raise ValueError(f"pixel budget {max_pixels} is below 2")
    side = max_pixels if max_side is None else max_side
    if fits(width_pt, height_pt, scale, max_pixels, side):
        return scale
    # ceil(x) < x + 1, so (w·s + 1)(h·s + 1) ≤ max_pixels bounds the pixel count: the positive root
    # of area·s² + perimeter·s + 1 − max_pixels, written without cancellation.
    area, perimeter, spare = width_pt * height_pt, width_pt + height_pt, max_pixels - 1
    root = 2 * spare / (perimeter + math.sqrt(perimeter**2 + 4 * area * spare))
    reduced = min(scale, root, side / width_pt, side / height_pt)
    while not fits(width_pt, height_pt, reduced, max_pixels, side):
        reduced *= SHRINK
    return reduced
