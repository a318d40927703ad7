"""``index.html``: the whole report in one self-contained page (``docs/report.md#html-report``).

Every table is rendered from its :class:`~nclue.tables.Table` (headers, cells, alignment,
caption — the same data as the Markdown and LaTeX files, which each section links to), in a
wrapper that scrolls sideways when the table is wider than the page; captions, notes and other
prose written as Markdown are rendered as Markdown (:func:`markdown_inline`, raw HTML escaped);
every figure is embedded as a ``data:image/png;base64`` URI, and the style sheet is inline,
so the file opens anywhere without the folder around it (the Markdown/LaTeX links then
need the folder). Nothing is loaded from the network.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

from markdown_it import MarkdownIt

from nclue.io import atomic_write_text
from nclue.tables import Table

if TYPE_CHECKING:
    from nclue.report.paper import PaperReport

STYLE = """
body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; margin: 2rem auto; max-width: 1320px;
       color: #1b1b1b; line-height: 1.45; padding: 0 1.25rem; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.2rem; margin-top: 2.2rem; border-bottom: 1px solid #ddd; }
p, li { max-width: 110ch; } nav ul { columns: 2; font-size: 0.9rem; }
code { font-family: ui-monospace, 'SFMono-Regular', Menlo, Consolas, monospace; font-size: 0.88em;
       background: #f1f3f5; padding: 0 0.2em; border-radius: 3px; overflow-wrap: anywhere; }
.caption { font-size: 0.85rem; color: #333; margin: 0.6rem 0 0.3rem; }
.wrap { overflow-x: auto; max-width: 100%; margin-bottom: 0.4rem; }
table { border-collapse: separate; border-spacing: 0; font-size: 0.82rem; }
th, td { border-bottom: 1px solid #e3e3e3; padding: 0.22rem 0.55rem; white-space: nowrap; vertical-align: top; }
th { background: #f4f6f8; border-bottom: 2px solid #b8c2cc; white-space: normal; vertical-align: bottom; }
td.l { white-space: normal; overflow-wrap: break-word; min-width: 8rem; max-width: 24rem; }
th:first-child, td:first-child { position: sticky; left: 0; z-index: 1; background: #fff; }
th:first-child { background: #f4f6f8; }
td.l, th.l { text-align: left; } td.r, th.r { text-align: right; } td.c, th.c { text-align: center; }
.links { font-size: 0.8rem; color: #555; }
figure { margin: 1rem 0; } figure img { max-width: 100%; height: auto; border: 1px solid #ddd; }
figcaption { font-size: 0.85rem; color: #333; } .note { background: #fff8e1; padding: 0.6rem 1rem; }
"""

_MARKDOWN = MarkdownIt("commonmark", {"html": False}).disable("image")


def markdown_inline(text: str) -> str:
    """One line of Markdown (code spans, emphasis, links) as inline HTML.

    Raw HTML in ``text`` is escaped, not passed through (page text may hold ``<script>`` or
    ``onerror=``), link targets with unsafe schemes (``javascript:``, ``vbscript:``, ``file:``)
    are left as text by markdown-it's link validation, and images are not rendered, so the page
    loads nothing.
    """
    return _MARKDOWN.renderInline(text)


def table_html(table: Table) -> str:
    """One :class:`~nclue.tables.Table` as HTML: its :attr:`~nclue.tables.Table.title` (Markdown) above
    a horizontally scrollable wrapper around the ``<table>`` (escaped cells, per-column alignment)."""
    align = table.alignment
    head = "".join(f'<th class="{a}">{escape(h)}</th>' for h, a in zip(table.headers, align))
    body = "".join(
        "<tr>" + "".join(f'<td class="{a}">{escape(c)}</td>' for c, a in zip(row, align)) + "</tr>"
        for row in table.rows
    )
    caption = f'<p class="caption">{markdown_inline(table.title)}</p>' if table.title else ""
    return f'{caption}<div class="wrap"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def image_uri(path: Path) -> str:
    """``data:image/png;base64,...`` of a PNG file."""
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def write_html(
    report: PaperReport,
    sections: Sequence[tuple[str, str, Table]],
    figures: Sequence[tuple[str, str]],
    notes: Sequence[str],
    out: Path,
) -> Path:
    """Write ``out/index.html`` (see the module docstring) and return its path."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>nclue report</title>",
        f"<style>{STYLE}</style></head><body>",
        "<h1>nclue report</h1>",
        f"<p>{report.queries} queries in {report.families} exact gold families; metrics at k = {report.k}; "
        f"{report.bootstrap} family-bootstrap replicates, {report.draws} randomization draws, seed {report.seed}. "
        'All numbers are also in <a href="report.json">report.json</a>.</p>',
        "<nav><ul>"
        + "".join(f'<li><a href="#{key}">{escape(title)}</a></li>' for key, title, _ in sections)
        + ('<li><a href="#figures">Figures</a></li>' if figures else "")
        + "</ul></nav>",
    ]
    for key, title, table in sections:
        parts += [
            f'<section id="{key}"><h2>{escape(title)}</h2>',
            table_html(table),
            f'<p class="links"><a href="{key}.md">Markdown</a> · <a href="{key}.tex">LaTeX</a></p></section>',
        ]
    if report.shift is not None and report.shift.reversals:
        items = "".join(f"<li>{markdown_inline(line)}</li>" for line in report.shift.reversals)
        parts.append(
            f'<section id="reversals"><h2>Where SourceShift reverses a contrast</h2><ul>{items}</ul></section>'
        )
    if figures:
        parts.append('<section id="figures"><h2>Figures</h2>')
        for name, caption in figures:
            parts.append(
                f'<figure><img src="{image_uri(out / name)}" alt="{escape(caption)}">'
                f'<figcaption>{escape(caption)} (<a href="{name}">{name}</a>)</figcaption></figure>'
            )
        parts.append("</section>")
    if notes:
        items = "".join(f"<li>{markdown_inline(line)}</li>" for line in notes)
        parts.append(f'<section id="skipped" class="note"><h2>Not computed here</h2><ul>{items}</ul></section>')
    parts.append("</body></html>")
    path = out / "index.html"
    atomic_write_text(path, "\n".join(parts) + "\n")
    return path
