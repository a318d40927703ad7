"""A small SIGKILL soak (issue 28): ``benchmarks/kill_soak.py`` with three kills, one per stage,
must find every output byte-identical after the reruns (the 20-kill figure is in RESULTS.md)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SOAK = Path(__file__).resolve().parents[2] / "benchmarks" / "kill_soak.py"


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_three_kills_resume_to_byte_identical_outputs(small_collection: Path) -> None:
    spec = importlib.util.spec_from_file_location("kill_soak", SOAK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    record = module.soak(small_collection, kills=3, seed=3)
    assert set(record) == {"index --lexical", "build", "run --matrix"}
    assert sum(entry["kills"] for entry in record.values()) >= 1
    for name, entry in record.items():
        assert entry["files"] > 0 and entry["identical"], (name, entry["differing"])
