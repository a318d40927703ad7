"""Table values rendered as Markdown, LaTeX (booktabs) or a rich terminal table.

A :class:`Table` is data (column headers, string cells, per-column alignment, caption);
rendering is a pure function of it, so the same table feeds the CLI, the paper-style
report and tests. Number formatting helpers keep percentage points, intervals and
p-values consistent across outputs.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

Format = Literal["table", "markdown", "latex"]

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
    """Headers, rows of already formatted cells, alignment per column (``l``/``r``/``c``)."""

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    align: str = ""
    caption: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        width = len(self.headers)
        for row in self.rows:
            if len(row) != width:
                raise ValueError(f"row {row!r} has {len(row)} cells, table has {width} columns")
        if self.align and len(self.align) != width:
            raise ValueError(f"align {self.align!r} does not match {width} columns")

    @property
    def alignment(self) -> str:
        """Column alignment: explicit, else first column left and the rest right."""
        return self.align or ("l" + "r" * (len(self.headers) - 1))

    def to_markdown(self) -> str:
        """GitHub-flavoured Markdown with alignment markers and the caption in bold above."""
        marks = {"l": ":---", "r": "---:", "c": ":---:"}
        lines = []
        if self.caption:
            lines += [f"**{self.caption}**", ""]
        lines.append("| " + " | ".join(_md(h) for h in self.headers) + " |")
        lines.append("| " + " | ".join(marks[a] for a in self.alignment) + " |")
        lines += ["| " + " | ".join(_md(c) for c in row) + " |" for row in self.rows]
        lines += [""] + list(self.notes) if self.notes else []
        return "\n".join(lines) + "\n"

    def to_latex(self) -> str:
        """A booktabs ``tabular`` (wrapped in ``table`` with ``\\caption`` when captioned)."""
        body = [
            rf"\begin{{tabular}}{{{self.alignment}}}",
            r"\toprule",
            " & ".join(latex_escape(h) for h in self.headers) + r" \\",
            r"\midrule",
            *(" & ".join(latex_escape(c) for c in row) + r" \\" for row in self.rows),
            r"\bottomrule",
            r"\end{tabular}",
        ]
        if not self.caption:
            return "\n".join(body) + "\n"
        return (
            "\n".join(
                [
                    r"\begin{table}[t]",
                    r"\centering",
                    rf"\caption{{{latex_escape(self.caption)}}}",
                    *body,
                    r"\end{table}",
                ]
            )
            + "\n"
        )

    def to_rich(self):  # noqa: ANN201 - rich is imported lazily
        """A :class:`rich.table.Table` for terminal output."""
        from rich.table import Table as RichTable

        justify = {"l": "left", "r": "right", "c": "center"}
        out = RichTable(title=self.caption or None)
        for header, a in zip(self.headers, self.alignment):
            out.add_column(header, justify=justify[a])
        for row in self.rows:
            out.add_row(*row)
        return out


def render(table: Table, fmt: Format) -> str:
    """``markdown`` or ``latex`` text; ``table`` renders the rich table to plain text."""
    if fmt == "markdown":
        return table.to_markdown()
    if fmt == "latex":
        return table.to_latex()
    from rich.console import Console

    buffer = io.StringIO()
    widths = [max(len(c) for c in col) for col in zip(table.headers, *table.rows)]
    width = max(80, sum(widths) + 3 * len(widths) + 1, len(table.caption))
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
