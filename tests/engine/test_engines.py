"""The engines map the same module-level function and yield every result exactly once."""

from __future__ import annotations

import pytest

from nclue.engine import LocalEngine, make_engine
from nclue.errors import NclueError


def square_and_pid(x: int) -> tuple[int, int]:
    import os

    return x * x, os.getpid()


@pytest.mark.parametrize("workers", [1, 2])
def test_local_engine_yields_every_position_once(workers: int) -> None:
    engine = LocalEngine(workers)
    try:
        out = dict(engine.imap(square_and_pid, ((i,) for i in range(37))))
    finally:
        engine.close()
    assert sorted(out) == list(range(37))
    assert all(out[i][0] == i * i for i in out)
    import os

    pids = {pid for _, pid in out.values()}
    assert (pids == {os.getpid()}) == (workers == 1)


def test_bad_engine_choices_are_clear() -> None:
    with pytest.raises(NclueError, match="choose local or ray"):
        make_engine("spark")
    with pytest.raises(NclueError, match="--ray-address needs --engine ray"):
        make_engine("local", 1, "127.0.0.1:6379")
