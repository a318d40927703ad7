"""Usage errors print typer's usage message and exit 2 — never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.robustness.robust_helpers import assert_clean


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["search", "{coll}", "a; b", "-k", "0"], "-k"),
        (["search", "{coll}", "a; b", "-k", "abc"], "-k"),
        (["search", "{coll}", "a; b", "--no-such-option"], "--no-such-option"),
        (["build", "{coll}"], "--out"),
        (["build", "{coll}", "-o", "{tmp}/b", "--queries", "0"], "--queries"),
        (["ingest", "{tmp}", "{tmp}/c", "--workers", "abc"], "--workers"),
        (["evaluate"], "bench"),
        (["evaluate", "{tmp}", "{tmp}/r.trec", "--bootstrap", "100000000"], "--bootstrap"),
        (["compare", "{tmp}", "{tmp}/a", "{tmp}/b", "--draws", "0"], "--draws"),
        (["run", "{tmp}", "{coll}", "-s", "bm25.and", "-o", "{tmp}/o", "--form", "pirate"], "--form"),
    ],
)
def test_usage_errors_exit_2_with_usage(
    cli, indexed_source: Path, tmp_path: Path, args: list[str], fragment: str
) -> None:
    filled = [a.format(coll=indexed_source, tmp=tmp_path) for a in args]
    assert_clean(cli(*filled), 2, "Usage:", fragment)


def test_the_console_script_prints_usage_not_a_traceback(tmp_path: Path) -> None:
    """The real entry point in a fresh interpreter (standalone mode), whatever typer's click copy is."""
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", "from nclue.cli import main; main()", "search", str(tmp_path), "a; b", "-k", "abc"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "Usage:" in proc.stderr and "Traceback" not in proc.stderr
