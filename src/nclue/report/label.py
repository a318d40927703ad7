"""The label example: the seed's Table S6 and its figure (``docs/report.md#label-example``).

:func:`select_example` picks one query with a seeded draw (``default_rng(seed)``) among the
three-condition queries that have a gold document and natural subsets of grade 2 and grade
1 (two-condition queries with a gold and a grade-1 subset when there is none), and follows
it across one gold and two subsets: per condition, the evidence page that the qrels store
(for the gold, the first distinct-page assignment in page order; for a subset, its first
evidence page) or a dash where the document has none. Only the release is read, so the
table is reproducible from the frozen inputs.

:func:`render_figure` renders those pages of the actual PDFs with pypdfium2 (the collection
records the PDF folder in ``collection.json`` and each document's relative ``path`` in
``docs.parquet``), highlights every occurrence of the condition's surface forms found by
PDFium's text search, crops a window of the text block around the first one
(:func:`render_crop`) and writes one PNG per cell plus ``label_figure.png``/``.pdf``
(:func:`figure`): the gold and the grade-2 subset side by side, one row per condition, the page
text at its printed size.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from nclue.errors import NclueError
from nclue.tables import Table, Tabular

if TYPE_CHECKING:
    from nclue.release import Release

SCALE = 3.0
"""Render scale of the evidence pages (pixels per PDF point: 216 dpi)."""
CROP_WIDTH = 400.0
CROP_HEIGHT = 170.0
"""Size (PDF points) of a page crop: a full line of most text blocks, about 13 lines of 10-point text."""
LINE = 14.0
"""How far (points) a crop edge may move out to fall between two text lines."""
MARGIN = 6.0
"""Blank margin (points) a crop keeps around the page's text block."""
INK = 200
"""Grey level below which a rendered pixel is text (the text block's extent)."""
HIGHLIGHT = (255, 214, 0, 110)
SIDE, GAP, PAD, ROW_GAP = 0.1, 0.3, 0.08, 0.2
"""Label figure layout (inches): side margin, gap between columns, padding under a text block, gap under a row."""


@dataclass(frozen=True)
class LabelExample(Tabular):
    """One query followed across a gold and two subsets (``rows``: label, grade, doc_id, shown page per condition)."""

    qid: str
    conditions: tuple[str, ...]
    text: str
    aliases: Mapping[str, tuple[str, ...]]
    rows: tuple[dict, ...]

    def sections(self) -> Iterator[tuple[str, str, Table]]:
        """``(file key, title, table)``."""
        yield "table_s6_label_example", "Label example (Table S6)", self.table()

    def tables(self) -> list[Table]:
        return [self.table()]

    def table(self) -> Table:
        body = tuple(
            (
                f"{row['label']} g={row['grade']}",
                row["doc_id"],
                *(f"✓ p.{row['shown'][c]}" if row["shown"].get(c) else "—" for c in self.conditions),
            )
            for row in self.rows
        )
        return Table(
            ("Label", "Target (doc_id)", *self.conditions),
            body,
            "ll" + "c" * len(self.conditions),
            f"Query {self.qid} ({self.text}) across one gold and two natural subsets: the evidence page the "
            "qrels store for each condition (a dash: the inventory holds no page of that document for it).",
            number="S6",
        )

    def to_json(self) -> dict:
        return {
            "qid": self.qid,
            "conditions": list(self.conditions),
            "text": self.text,
            "rows": [dict(r) for r in self.rows],
        }


def _assignment(sets: Sequence[Sequence[int]]) -> tuple[int, ...] | None:
    """The first injective choice of one page per condition, in page order (``None`` if none exists)."""
    for pick in itertools.product(*(sorted(s) for s in sets)):
        if len(set(pick)) == len(pick):
            return pick
    return None


def select_example(release: Release, seed: int) -> LabelExample | None:
    """The seeded example query (see the module docstring); ``None`` when no query qualifies."""

    def grades(qid: str) -> dict[int, list]:
        out: dict[int, list] = {}
        for j in release.by_query[qid]:
            out.setdefault(-1 if j.label == "gold" else j.grade, []).append(j)
        return {g: sorted(js, key=lambda j: j.doc_id) for g, js in out.items()}

    wanted = [(3, (-1, 2, 1)), (2, (-1, 1))]
    for n, labels in wanted:
        candidates = [q for q in release.queries if q.n == n and all(g in grades(q.qid) for g in labels)]
        if candidates:
            query = candidates[int(np.random.default_rng(seed).integers(len(candidates)))]
            by_grade = grades(query.qid)
            rows = []
            for g in labels:
                j = by_grade[g][0]
                pages = {c: tuple(j.pages.get(c, ())) if j.pages else () for c in query.conditions}
                if g == -1:
                    pick = _assignment([pages[c] for c in query.conditions])
                    shown = dict(zip(query.conditions, pick)) if pick else {}
                else:
                    shown = {c: p[0] for c, p in pages.items() if p}
                rows.append(
                    {
                        "label": "Gold" if g == -1 else "Subset",
                        "grade": j.grade,
                        "doc_id": j.doc_id,
                        "pages": {c: list(p) for c, p in pages.items()},
                        "shown": shown,
                    }
                )
            aliases = {c: tuple(query.aliases.get(c, ())) or (c,) for c in query.conditions}
            return LabelExample(query.qid, query.conditions, query.text("clean_v2"), aliases, tuple(rows))
    return None


def _pdf_paths(collection_dir: Path) -> tuple[Path, dict[str, str]]:
    from nclue.corpus.store import META_FILE, PageStore, collection_record

    recorded = collection_record(collection_dir).get("pdf_dir")
    if not isinstance(recorded, str):
        raise NclueError(
            f"{collection_dir / META_FILE}: no 'pdf_dir'; the label figure needs the PDFs the collection was ingested from"
        )
    pdf_dir = Path(recorded)
    store = PageStore.open(collection_dir)
    return pdf_dir, dict(zip(store.docs.column("doc_id").to_pylist(), store.docs.column("path").to_pylist()))


def render_crop(pdf: Path, page_number: int, aliases: Sequence[str], out: Path) -> Path:
    """Write a PNG of ``pdf`` page ``page_number`` (1-based) at :data:`SCALE` and return ``out``.

    The crop is a window of :data:`CROP_WIDTH` × :data:`CROP_HEIGHT` points (less on a smaller
    page): it starts at the left edge of the page's text block, moved right just enough to hold
    the first alias match, and puts that match a third of the way down (the text block's top
    when nothing matches), reaching no further into the blank margins than :data:`MARGIN`.
    Its top edge then moves up and its bottom edge down to the nearest blank pixel row within
    :data:`LINE`, so no text line is cut across. Every match is highlighted line by line; the
    PNG records its resolution (``72 × SCALE`` dpi), so viewers show the page at its printed size.
    """
    import io

    import pypdfium2 as pdfium
    from PIL import Image, ImageDraw

    from nclue.io import atomic_write_bytes

    document = pdfium.PdfDocument(str(pdf))
    try:
        page = document[page_number - 1]
        height = page.get_size()[1]
        textpage = page.get_textpage()
        hits: list[list[tuple[float, float, float, float]]] = []
        for alias in sorted({a for a in aliases if a.strip()}, key=len, reverse=True):
            searcher = textpage.search(alias, match_case=False, match_whole_word=False)
            while (hit := searcher.get_next()) is not None:
                hits.append([textpage.get_rect(i) for i in range(textpage.count_rects(*hit))])
        image = page.render(scale=SCALE).to_pil().convert("RGBA")
    finally:
        document.close()
    ink = np.asarray(image.convert("L")) < INK
    cols, rows = np.flatnonzero(ink.any(axis=0)), np.flatnonzero(ink.any(axis=1))
    left_ink, top_ink, bottom_ink = (cols[0], rows[0], rows[-1]) if cols.size else (0, 0, image.height)
    overlay = Image.new("RGBA", image.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    for left, bottom, right, top in (rect for rects in hits for rect in rects):
        draw.rectangle(
            ((left - 1) * SCALE, (height - top - 1) * SCALE, (right + 1) * SCALE, (height - bottom + 1) * SCALE),
            fill=HIGHLIGHT,
            outline=(200, 120, 0, 255),
        )
    image = Image.alpha_composite(image, overlay).convert("RGB")
    first = [r for r in hits[0] if r[2] > r[0]] if hits else []
    hit_left, hit_right = (
        (min(r[0] for r in first) * SCALE, max(r[2] for r in first) * SCALE) if first else (left_ink,) * 2
    )
    hit_top = (height - max(r[3] for r in first)) * SCALE if first else top_ink
    margin, reach = MARGIN * SCALE, int(LINE * SCALE)
    width, band = min(int(CROP_WIDTH * SCALE), image.width), min(int(CROP_HEIGHT * SCALE), image.height)
    x0 = min(max(left_ink - margin, hit_right + margin - width), hit_left - margin)
    x0 = int(max(0, min(x0, image.width - width)))
    y0 = max(min(hit_top - band / 3, bottom_ink + margin - band), top_ink - margin)
    y0 = int(max(0, min(y0, image.height - band)))
    blank = ~ink[:, x0 : x0 + width].any(axis=1)
    y0, y1 = _blank_row(blank, y0, -reach), _blank_row(blank, y0 + band, reach)
    buffer = io.BytesIO()
    image.crop((x0, y0, x0 + width, y1)).save(buffer, format="PNG", optimize=True, dpi=(72 * SCALE,) * 2)
    atomic_write_bytes(out, buffer.getvalue())
    return out


def _blank_row(blank: np.ndarray, row: int, reach: int) -> int:
    """The blank row nearest ``row`` on the side of ``reach`` (up when negative) and at most ``|reach|`` rows
    away, or ``row`` when there is none; the image edge (``0`` or ``len(blank)``) counts as blank."""
    if row <= 0 or row >= len(blank):
        return max(0, min(row, len(blank)))
    lo, hi = (max(0, row + reach), row + 1) if reach < 0 else (row, min(len(blank), row + reach + 1))
    found = np.flatnonzero(blank[lo:hi])
    return int(lo + (found[-1] if reach < 0 else found[0])) if found.size else row


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in text.lower()).strip("_")[:30]


def render_figure(example: LabelExample, collection_dir: str | Path, out_dir: str | Path) -> list[Path]:
    """Render the crop of every shown evidence page and ``label_figure.png``/``.pdf`` (:func:`figure`);
    returns the written paths, crops first."""
    from nclue.report.plots import save_figure

    out = Path(out_dir)
    pdf_dir, paths = _pdf_paths(Path(collection_dir))
    crops: dict[tuple[int, str], Path] = {}
    for r, row in enumerate(example.rows):
        for c in example.conditions:
            page = row["shown"].get(c)
            if not page:
                continue
            rel = paths.get(row["doc_id"])
            pdf = pdf_dir / rel if rel else None
            if pdf is None or not pdf.is_file():
                raise NclueError(
                    f"{pdf or row['doc_id']}: PDF of {row['doc_id']} not found; the label figure renders the PDFs "
                    f"under {pdf_dir} (collection.json 'pdf_dir')"
                )
            name = f"label_{row['label'].lower()}{row['grade']}_{_slug(c)}_p{page}.png"
            crops[(r, c)] = render_crop(pdf, int(page), example.aliases[c], out / name)
    return [*crops.values(), *save_figure(figure(example, crops), out / "label_figure")]


def figure(example: LabelExample, crops: Mapping[tuple[int, str], Path]):  # noqa: ANN201 - matplotlib Figure
    """The open label figure: one column per shown target (the gold and the grade-2 subset), one row per condition.

    ``crops[(row index, condition)]`` is the PNG of that cell (:func:`render_crop`); a cell
    without one is a dashed frame saying so. Thumbnails are laid out at the page's own size
    (:data:`CROP_WIDTH` points wide), so page text reads at its printed size, and the figure is
    exactly as tall as its content: the query, the column heads, and per condition its titles
    and its tallest crop (the frames of a row share that height).
    """
    import textwrap

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from PIL import Image

    def wrap(text: str, width_in: float, size: float) -> str:
        return textwrap.fill(text, max(10, int(width_in * 72 / (0.62 * size))))

    def lines(size: float, *texts: str) -> float:
        return max(t.count("\n") + 1 for t in texts) * size * 1.3 / 72.0 + PAD

    shown = list(example.rows[:2])
    images = {}
    for key, path in crops.items():
        if key[0] < len(shown):
            with Image.open(path) as img:
                images[key] = np.asarray(img.convert("RGB"))
    thumb = CROP_WIDTH / 72.0
    ratio = {key: a.shape[0] / a.shape[1] for key, a in images.items()}
    usual = max(ratio.values(), default=CROP_HEIGHT / CROP_WIDTH)
    width = 2 * SIDE + len(shown) * thumb + (len(shown) - 1) * GAP
    header = wrap(f"{example.qid}: {example.text}", width - 2 * SIDE, 10)
    heads = [wrap(f"{r['label']} (grade {r['grade']}): {r['doc_id'].rsplit('/', 1)[-1]}", thumb, 9) for r in shown]
    cells = [
        [
            wrap(f"✓ {c} — p. {row['shown'][c]}" if (r, c) in images else f"— {c}: no released page", thumb, 8.5)
            for r, row in enumerate(shown)
        ]
        for c in example.conditions
    ]
    boxes = [
        max((ratio[(r, c)] for r in range(len(shown)) if (r, c) in ratio), default=usual) * thumb
        for c in example.conditions
    ]
    titles = [lines(8.5, *row) for row in cells]
    top, head = lines(10, header) + PAD, lines(9, *heads)
    height = top + head + sum(titles) + sum(boxes) + len(boxes) * ROW_GAP
    fig = plt.figure(figsize=(width, height))
    fig.text(0.5, 1 - PAD / height, header, ha="center", va="top", fontsize=10)
    y = height - top
    for k, text in enumerate(heads):
        fig.text(
            (SIDE + k * (thumb + GAP)) / width, y / height, text, ha="left", va="top", fontsize=9, fontweight="bold"
        )
    y -= head
    for i, c in enumerate(example.conditions):
        for r in range(len(shown)):
            x = SIDE + r * (thumb + GAP)
            fig.text(x / width, y / height, cells[i][r], ha="left", va="top", fontsize=8.5)
            ax = fig.add_axes((x / width, (y - titles[i] - boxes[i]) / height, thumb / width, boxes[i] / height))
            ax.set_xticks([])
            ax.set_yticks([])
            for spine in ax.spines.values():
                spine.set_linewidth(0.8)
            if (r, c) in images:  # at the row's scale, top-aligned: a shorter crop leaves white below it
                image = images[(r, c)]
                ax.imshow(image, interpolation="lanczos", aspect="auto", extent=(0, image.shape[1], image.shape[0], 0))
                ax.set_xlim(0, image.shape[1])
                ax.set_ylim(image.shape[1] * boxes[i] / thumb, 0)
            else:
                ax.text(0.5, 0.5, f"No released page\nfor {c}", ha="center", va="center", fontsize=9, color="0.35")
                for spine in ax.spines.values():
                    spine.set_linestyle((0, (3, 2)))
        y -= titles[i] + boxes[i] + ROW_GAP
    return fig
