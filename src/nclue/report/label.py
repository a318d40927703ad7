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
PDFium's text search, crops a band of the page around the first one and writes one PNG per
cell plus ``label_figure.png``, the gold and grade-2 subset side by side.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nclue.errors import NclueError
from nclue.tables import Table, Tabular

SCALE = 2.0
BAND = 0.36
HIGHLIGHT = (255, 214, 0, 110)


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
            f"Table S6. Query {self.qid} ({self.text}) across one gold and two natural subsets: the evidence page the "
            "qrels store for each condition (a dash: the inventory holds no page of that document for it).",
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


def select_example(release, seed: int) -> LabelExample | None:  # noqa: ANN001 - nclue.release.Release
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
    from nclue.corpus.store import META_FILE, PageStore

    meta_path = collection_dir / META_FILE
    try:
        pdf_dir = Path(json.loads(meta_path.read_text(encoding="utf-8"))["pdf_dir"])
    except (OSError, ValueError, KeyError):
        raise NclueError(
            f"{meta_path}: no 'pdf_dir'; the label figure needs the PDFs the collection was ingested from"
        ) from None
    store = PageStore.open(collection_dir)
    return pdf_dir, dict(zip(store.docs.column("doc_id").to_pylist(), store.docs.column("path").to_pylist()))


def render_crop(pdf: Path, page_number: int, aliases: Sequence[str], out: Path) -> Path:
    """A PNG of ``pdf`` page ``page_number`` (1-based): a band around the first alias match, matches highlighted."""
    import pypdfium2 as pdfium
    from PIL import Image, ImageDraw

    from nclue.io import atomic_write_bytes

    document = pdfium.PdfDocument(str(pdf))
    try:
        page = document[page_number - 1]
        width, height = page.get_size()
        textpage = page.get_textpage()
        boxes: list[tuple[float, float, float, float]] = []
        for alias in sorted({a for a in aliases if a.strip()}, key=len, reverse=True):
            searcher = textpage.search(alias, match_case=False, match_whole_word=False)
            while (hit := searcher.get_next()) is not None:
                start, count = hit
                chars = [textpage.get_charbox(i) for i in range(start, start + count)]
                boxes.append(
                    (
                        min(c[0] for c in chars),
                        min(c[1] for c in chars),
                        max(c[2] for c in chars),
                        max(c[3] for c in chars),
                    )
                )
        image = page.render(scale=SCALE).to_pil().convert("RGBA")
    finally:
        document.close()
    overlay = Image.new("RGBA", image.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    for left, bottom, right, top in boxes:
        draw.rectangle(
            ((left - 1) * SCALE, (height - top - 1) * SCALE, (right + 1) * SCALE, (height - bottom + 1) * SCALE),
            fill=HIGHLIGHT,
            outline=(200, 120, 0, 255),
        )
    image = Image.alpha_composite(image, overlay).convert("RGB")
    centre = (height - boxes[0][3]) * SCALE if boxes else image.height * 0.25
    band = BAND * image.height
    top_px = int(max(0, min(centre - band / 3, image.height - band)))
    crop = image.crop((0, top_px, image.width, int(min(image.height, top_px + band))))
    import io

    buffer = io.BytesIO()
    crop.save(buffer, format="PNG", optimize=True)
    atomic_write_bytes(out, buffer.getvalue())
    return out


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in text.lower()).strip("_")[:30]


def render_figure(example: LabelExample, collection_dir: str | Path, out_dir: str | Path) -> list[Path]:
    """Crops of every shown evidence page and ``label_figure.png`` (gold and the grade-2 subset); returns the paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from PIL import Image

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
    aspect = None
    for path in crops.values():
        with Image.open(path) as img:
            aspect = img.height / img.width
        break
    shown_rows = example.rows[:2]
    fig, axes = plt.subplots(
        len(shown_rows), len(example.conditions), figsize=(3.3 * len(example.conditions), 3.0 * len(shown_rows))
    )
    axes = np.atleast_2d(axes)
    for r, row in enumerate(shown_rows):
        for k, c in enumerate(example.conditions):
            ax = axes[r, k]
            ax.set_xticks([])
            ax.set_yticks([])
            if (r, c) in crops:
                with Image.open(crops[(r, c)]) as img:
                    ax.imshow(np.asarray(img))
                ax.set_title(f"✓ {c}, p.{row['shown'][c]}", fontsize=8, fontweight="bold")
            else:
                if aspect is not None:
                    ax.set_box_aspect(aspect)
                ax.text(0.5, 0.5, f"No released page\nfor {c}", ha="center", va="center", fontsize=9)
                ax.set_title(f"— {c}", fontsize=8, fontweight="bold")
        axes[r, 0].set_ylabel(f"{row['label']} g={row['grade']}\n{row['doc_id'].rsplit('/', 1)[-1]}", fontsize=8)
    fig.suptitle(f"{example.qid}: {example.text}", fontsize=9)
    fig.tight_layout()
    return [*crops.values(), *save_figure(fig, out / "label_figure")]
