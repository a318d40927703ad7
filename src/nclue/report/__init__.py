"""Tables (Markdown, LaTeX, terminal) and plots (PNG + PDF) for scorecards and contrasts."""

from nclue.report.tables import Table, fmt_ci, fmt_p, fmt_pp, render

__all__ = ["Table", "fmt_ci", "fmt_p", "fmt_pp", "render"]
