"""Table rendering (Markdown, LaTeX, terminal) and the two figures."""

from __future__ import annotations

import pytest

from nclue.report.plots import delta_plane_plot, scorecard_plot
from nclue.scoring.results import Contrast, RunSummary
from nclue.tables import Table, fmt_ci, fmt_p, fmt_pp, latex_escape, render
from tests.report.contrasts import make_contrast


def _table() -> Table:
    return Table(
        ("Run", "n-Clue Score", "95% CI"),
        (("bm25_and", "26.8", "[24.1, 29.5]"), ("a|b", "1.0", "–")),
        caption="Top & more",
    )


def test_markdown_and_latex_rendering():
    t = _table()
    md = t.to_markdown()
    assert "| Run | n-Clue Score | 95% CI |" in md
    assert "| :--- | ---: | ---: |" in md
    assert r"a\|b" in md and md.startswith("**Top & more**")
    tex = t.to_latex()
    assert r"\begin{tabular}{lrr}" in tex and r"\toprule" in tex and r"\bottomrule" in tex
    assert r"bm25\_and & 26.8 & [24.1, 29.5] \\" in tex
    assert r"95\% CI" in tex and r"\caption{Top \& more}" in tex
    assert "bm25_and" in render(t, "table")


def test_table_validation_and_formatters():
    with pytest.raises(ValueError, match="2 cells"):
        Table(("a", "b", "c"), (("x", "y"),))
    assert latex_escape("50% of $x_1$ & {y}") == r"50\% of \$x\_1\$ \& \{y\}"
    assert fmt_pp(3.14159) == "3.1" and fmt_pp(2.0, sign=True) == "+2.0" and fmt_pp(None) == "–"
    assert fmt_pp(float("nan")) == "–"
    assert fmt_ci([-1.234, 2.5], 2, sign=True) == "[-1.23, +2.50]"
    assert fmt_p(0.0004) == "<0.001" and fmt_p(0.0421) == "0.042"


def test_plots_write_png_and_pdf_deterministically(tmp_path):
    def run(name: str, score: float, ci: tuple[float, float]) -> RunSummary:
        return RunSummary(name, score, 80.0, 50.0, 50.0, 20.0, 80.0 - score, score, ci={"n_clue_score": ci})

    summary = {"fusion": run("fusion", 31.0, (28.0, 34.0)), "bm25": run("bm25", 26.8, (24.0, 29.0))}
    paths = scorecard_plot(summary, tmp_path / "card")
    assert [p.suffix for p in paths] == [".png", ".pdf"]
    first = [p.read_bytes() for p in paths]
    scorecard_plot(summary, tmp_path / "card")
    assert [p.read_bytes() for p in paths] == first
    assert first[0][:8] == b"\x89PNG\r\n\x1a\n" and first[1][:4] == b"%PDF"

    def contrast(name: str, d_hit: float, d_score: float, ci: dict) -> Contrast:
        return make_contrast(d_hit, d_score, ci.get("n_clue_score"), variant=name)

    contrasts = {
        "jina.distinct": contrast("jina.distinct", 9.5, 6.8, {"n_clue_score": (3.7, 9.9)}),
        "rerank": contrast("rerank", -16.2, -3.9, {}),
    }
    plane = delta_plane_plot(contrasts, tmp_path / "plane", labels=["Jina composition", "Text reranking"])
    assert all(p.stat().st_size > 1000 for p in plane)
