"""How many encoder processes a build uses: hand-computed cases of the planning rule, and its wiring."""

from __future__ import annotations

import numpy as np
import pytest

from nclue.index import encoding
from nclue.index.encoding import plan_processes


def test_unequal_shards_on_two_cores_go_to_one_process_with_both_threads() -> None:
    # two processes: the longest queue is 1,024 chunks at one thread each → 1,024;
    # one process with two threads: 1,432 / (2 · 0.9) = 795.6 → faster
    assert plan_processes([1024, 408], cpus=2) == 1


def test_many_shards_go_to_one_single_threaded_process_per_core() -> None:
    # 18 full shards and a short one: queues 9,716 and 9,216 → 9,716 against 18,932 / 1.8 = 10,517.8
    assert plan_processes([1024] * 18 + [500], cpus=2) == 2
    assert plan_processes([100] * 4, cpus=4) == 4  # balanced: ties and wins go to processes


def test_few_shards_on_many_cores_weigh_thread_scaling() -> None:
    # 16 cores, shards 1,024, 1,024, 500: three processes of five threads 1,024 / (5 · 0.9^log2 5) = 261.7,
    # two of eight 1,524 / (8 · 0.729) = 261.3, one of sixteen 2,548 / (16 · 0.6561) = 242.7
    assert plan_processes([1024, 1024, 500], cpus=16) == 1
    assert plan_processes([1024, 1024], cpus=16) == 2  # 1,024 / 5.832 = 175.6 against 2,048 / 10.4976 = 195.1


def test_no_shard_or_one_cpu_is_one_process() -> None:
    assert plan_processes([], cpus=2) == 1
    assert plan_processes([5, 5, 5], cpus=1) == 1


class _Fake:
    def encode(self, texts):  # noqa: ANN001, ANN202 - the encoder protocol's shape
        return np.zeros((len(texts), 2), np.float32)


class _NoPool(Exception):
    pass


def _refuse_pool(count: int) -> None:
    raise _NoPool(count)


@pytest.mark.parametrize(("jobs", "pooled"), [([3, 1], False), ([3, 3], True)])
def test_run_shards_follows_the_plan(monkeypatch: pytest.MonkeyPatch, jobs: list[int], pooled: bool) -> None:
    import nclue.engine

    monkeypatch.setattr(encoding.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(nclue.engine, "LocalEngine", _refuse_pool)
    done: list[int] = []
    run = lambda: encoding.run_shards(  # noqa: E731 - the call under test, twice
        ((i, ["x"] * n) for i, n in enumerate(jobs)),
        len(jobs),
        _Fake,
        ("model", "onnx", 8),
        None,
        True,
        None,
        lambda shard, n, result: done.append(n),
    )
    if pooled:
        with pytest.raises(_NoPool):
            run()
    else:
        run()
        assert done == jobs
