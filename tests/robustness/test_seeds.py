"""Seeds and frozen values are checked where they enter (issue 28, cause 3): one line, no traceback."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

import nclue
from nclue.errors import NclueError


@pytest.mark.parametrize(
    "args",
    [
        ("evaluate", "{bench}", "{run}", "--seed", "-5"),
        ("compare", "{bench}", "{run}", "{run}", "--seed", "-5"),
        ("report", "{bench}", "{runs}", "-o", "{out}", "--seed", "-5"),
        ("build", "{coll}", "-o", "{out}", "--seed", "-5"),
        ("audit", "sample", "{bench}", "-o", "{out}", "--seed", "-5"),
    ],
    ids=["evaluate", "compare", "report", "build", "audit-sample"],
)
def test_a_negative_seed_is_refused_by_the_cli(
    args, cli, release: Path, run_file: Path, indexed_source: Path, tmp_path
):  # noqa: ANN001
    values = {"bench": release, "run": run_file, "runs": run_file.parent, "coll": indexed_source, "out": tmp_path / "o"}
    done = cli(*(a.format(**values) for a in args))
    said = " ".join(done.output.split())
    refusal = re.search(
        r"Invalid value for '--seed': (-5 is not in the range x>=0|Input should be greater than or equal to 0)", said
    )
    assert done.exit_code == 2 and refusal, said  # typer < 0.29 words it as click does, 0.29 as pydantic does
    assert "Traceback" not in done.output and not (tmp_path / "o").exists()


def test_a_negative_seed_is_refused_by_the_api(release: Path, run_file: Path) -> None:
    from nclue.audit.audit_params import SampleParams
    from nclue.bench.construction_params import ComposeParams

    for call in (
        lambda: nclue.evaluate(release, [run_file], seed=-5),
        lambda: nclue.compare(release, run_file, [run_file], seed=-5),
        lambda: nclue.evaluate(release, [run_file], seed=1.5),
        lambda: ComposeParams(seed=-1),
        lambda: SampleParams(seed="11"),
    ):
        with pytest.raises(NclueError, match="seed must be a non-negative integer"):
            call()


@pytest.mark.parametrize(("key", "value"), [("bootstrap", "abc"), ("bootstrap", 10**9), ("draws", 0), ("seed", -1)])
def test_an_edited_freeze_is_named(key: str, value: object, cli, release: Path, run_file: Path, tmp_path: Path) -> None:  # noqa: ANN001
    runs = tmp_path / "runs"
    shutil.copytree(run_file.parent, runs)
    report = tmp_path / "report"
    assert cli("report", release, runs, "-o", report, "--bootstrap", "20", "--draws", "50").exit_code == 0
    frozen = json.loads((report / "frozen.json").read_text())
    frozen[key] = value
    (report / "frozen.json").write_text(json.dumps(frozen))
    done = cli("reproduce", release, runs, report, "--verify")
    assert done.exit_code != 0 and "Traceback" not in done.output
    assert f"frozen.json: '{key}' is {value!r}, not an integer" in " ".join(done.output.split())
