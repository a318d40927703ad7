"""Table S2a's columns: the seed's Raw / Paraphrase layout, plus the default form only when it is not raw."""

from __future__ import annotations

from nclue.report.paraphrase_probe import ProbeRow, probe_table

ROW = ProbeRow("bm25.and", 40.0, 35.0, 30.0, "raw", -10.0, (-15.0, -5.0), 0.01)


def test_a_raw_default_form_is_shown_once() -> None:
    table = probe_table([ROW], "raw")
    assert table.headers == ("System", "Raw Score", "Paraphrase Score", "Δ", "Exact-family 95% CI", "p (family)")
    assert table.rows[0][:3] == ("bm25.and", "40.0", "30.0") and len(table.align) == len(table.headers)


def test_another_default_form_gets_its_column() -> None:
    table = probe_table([ROW], "clean_v2")
    assert table.headers[1:4] == ("Raw Score", "clean_v2 Score", "Paraphrase Score")
    assert table.rows[0][1:4] == ("40.0", "35.0", "30.0") and len(table.align) == len(table.headers)
