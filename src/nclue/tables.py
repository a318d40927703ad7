"""The one table renderer: Markdown, LaTeX (booktabs), a terminal table, and JSON for results.

A :class:`Table` is data (column headers, string cells, per-column alignment, caption, its
number and label key);
rendering is a pure function of it, so the same table feeds the CLI, the paper-style
report, the coverage tables and tests. :class:`Tabular` is the base of every typed result
(scorecards, comparisons, the paper report, coverage results): it renders the result's
tables in any :class:`Format` and its JSON form. Number formatting helpers keep percentage
points, intervals and p-values consistent across outputs, and :data:`METRIC_LABELS` gives
every statistic the one name it has in every table.
"""

from __future__ import annotations

import io
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum


class Format(str, Enum):
    """Output formats of every result: a terminal table, Markdown, LaTeX or JSON."""

    table = "table"
    markdown = "markdown"
    latex = "latex"
    json = "json"


METRIC_LABELS: dict[str, str] = {
    "n_clue_score": "n-Clue Score",
    "gold_hit": "Gold Hit",
    "gold_ndcg": "Gold-NDCG",
    "graded_ndcg": "Graded NDCG",
    "miss": "Miss",
    "subset_first": "Subset-first",
    "gold_first": "Gold-first",
    "gold_support": "Gold+Support",
    "page_coverage_condition": "Per-condition page coverage",
    "page_coverage_all": "All-condition page coverage",
}
"""The display name of each statistic (the JSON key on the left), used by every table."""

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""C0 controls but tab and newline, DEL and the C1 controls: what can drive a terminal (ESC, CSI, OSC)."""
_NUMBER = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]*")
_KEY = re.compile(r"[a-z0-9][a-z0-9.-]*")

_LATEX_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


@dataclass(frozen=True)
class Table:
    """Headers, rows of already formatted cells, alignment per column (``l``/``r``/``c``), caption,
    notes, and the table's number and label key.

    ``number`` (``"S1g"``) is the table's own number: Markdown and the terminal show the caption
    as ``Table S1g. caption`` (:attr:`title`), and LaTeX sets it as the table's number
    (``\\thetable``) so ``\\caption`` holds the caption alone. ``key`` names the LaTeX label
    (:attr:`label`); a numbered table without one is labelled by its number.
    """

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    align: str = ""
    caption: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)
    number: str = ""
    key: str = ""

    def __post_init__(self) -> None:
        width = len(self.headers)
        for row in self.rows:
            if len(row) != width:
                raise ValueError(f"row {row!r} has {len(row)} cells, table has {width} columns")
        if self.align and len(self.align) != width:
            raise ValueError(f"align {self.align!r} does not match {width} columns")
        if self.number and not _NUMBER.fullmatch(self.number):
            raise ValueError(f"table number {self.number!r}: use letters, digits, '.' or '-' (e.g. 'S1g')")
        if self.key and not _KEY.fullmatch(self.key):
            raise ValueError(
                f"table key {self.key!r}: use lower-case letters, digits, '-' or '.' (e.g. 's5b-difficulty')"
            )

    @property
    def alignment(self) -> str:
        """Column alignment: explicit, else first column left and the rest right."""
        return self.align or ("l" + "r" * (len(self.headers) - 1))

    @property
    def title(self) -> str:
        """The caption as readers see it: ``Table NUMBER. caption`` when numbered, else the caption (may be empty)."""
        if not self.number:
            return self.caption
        return f"Table {self.number}. {self.caption}".rstrip()

    @property
    def label(self) -> str:
        """The LaTeX label: ``tab:KEY``, else ``tab:`` and the number in lower case; empty when the table has neither."""
        key = self.key or self.number.lower()
        return f"tab:{key}" if key else ""

    def to_markdown(self) -> str:
        """GitHub-flavoured Markdown with alignment markers and the :attr:`title` in bold above."""
        marks = {"l": ":---", "r": "---:", "c": ":---:"}
        lines = []
        if self.title:
            lines += [f"**{self.title}**", ""]
        lines.append("| " + " | ".join(_md(h) for h in self.headers) + " |")
        lines.append("| " + " | ".join(marks[a] for a in self.alignment) + " |")
        lines += ["| " + " | ".join(_md(c) for c in row) + " |" for row in self.rows]
        lines += [""] + list(self.notes) if self.notes else []
        return "\n".join(lines) + "\n"

    def to_latex(self) -> str:
        """A booktabs ``tabular``; a captioned or numbered table is wrapped in a ``table`` float.

        The float sets ``\\thetable`` to :attr:`number` (local to the float; LaTeX's own table
        counter still advances), writes ``\\caption`` with the caption text only and ``\\label`` with
        :attr:`label`.
        """
        body = [
            rf"\begin{{tabular}}{{{self.alignment}}}",
            r"\toprule",
            " & ".join(latex_escape(h) for h in self.headers) + r" \\",
            r"\midrule",
            *(" & ".join(latex_escape(c) for c in row) + r" \\" for row in self.rows),
            r"\bottomrule",
            r"\end{tabular}",
        ]
        if not (self.caption or self.number):
            return "\n".join(body) + "\n"
        head = [r"\begin{table}[t]", r"\centering"]
        head += [rf"\renewcommand{{\thetable}}{{{latex_escape(self.number)}}}"] if self.number else []
        head.append(rf"\caption{{{latex_escape(self.caption)}}}")
        head += [rf"\label{{{self.label}}}"] if self.label else []
        return "\n".join([*head, *body, r"\end{table}"]) + "\n"

    def to_rich(self):  # noqa: ANN201 - rich is imported lazily
        """A :class:`rich.table.Table` for terminal output; every cell, header and the title are
        plain :class:`rich.text.Text`, so ``[bold]`` or ``[/]`` in a run name, a requirement or a
        label from a PDF is shown as written, never read as Rich markup, and control characters are
        replaced (:func:`terminal_text`)."""
        from rich.table import Table as RichTable
        from rich.text import Text

        justify = {"l": "left", "r": "right", "c": "center"}
        out = RichTable(title=Text(terminal_text(self.title)) if self.title else None)
        for header, a in zip(self.headers, self.alignment):
            out.add_column(Text(terminal_text(header)), justify=justify[a])
        for row in self.rows:
            out.add_row(*(Text(terminal_text(cell)) for cell in row))
        return out


def terminal_text(text: str) -> str:
    """``text`` safe to print on a terminal: every control character that can start an escape
    sequence (ESC, CSI, OSC, BEL, …; tab and newline kept) becomes U+FFFD, so text from a PDF or a
    folder name cannot retitle the window, forge output, write the clipboard or hide a hyperlink."""
    return _CONTROL.sub("\ufffd", text)


def render(table: Table, fmt: Format | str) -> str:
    """``markdown`` or ``latex`` text; ``table`` renders the rich table to plain text."""
    fmt = Format(fmt)
    if fmt is Format.markdown:
        return table.to_markdown()
    if fmt is Format.latex:
        return table.to_latex()
    if fmt is Format.json:
        raise ValueError("a Table has no JSON form; render the result object instead")
    from rich.console import Console

    buffer = io.StringIO()
    widths = [max(len(c) for c in col) for col in zip(table.headers, *table.rows)]
    width = max(80, sum(widths) + 3 * len(widths) + 1, len(table.title))
    Console(file=buffer, width=width, color_system=None).print(table.to_rich())
    return buffer.getvalue()


def latex_escape(text: str) -> str:
    """Escape LaTeX special characters; a leading ``-`` or ``+`` on numbers is kept as text."""
    return "".join(_LATEX_ESCAPES.get(ch, ch) for ch in text)


def _md(text: str) -> str:
    return text.replace("|", r"\|")


def fmt_pp(value: float | None, digits: int = 1, sign: bool = False) -> str:
    """A percentage-point value, ``–`` when missing; ``sign`` adds ``+`` to positives."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"


def fmt_ci(pair: Sequence[float] | None, digits: int = 1, sign: bool = False) -> str:
    """``[lo, hi]`` in percentage points."""
    if pair is None:
        return "–"
    return f"[{fmt_pp(pair[0], digits, sign)}, {fmt_pp(pair[1], digits, sign)}]"


def fmt_p(value: float | None) -> str:
    """A p-value with three decimals (``<0.001`` below that)."""
    if value is None or math.isnan(value):
        return "–"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


class Tabular:
    """Base of typed results: subclasses give :meth:`tables` and :meth:`to_json`.

    ``to_json()`` is the exact JSON the CLI prints with ``--format json``.
    """

    def tables(self) -> list[Table]:
        """The result's tables, in reading order."""
        raise NotImplementedError

    def to_json(self) -> dict:
        """A JSON-ready dict (no NaN: undefined values are ``None``)."""
        raise NotImplementedError

    def render(self, fmt: Format | str = Format.table) -> str:
        """Every table in ``fmt`` (blank-line separated), or the JSON document."""
        fmt = Format(fmt)
        if fmt is Format.json:
            return json.dumps(self.to_json(), indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
        return "\n".join(render(t, fmt) for t in self.tables())

    def to_markdown(self) -> str:
        """Every table as GitHub Markdown."""
        return self.render(Format.markdown)

    def to_latex(self) -> str:
        """Every table as a booktabs ``table``."""
        return self.render(Format.latex)

    def __str__(self) -> str:
        return self.render(Format.table)
