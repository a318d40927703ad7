"""Every write goes through one path that refuses non-regular targets and names the OSError (issue 28, causes 1–2)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from nclue.errors import NclueError
from nclue.io import atomic_write_bytes, refuse_special_target


def test_a_fifo_a_folder_and_a_device_are_refused_not_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    for target, kind in ((fifo, "a FIFO"), (tmp_path, "a folder")):
        with pytest.raises(NclueError, match=f"is {kind}, not a regular file"):
            atomic_write_bytes(target, b"x")
    with pytest.raises(NclueError, match="is a device, not a regular file"):
        refuse_special_target(Path("/dev/null"))  # checked without a write: a regression must not replace it
    assert fifo.is_fifo() and Path("/dev/null").is_char_device()


@pytest.mark.parametrize(
    ("code", "said"),
    [
        (errno.ENOSPC, "the disk is full"),
        (errno.EROFS, "read-only"),
        (errno.EFBIG, "ulimit -f"),
        (errno.EACCES, "permission denied"),
    ],
)
def test_an_oserror_is_one_line_and_the_old_file_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, said: str
) -> None:
    target = tmp_path / "out.json"
    target.write_bytes(b"old")

    def fail(*_: object) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(NclueError, match=f"out.json: cannot write it \\(.*{said}.*\\); nothing was replaced"):
        atomic_write_bytes(target, b"new")
    assert target.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_a_name_over_255_bytes_is_named(tmp_path: Path) -> None:
    with pytest.raises(NclueError, match=r"file name is too long \(255 bytes at most\)"):
        atomic_write_bytes(tmp_path / ("x" * 300 + ".json"), b"{}")


def test_the_cli_says_it_in_one_line(cli, release: Path, run_file: Path, tmp_path: Path) -> None:  # noqa: ANN001
    fifo = tmp_path / "per-query.jsonl"
    os.mkfifo(fifo)
    done = cli("evaluate", release, run_file, "--per-query", fifo)
    assert done.exit_code != 0 and "Traceback" not in done.output and "is a FIFO, not a regular file" in done.output
    assert fifo.is_fifo()
