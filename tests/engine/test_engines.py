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


def test_pool_workers_share_the_cpus_instead_of_each_taking_all() -> None:
    """Each of ``w`` workers runs BLAS with ``cpus // w`` threads (two workers × two spinning
    OpenBLAS threads on two cores made the demo's matrix 2.5× slower)."""
    import os

    workers = max(2, os.cpu_count() or 1)
    engine = LocalEngine(workers)
    try:
        seen = {result for _, result in engine.imap(blas_threads, ((i,) for i in range(4 * workers)))}
    finally:
        engine.close()
    share = max(1, (os.cpu_count() or 1) // workers)
    assert seen == {(share, str(share))}


def test_bad_engine_choices_are_clear() -> None:
    with pytest.raises(NclueError, match="choose local or ray"):
        make_engine("spark")
    with pytest.raises(NclueError, match="--ray-address needs --engine ray"):
        make_engine("local", 1, "127.0.0.1:6379")
