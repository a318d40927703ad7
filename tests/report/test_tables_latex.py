"""Numbered tables: "Table S1g. caption" in Markdown and on the terminal; LaTeX sets the number and a label."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from nclue.report.clustered import ClusteredRow, clustered_table
from nclue.report.difficulty import DifficultyStudy
from nclue.report.label import LabelExample
from nclue.report.paraphrase_probe import ProbeRow, probe_table
from nclue.tables import Table, render
from tests.report.contrasts import make_contrast

CAPTION = re.compile(r"\\caption\{(.*)\}")


def _numbered() -> Table:
    return Table(
        ("Contrast", "Observed"), (("a − b", "+1.0"),), caption="Shared-document sensitivity (pp).", number="S1g"
    )


def test_a_numbered_table_shows_its_number_once_everywhere() -> None:
    table = _numbered()
    md = table.to_markdown()
    assert md.startswith("**Table S1g. Shared-document sensitivity (pp).**\n")
    assert "Table S1g. Shared-document sensitivity (pp)." in " ".join(render(table, "table").split())  # rich wraps
    tex = table.to_latex()
    assert tex.count(r"\label{") == 1 and r"\label{tab:s1g}" in tex
    assert CAPTION.findall(tex) == ["Shared-document sensitivity (pp)."]
    lines = tex.splitlines()
    number = lines.index(r"\renewcommand{\thetable}{S1g}")
    assert lines[0] == r"\begin{table}[t]" and lines[-1] == r"\end{table}"
    assert 0 < number < lines.index(r"\caption{Shared-document sensitivity (pp).}") < lines.index(r"\label{tab:s1g}")
    assert lines.index(r"\label{tab:s1g}") < lines.index(r"\begin{tabular}{lr}")


def test_keys_and_plain_tables() -> None:
    keyed = Table(("a",), (("1",),), caption="Density-matched rates.", number="S5b", key="s5b-density-matched")
    assert r"\label{tab:s5b-density-matched}" in keyed.to_latex() and keyed.title.startswith("Table S5b. ")
    plain = Table(("a",), (("1",),), caption="Run coverage")
    assert plain.title == "Run coverage" and r"\label" not in plain.to_latex() and r"\thetable" not in plain.to_latex()
    bare = Table(("a",), (("1",),))
    assert (
        bare.to_latex().startswith(r"\begin{tabular}") and bare.title == "" and bare.to_markdown().startswith("| a |")
    )
    for bad in ({"number": "S1 g"}, {"number": "S1}"}, {"key": "Tab S1"}, {"key": "s1_g{"}):
        with pytest.raises(ValueError, match="table (number|key)"):
            Table(("a",), (("1",),), caption="x", **bad)


def _report_tables() -> list[Table]:
    """The tables of the report modules that number their own tables (S1g, S2a, S5b twice, S6)."""
    contrast = make_contrast(1.0, 2.0, (0.5, 3.5))
    s1g = clustered_table([contrast], {"c": ClusteredRow(1.0, (0.1, 2.0))}, ["c"])
    probe = ProbeRow("dense.joint(max)", 30.0, 31.0, 25.0, "raw", -5.0, (-8.0, -2.0), 0.01)
    difficulty = DifficultyStudy(
        queries=10,
        bootstrap=100,
        covariates={},
        models={"bm25.and": None},
        auc_without_length={"bm25.and": None},
        matched={"bm25.and": {"n2": 40.0, "n3": 30.0, "delta": -10.0, "ci": (-20.0, 0.0)}},
        matched_queries={"n2": 5, "n3": 5},
    )
    label = LabelExample(
        "q1",
        ("a", "b"),
        '"a"; "b"',
        {"a": ("a",), "b": ("b",)},
        ({"label": "Gold", "grade": 2, "doc_id": "d1", "shown": {"a": 1, "b": 2}},),
    )
    return [s1g, probe_table([probe], "clean_v2"), *difficulty.tables(), label.table()]


def test_report_modules_number_their_tables_through_the_table() -> None:
    tables = _report_tables()
    assert [t.number for t in tables] == ["S1g", "S2a", "S5b", "S5b", "S6"]
    labels = []
    for table in tables:
        tex = table.to_latex()
        (caption,) = CAPTION.findall(tex)
        assert not caption.startswith("Table"), caption
        assert tex.count(r"\label{") == 1
        labels += re.findall(r"\\label\{([^}]*)\}", tex)
        assert table.to_markdown().startswith(f"**Table {table.number}. ")
        assert table.to_markdown().count(f"Table {table.number}") == 1
    assert len(set(labels)) == len(labels)  # the two S5b tables are told apart by their keys


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no pdflatex on this machine (TeX is not installed)")
def test_numbered_tables_compile_and_resolve_their_labels(tmp_path: Path) -> None:
    tables = _report_tables()
    refs = " ".join(rf"\ref{{{t.label}}}" for t in tables)
    document = "\n".join(
        [
            r"\documentclass{article}",
            r"\usepackage[T1]{fontenc}",
            r"\usepackage[utf8]{inputenc}",
            r"\usepackage{booktabs}",
            r"\DeclareUnicodeCharacter{2212}{\ensuremath{-}}",
            r"\DeclareUnicodeCharacter{0394}{\ensuremath{\Delta}}",
            r"\DeclareUnicodeCharacter{03B2}{\ensuremath{\beta}}",
            r"\DeclareUnicodeCharacter{2013}{--}",
            r"\DeclareUnicodeCharacter{2014}{---}",
            r"\DeclareUnicodeCharacter{2713}{\ensuremath{\checkmark}}",
            r"\DeclareUnicodeCharacter{00D7}{\ensuremath{\times}}",
            r"\usepackage{amssymb}",
            r"\begin{document}",
            refs,
            *(t.to_latex() for t in tables),
            r"\end{document}",
        ]
    )
    (tmp_path / "doc.tex").write_text(document, encoding="utf-8")
    for _ in range(2):
        subprocess.run(
            ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
            cwd=tmp_path,
            check=True,
            capture_output=True,
        )
    aux = (tmp_path / "doc.aux").read_text()
    for table in tables:
        assert re.search(rf"\\newlabel\{{{re.escape(table.label)}\}}\{{\{{{table.number}\}}", aux), table.label
