"""The delta-plane labels and the label figure, checked on the rendered pixels and text extents."""

from __future__ import annotations

import io
import itertools
import json
import shutil
from pathlib import Path

import numpy as np
import pypdfium2 as pdfium
import pytest
from PIL import Image

from nclue.report.label import LabelExample, figure, render_figure
from nclue.report.plots import delta_plane_figure, delta_plane_plot, label_boxes
from nclue.scoring.results import Contrast
from tests.report.contrasts import make_contrast

SAVED_DPI = 200  # plots.save_figure writes PNGs at 200 dpi


def _clustered() -> dict[str, Contrast]:
    """Sixteen contrasts within ±2.5 pp of the origin (with CI whiskers) and two far away."""
    rng = np.random.default_rng(7)
    out = {
        f"Contrast {i}: dense.decompose(min)": make_contrast(x, y, (y - 6.0, y + 6.0))
        for i, (x, y) in enumerate(rng.uniform(-2.5, 2.5, size=(16, 2)))
    }
    out["Text reranking"] = make_contrast(-56.3, -54.1, (-72.0, -39.0))
    out["Complementarity"] = make_contrast(20.8, 33.3)
    return out


def test_delta_plane_labels_overlap_neither_each_other_nor_the_points() -> None:
    import matplotlib.pyplot as plt

    contrasts = _clustered()
    fig = delta_plane_figure(contrasts)
    fig.set_dpi(SAVED_DPI)  # measure at the resolution the PNG is written at
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    labels = {t.get_text(): t.get_window_extent(renderer) for t in ax.texts}
    assert set(labels) == set(contrasts)
    for (a, box_a), (b, box_b) in itertools.combinations(labels.items(), 2):
        assert not box_a.overlaps(box_b), (a, b)
    (markers,) = [line for line in ax.lines if line.get_marker() == "o"]
    centres = ax.transData.transform(np.column_stack(markers.get_data()))
    radius = markers.get_markersize() / 2 * fig.dpi / 72
    assert len(centres) == len(contrasts)
    frame = ax.get_window_extent(renderer)
    for name, box in labels.items():
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1, name
        covered = (
            (box.x0 - radius < centres[:, 0])
            & (centres[:, 0] < box.x1 + radius)
            & (box.y0 - radius < centres[:, 1])
            & (centres[:, 1] < box.y1 + radius)
        )
        assert not covered.any(), (name, np.flatnonzero(covered))
    # a label moved away from its point is joined to it: a leader from the marker's edge to the label's box
    leaders = [
        ax.transData.transform(np.column_stack(line.get_data())) for line in ax.lines if line.get_gid() == "leader"
    ]
    slack = 1.5 * fig.dpi / 72  # text extents shift by a pixel or two between resolutions
    for (name, box), centre in zip(labels.items(), centres):
        nearest = np.clip(centre, (box.x0, box.y0), (box.x1, box.y1))
        if np.hypot(*(nearest - centre)) < 8 * fig.dpi / 72:
            continue
        assert any(
            np.hypot(*(start - centre)) <= radius + 1 and np.hypot(*(end - nearest)) <= slack for start, end in leaders
        ), name
    assert [tuple(b.extents) for b in label_boxes(fig)] == [tuple(b.extents) for b in labels.values()]
    plt.close(fig)


def test_delta_plane_plot_still_writes_its_files(tmp_path: Path) -> None:
    paths = delta_plane_plot(_clustered(), tmp_path / "plane")
    assert paths == [tmp_path / "plane.png", tmp_path / "plane.pdf"]
    with Image.open(paths[0]) as img:
        assert img.width > 1000 and img.height > 800
    assert paths[1].read_bytes()[:4] == b"%PDF"


def _first_page_with(pdf: Path, word: str) -> int:
    document = pdfium.PdfDocument(str(pdf))
    try:
        return next(i + 1 for i in range(len(document)) if word in document[i].get_textpage().get_text_range().lower())
    finally:
        document.close()


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """``(start, length)`` of every run of true values in a 1-D boolean array."""
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return list(zip(starts.tolist(), (ends - starts).tolist()))


@pytest.fixture
def label_case(small_collection: Path, small_pdf_dir: Path, tmp_path: Path) -> tuple[LabelExample, Path]:
    """A real three-condition example: gold ``verse`` has every condition, the grade-2 subset ``covington``
    lacks "line numbers"; the collection points at the 12 real PDFs."""
    coll = tmp_path / "collection"
    shutil.copytree(small_collection, coll)
    meta = json.loads((coll / "collection.json").read_text())
    meta["pdf_dir"] = str(small_pdf_dir)
    (coll / "collection.json").write_text(json.dumps(meta))
    conditions = ("indentation", "line numbers", "footnote")
    docs = {
        "verse": "texlive-humanities-doc/texlive-doc/latex/verse/verse",
        "covington": "texlive-humanities-doc/texlive-doc/latex/covington/covington",
    }
    gold = {c: _first_page_with(small_pdf_dir / f"{docs['verse']}.pdf", c) for c in conditions}
    subset = {c: _first_page_with(small_pdf_dir / f"{docs['covington']}.pdf", c) for c in ("indentation", "footnote")}
    with pytest.raises(StopIteration):
        _first_page_with(small_pdf_dir / f"{docs['covington']}.pdf", "line numbers")
    rows = (
        {"label": "Gold", "grade": 3, "doc_id": docs["verse"], "shown": gold},
        {"label": "Subset", "grade": 2, "doc_id": docs["covington"], "shown": subset},
    )
    aliases = {c: (c,) for c in conditions}
    return LabelExample("q7", conditions, '"indentation"; "line numbers"; "footnote"', aliases, rows), coll


def test_label_figure_is_tight_with_legible_thumbnails(label_case, tmp_path: Path) -> None:  # noqa: ANN001
    example, coll = label_case
    written = render_figure(example, coll, tmp_path / "out")
    crops = [p for p in written if p.name.startswith("label_") and p.stem != "label_figure"]
    assert len(crops) == 5 and written[-2:] == [
        tmp_path / "out" / "label_figure.png",
        tmp_path / "out" / "label_figure.pdf",
    ]
    with Image.open(written[-2]) as img:
        pixels = np.asarray(img.convert("L"))
    # no empty band: every run of blank pixel rows is shorter than 0.3 in (titles and gaps only)
    blank = (pixels > 245).all(axis=1)
    assert max(length for _, length in _runs(blank)) < 0.3 * SAVED_DPI
    # one row of thumbnail frames per condition: the top and bottom spines are the long dark horizontal lines
    widths = {y: max((n for _, n in _runs(pixels[y] < 90)), default=0) for y in range(pixels.shape[0])}
    spine_rows = [y for y, n in widths.items() if n >= 1000]
    spines = [ys for ys in np.split(np.array(spine_rows), np.flatnonzero(np.diff(spine_rows) > 1) + 1) if ys.size]
    assert len(spines) == 2 * len(example.conditions)
    # legible: a thumbnail shows its crop at (at least 95% of) the page's printed size
    thumb = min(max(widths[y] for y in ys) for ys in spines)
    for crop in crops:
        with Image.open(crop) as img:
            crop_inches = img.width / img.info["dpi"][0]
            rgb = np.asarray(img.convert("RGB")).reshape(-1, 3).astype(int)
        assert thumb / crop_inches >= 0.95 * SAVED_DPI, crop.name
        marker = (rgb[:, 0] > 230) & (rgb[:, 1] > 200) & (rgb[:, 2] < 190)  # the yellow highlight is in the crop
        assert marker.sum() > 200, crop.name
    # tight: the figure is no taller than its rows of thumbnails plus their titles and the heads (0.7 in each)
    frames = sum(ys[-1] - ys[0] for ys in (np.concatenate(spines[i : i + 2]) for i in range(0, len(spines), 2)))
    assert pixels.shape[0] <= frames + 0.7 * SAVED_DPI * (len(example.conditions) + 1)


def _synthetic_crops(tmp_path: Path) -> tuple[LabelExample, dict[tuple[int, str], Path]]:
    """A three-condition example with drawn page crops (no PDFs): rows of dark 'text' lines, one crop shorter."""
    from PIL import ImageDraw

    conditions = ("critical apparatus", "line numbering", "footnotes")
    rows = (
        {"label": "Gold", "grade": 3, "doc_id": "pkg/doc/gold-manual", "shown": dict(zip(conditions, (3, 7, 12)))},
        {
            "label": "Subset",
            "grade": 2,
            "doc_id": "pkg/doc/subset-manual",
            "shown": {"critical apparatus": 2, "footnotes": 9},
        },
    )
    crops = {}
    for r, row in enumerate(rows):
        for c in row["shown"]:
            img = Image.new("RGB", (1200, 470 if (r, c) == (1, "footnotes") else 510), "white")
            draw = ImageDraw.Draw(img)
            for y in range(20, img.height - 30, 36):
                draw.rectangle((20, y, 1150, y + 14), fill=(40, 40, 40))
            crops[(r, c)] = tmp_path / f"crop_{r}_{c.replace(' ', '_')}.png"
            img.save(crops[(r, c)], dpi=(216, 216))
    long = "; ".join(f'"{c} with a much longer surface form than usual"' for c in conditions) * 3
    return LabelExample("q7", conditions, long, {c: (c,) for c in conditions}, rows), crops


def test_label_figure_titles_are_not_clipped_or_overlapping(tmp_path: Path) -> None:
    import matplotlib.pyplot as plt

    example, crops = _synthetic_crops(tmp_path)
    fig = figure(example, crops)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=SAVED_DPI)  # no bbox_inches: the figure itself must hold its texts
    renderer = fig.canvas.get_renderer()
    page = fig.bbox
    texts = [(t.get_text(), t.get_window_extent(renderer)) for t in fig.texts]
    axes = [ax.get_window_extent(renderer) for ax in fig.axes]
    assert len(axes) == 2 * len(example.conditions)
    for text, box in texts:
        assert page.x0 <= box.x0 and box.x1 <= page.x1 and page.y0 <= box.y0 and box.y1 <= page.y1, text
        assert not any(box.overlaps(a) for a in axes), text
    for (a, box_a), (b, box_b) in itertools.combinations(texts, 2):
        assert not box_a.overlaps(box_b), (a, b)
    # the frames of a row share their height and top, and the figure is no taller than its content
    for left, right in zip(axes[0::2], axes[1::2]):
        assert abs(left.y1 - right.y1) < 1 and abs(left.height - right.height) < 1
    buffer.seek(0)
    with Image.open(buffer) as img:
        blank = (np.asarray(img.convert("L")) > 245).all(axis=1)
    assert max(length for _, length in _runs(blank)) < 0.3 * SAVED_DPI
    plt.close(fig)
