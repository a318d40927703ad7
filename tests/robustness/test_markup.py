"""Text from users and PDFs is shown as written, never read as Rich markup (issue 28, cause 5)."""

from __future__ import annotations

import shutil
from pathlib import Path

from nclue.tables import Table, render


def test_a_table_shows_brackets_as_written() -> None:
    table = Table(("System", "Requirement"), (("bm25.and[bold]x", "[/]"),), caption="on [red]labels[/red] [/]")
    text = render(table, "table")
    assert "bm25.and[bold]x" in text and "[/]" in text and "on [red]labels[/red] [/]" in text


def test_evaluate_prints_a_run_name_with_brackets_as_written(
    cli, release: Path, run_file: Path, tmp_path: Path
) -> None:  # noqa: ANN001
    odd = tmp_path / "bm25.and[bold]x [red]y.trec"
    shutil.copyfile(run_file.with_suffix(".trec"), odd)
    done = cli("evaluate", release, odd)
    assert done.exit_code == 0, done.output
    assert "bm25.and[bold]x [red]y" in " ".join(done.output.split())
