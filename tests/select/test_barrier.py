"""The freeze barrier against the reads an audit hook cannot see: pyarrow's C++ readers, mmap and
a subprocess, in a child sealed by the kernel (Landlock); outcome files and new processes under the
hook; a real sealed freeze."""

from __future__ import annotations

import json
import mmap
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nclue.select.barrier import judgment_barrier, landlock_abi, readable_complement, run_sealed

needs_landlock = pytest.mark.skipif(not landlock_abi(), reason="Landlock is not available on this kernel")


def probe(paths: dict[str, str], on_block=None) -> dict[str, str]:  # noqa: ANN001 - run_sealed's callback
    """Runs in the sealed child: try every way of reading each file; report what happened."""
    import pyarrow.json as pj

    out: dict[str, str] = {}

    def attempt(key: str, read) -> None:  # noqa: ANN001 - a no-argument reader
        try:
            read()
            out[key] = "read"
        except Exception as exc:  # noqa: BLE001 - PermissionError, or pyarrow's own type for EACCES
            out[key] = type(exc).__name__

    def mapped(path: str) -> None:
        with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ):
            pass

    for name, path in paths.items():
        attempt(f"{name}/pyarrow", lambda p=path: pj.read_json(p))
        attempt(f"{name}/os.open", lambda p=path: os.close(os.open(p, os.O_RDONLY)))
        attempt(f"{name}/mmap", lambda p=path: mapped(p))
        done = subprocess.run(["cat", path], capture_output=True, text=True)
        out[f"{name}/subprocess"] = "read" if done.returncode == 0 else "refused"
    import tempfile

    scratch = Path(tempfile.mkdtemp())
    (scratch / "new.txt").write_text("ok")
    out["scratch"] = (scratch / "new.txt").read_text()
    if on_block is not None:
        on_block(3)
    return out


@needs_landlock
def test_a_sealed_child_cannot_read_the_labels_by_any_route(tmp_path: Path):
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    labels = tasks / "judgments.jsonl"
    labels.write_text(json.dumps({"task_id": "t", "doc_id": "d", "grade": 3}) + "\n")
    sibling = tasks / "tasks.jsonl"
    sibling.write_text(json.dumps({"task_id": "t"}) + "\n")
    alias = tmp_path / "innocent.jsonl"
    os.link(labels, alias)
    link = tmp_path / "pointer.jsonl"
    link.symlink_to(labels)
    progress: list[int] = []
    paths = {"labels": str(labels), "hardlink": str(alias), "symlink": str(link), "sibling": str(sibling)}
    result = run_sealed(probe, {"paths": paths}, [labels], tmp_path / "out", progress.append)
    for name in ("labels", "hardlink", "symlink"):
        for route in ("pyarrow", "os.open", "mmap", "subprocess"):
            assert result[f"{name}/{route}"] != "read", (name, route, result)
    assert all(result[f"sibling/{route}"] == "read" for route in ("pyarrow", "os.open", "mmap", "subprocess"))
    assert result["scratch"] == "ok" and progress == [3]
    assert labels.read_text()  # this process is not sealed


def test_the_complement_grants_everything_but_the_protected_file(tmp_path: Path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    secret = tmp_path / "a" / "b" / "qrels.jsonl"
    secret.write_text("x")
    (tmp_path / "a" / "b" / "ok.jsonl").write_text("y")
    (tmp_path / "a" / "c").mkdir()
    (tmp_path / "pointer").symlink_to(secret)
    granted = {Path(p) for p in readable_complement([secret])}
    assert {tmp_path / "a" / "b" / "ok.jsonl", tmp_path / "a" / "c"} <= granted
    assert not {secret, tmp_path / "a", tmp_path / "a" / "b", tmp_path / "pointer"} & granted
    assert Path("/usr") in granted


def test_the_hook_refuses_outcome_files_and_new_processes(tmp_path: Path):
    results = tmp_path / "results"
    results.mkdir()
    for name in ("scores.jsonl", "summary.json", "ledger.jsonl"):
        (results / name).write_text("{}")
    with judgment_barrier():
        for name in ("scores.jsonl", "summary.json", "ledger.jsonl"):
            with pytest.raises(PermissionError, match=name.replace(".", "\\.")):
                (results / name).read_text()
        with pytest.raises(PermissionError, match="starting a process"):
            subprocess.run([sys.executable, "-c", "pass"], check=False)
    assert (results / "scores.jsonl").read_text() == "{}"
    assert subprocess.run([sys.executable, "-c", "pass"], check=False).returncode == 0


@needs_landlock
@pytest.mark.slow
def test_a_real_freeze_runs_sealed_and_records_it(cli, task_dir: Path, tmp_path: Path):
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "scores.jsonl").write_text("{}\n")
    done = cli("coverage", "freeze", task_dir, "-o", tmp_path / "frz", "--selector", "dense")
    assert done.exit_code == 0, done.output
    assert "barrier: Landlock" in done.output
    manifest = json.loads(next((tmp_path / "frz").glob("*/manifest.json")).read_text())
    sealed = set(manifest["barrier"]["sealed_files"])
    assert {str(task_dir / "judgments.jsonl"), str(tmp_path / "results" / "scores.jsonl")} <= sealed
