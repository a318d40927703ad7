"""Caps against memory and time blow-ups from tiny inputs, and a packet import that survives hostile ids.

A 0.5 kB PDF page of 14,400 × 14,400 pt (or 10 × 14,400 pt) must not become a multi-gigabyte
bitmap for OCR or for a packet image; a system name of hundreds of arms is refused when parsed;
asking ``build`` for far more queries than the inventory supports stops drawing once every
condition set was drawn; a saved answers file with an item id ``__proto__`` still imports.
"""

from __future__ import annotations

import base64
import io
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pypdfium2 as pdfium
import pytest
from PIL import Image

from nclue.audit import packet
from nclue.bench import compose
from nclue.bench.construction_params import ComposeParams
from nclue.bench.inventory import Condition, Inventory
from nclue.corpus import ocr
from nclue.corpus.pdftext import extract_pdf
from nclue.corpus.render import bitmap_size, capped_scale
from nclue.errors import NclueError
from nclue.systems.names import MAX_ARGUMENTS, MAX_SYSTEMS, parse_name
from tests.robustness.robust_helpers import assert_clean

HUGE = (14_400.0, 14_400.0)
TALL = (10.0, 14_400.0)
OCR_LIMIT = (50_000_000, 32_767)
"""At most 50 million pixels (50 MB greyscale) and Tesseract's longest side: a bitmap beyond is a blow-up."""


def one_page_pdf(path: Path, size: tuple[float, float]) -> Path:
    """A one-page PDF of ``size`` points with nothing drawn on it (a few hundred bytes)."""
    pdf = pdfium.PdfDocument.new()
    pdf.new_page(*size)
    pdf.save(str(path))
    pdf.close()
    return path


def decoded(uri: str) -> Image.Image:
    """The image of a ``data:image/jpeg;base64,`` URI."""
    return Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1])))


class SizeGuard:
    """A page that refuses to render a bitmap over :data:`OCR_LIMIT` (before allocating it)."""

    def __init__(self, page: object) -> None:
        self.page = page

    def get_size(self) -> tuple[float, float]:
        return self.page.get_size()

    def render(self, scale: float, **options: object) -> object:
        width, height = bitmap_size(*self.page.get_size(), scale)
        assert width * height <= OCR_LIMIT[0] and max(width, height) <= OCR_LIMIT[1], (width, height)
        return self.page.render(scale=scale, **options)


# ---- the shared helper -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("size", "scale", "budget", "side"),
    [(HUGE, 300 / 72, 40_000_000, 32_767), (TALL, 42.0, 8_000_000, 65_500), ((0.001, 1e6), 1e3, 8_000_000, 65_500)],
)
def test_capped_scale_fits_the_budget_and_draws_every_side(size, scale, budget, side) -> None:  # noqa: ANN001
    width, height = bitmap_size(*size, capped_scale(*size, scale, budget, side))
    assert 1 <= width and 1 <= height and width * height <= budget and max(width, height) <= side


def test_capped_scale_leaves_an_ordinary_page_untouched() -> None:
    for size in ((595.0, 842.0), (612.0, 792.0), (1191.0, 1684.0)):  # A4, Letter, A2
        assert capped_scale(*size, ocr.DEFAULT_DPI / 72, ocr.MAX_OCR_PIXELS, ocr.MAX_OCR_SIDE) == ocr.DEFAULT_DPI / 72
    assert capped_scale(595.0, 842.0, 2000 / 595, packet.MAX_IMAGE_PIXELS, packet.MAX_IMAGE_SIDE) == 2000 / 595


# ---- 1. OCR --------------------------------------------------------------------------------------


def test_ocr_renders_a_huge_page_within_the_pixel_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shapes: list[tuple[int, int]] = []
    monkeypatch.setattr(ocr, "ocr_png", lambda png, lang="eng": shapes.append(Image.open(io.BytesIO(png)).size) or "")
    pdf = pdfium.PdfDocument(str(one_page_pdf(tmp_path / "huge.pdf", HUGE)))
    assert ocr.ocr_page(SizeGuard(pdf[0])) == ""
    pdf.close()
    ((width, height),) = shapes
    assert width * height <= ocr.MAX_OCR_PIXELS and width == height > 6000


def test_ocr_of_a_tall_narrow_page_stays_within_tesseract_limits(tmp_path: Path) -> None:
    if ocr.tesseract_path() is None:
        pytest.skip("tesseract is not installed")
    doc = extract_pdf(one_page_pdf(tmp_path / "tall.pdf", TALL), ocr="force")
    assert (doc.status, doc.error, doc.methods) == ("ok", None, ["ocr"])


@pytest.mark.parametrize("size", [(float("nan"), 100.0), (float("inf"), 100.0)])
def test_a_page_without_a_finite_area_yields_no_text_and_no_image(size: tuple[float, float]) -> None:
    pdf = pdfium.PdfDocument.new()
    page = pdf.new_page(*size)
    assert ocr.ocr_page(page) == "" and packet.page_image(page, 420, 40) == ""
    pdf.close()


# ---- 2. packet page images -----------------------------------------------------------------------


class OneDocStore:
    """The part of a page store :func:`nclue.audit.packet.render_images` reads: the document table."""

    def __init__(self, path: Path) -> None:
        from nclue.io import sha256_file

        self.docs = pa.table({"doc_id": ["d"], "path": [path.name], "sha256": [sha256_file(path)]})


def test_packet_image_of_a_tall_narrow_page_is_capped(tmp_path: Path) -> None:
    path = one_page_pdf(tmp_path / "tall.pdf", TALL)
    images = packet.render_images(OneDocStore(path), tmp_path, {"i1:1": ("d", 1)}, 420, lambda *a: None)
    assert images["refs"] == {"i1:1": 0}
    width, height = decoded(images["data"][0]).size
    assert width * height <= packet.MAX_IMAGE_PIXELS and height <= packet.MAX_IMAGE_SIDE and width >= 1


def test_packet_image_of_an_ordinary_page_keeps_its_width(tmp_path: Path) -> None:
    path = one_page_pdf(tmp_path / "a4.pdf", (595.0, 842.0))
    images = packet.render_images(OneDocStore(path), tmp_path, {"i1:1": ("d", 1)}, 420, lambda *a: None)
    assert decoded(images["data"][0]).size == (420, 595)


# ---- 3. system names -----------------------------------------------------------------------------


def test_a_299_arm_name_is_refused_when_parsed(cli, indexed: Path) -> None:  # noqa: ANN001
    name = "rrf(" + ", ".join(f"rerank(bm25.joint, minilm-cross, pool={i + 1})" for i in range(299)) + ")"
    out = assert_clean(
        cli("search", indexed, '"a b"; "c d"', "-s", name),
        2,
        "rrf(...) has 299 arguments",
        f"more than {MAX_ARGUMENTS}",
    )
    assert "'rrf(rerank(bm25.joint, minilm-cross, pool=1), rerank(bm25.jo'…" in out


def test_many_operations_spread_over_narrow_calls_are_refused() -> None:
    arm = "rrf(" + ", ".join(["bm25.and"] * MAX_ARGUMENTS) + ")"
    with pytest.raises(NclueError, match=f"{3 * MAX_ARGUMENTS} backbone operations, more than {MAX_SYSTEMS}"):
        parse_name(f"rrf({arm}, {arm}, {arm})")


def test_names_at_the_caps_still_parse() -> None:
    assert len(parse_name("rrf(" + ", ".join(["bm25.and"] * MAX_ARGUMENTS) + ")").systems) == MAX_ARGUMENTS
    half = "rrf(" + ", ".join(["bm25.and"] * (MAX_SYSTEMS // 2)) + ")"
    assert len(parse_name(f"rrf({half}, {half})").systems) == 2


# ---- 4. far more queries than the inventory supports -----------------------------------------------


def tiny_inventory() -> Inventory:
    """Four documents and five conditions: a few dozen condition sets in all."""
    pages = [
        {0: (1,), 1: (2,), 2: (1,)},
        {0: (2,), 1: (1,), 3: (1,)},
        {0: (3,), 2: (2,)},
        {1: (3,), 3: (2,)},
        {2: (3,)},
    ]
    return Inventory(
        doc_ids=[f"d{i}" for i in range(4)],
        n_pages=np.full(4, 5),
        conditions=[Condition(name=f"c{i}", aliases=(f"c{i}",), key=(f"w{i}",), heading_df=1) for i in range(5)],
        pages=pages,
    )


def test_asking_for_far_more_queries_stops_drawing_once_every_set_was_drawn(monkeypatch: pytest.MonkeyPatch) -> None:
    real, calls = compose._share_word, [0]

    def counted(*args: object) -> bool:
        calls[0] += 1
        if calls[0] > 100_000:
            raise AssertionError(
                "still drawing after 100,000 word checks (every condition set is drawn within a few thousand)"
            )
        return real(*args)

    monkeypatch.setattr(compose, "_share_word", counted)
    inventory = tiny_inventory()
    many = compose.generate(inventory, ComposeParams(n_queries=100_000, max_contested=None))
    few = compose.generate(inventory, ComposeParams(n_queries=50, max_contested=None))
    assert [it.conditions for it in many] == [it.conditions for it in few] and many


@pytest.mark.parametrize("p_three", [0.0, 0.35, 1.0])
def test_stopping_early_draws_exactly_the_same_candidates(monkeypatch: pytest.MonkeyPatch, p_three: float) -> None:
    params = ComposeParams(n_queries=30, max_contested=None, p_three=p_three)
    early = compose.generate(tiny_inventory(), params)
    monkeypatch.setattr(compose, "STALL", 10**12)
    full = compose.generate(tiny_inventory(), params)
    assert [(it.conditions, it.quality) for it in early] == [(it.conditions, it.quality) for it in full]
    assert (
        compose.select(early, replace(params, n_queries=5))[0] == compose.select(full, replace(params, n_queries=5))[0]
    )


# ---- 5. packet.js import of a hostile item id ------------------------------------------------------


@pytest.mark.slow
def test_import_survives_an_item_id_proto(tmp_path: Path) -> None:
    from playwright.sync_api import expect

    from nclue.audit.audit_params import SampleParams
    from nclue.audit.sample import sample
    from tests.audit.simulate import answers, hostile_release, payload_of, write_export
    from tests.audit.test_browser import ARGS, CHROMIUM, open_packet, tid

    if not CHROMIUM.is_file():
        pytest.fail("Debian's chromium is missing: run `make system-deps` (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    coll, bench = hostile_release(tmp_path)
    sample(bench, tmp_path / "audit", SampleParams(pairs=1))
    summary = packet.build_packet(tmp_path / "audit", coll, tmp_path / "p.html")
    payload = payload_of(tmp_path / "audit", summary.packet_id)
    planned = answers(payload)
    hostile = {"id": "__proto__", "status": "accepted", "conditions": [{"id": "__proto__", "answer": True}]}
    export = write_export(tmp_path / "answers.json", payload, "A", [hostile, *planned])
    assert json.loads(export.read_text())["items"][0]["id"] == "__proto__"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        context, page = open_packet(browser, tmp_path / "p.html")
        tid(page, "import").set_input_files(str(export))
        n = len(planned)
        expect(tid(page, "progress")).to_have_text(f"Accepted {n} of {n}")
        assert page.evaluate("() => ({}).status === undefined && ({}).conditions === undefined")
        assert not page.errors
        context.close()
        browser.close()
