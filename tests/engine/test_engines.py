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


def blas_threads(_: int) -> tuple[int, str]:
    """The thread counts of the BLAS libraries this process has loaded (threadpoolctl's own report)."""
    import os

    import numpy  # noqa: F401 - loads OpenBLAS in a worker that has not loaded it yet
    from threadpoolctl import threadpool_info

    return max(info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"), os.environ[
        "OMP_NUM_THREADS"
    ]


@pytest.mark.parametrize(("cpus", "user", "want"), [(4, None, 2), (2, None, 1), (8, "1", 1)])
def test_pool_workers_share_the_cpus_instead_of_each_taking_all(monkeypatch, cpus, user, want) -> None:
    """Each of 2 workers runs BLAS with ``cpus // 2`` threads (two workers × two spinning OpenBLAS
    threads on two cores made the demo's matrix 2.5× slower), and a smaller count the user set is kept."""
    import os

    from nclue.engine import THREAD_VARIABLES

    for name in THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    if user is not None:
        monkeypatch.setenv("OMP_NUM_THREADS", user)
    monkeypatch.setattr(os, "cpu_count", lambda: cpus)  # read in this process when the pool starts
    engine = LocalEngine(2)
    try:
        seen = {result for _, result in engine.imap(blas_threads, ((i,) for i in range(8)))}
    finally:
        engine.close()
    assert seen == {(want, str(want))}


def test_bad_engine_choices_are_clear() -> None:
    with pytest.raises(NclueError, match="choose local or ray"):
        make_engine("spark")
    with pytest.raises(NclueError, match="--ray-address needs --engine ray"):
        make_engine("local", 1, "127.0.0.1:6379")
