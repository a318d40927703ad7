"""Encoding the shards of an index build, in this process or in worker processes.

A shard is a list of chunk texts; its result is the pooled vectors and/or the packed token
codes (:func:`nclue.index.token_codec.pack_tokens`) of one encoder pass. With ``workers > 1`` the
shards go to :mod:`nclue.engine`'s spawn pool (workers die with their parent), and with a
given engine (``--engine ray``) to its workers: each worker loads the encoder once (from the
model path, which must be readable on every node) and runs it with ``CPUs / workers``
threads (one per Ray task), and the caller writes every result as it arrives, so resumption
and atomic writes are unchanged and a retried task cannot write a shard twice.

How many processes (``workers=None``): a shard is the unit of work and cannot be split (the
encoder sorts a call's texts by length into batches, and bfloat16 vectors change in the last
bits with the batch they are computed in; the thread count does not change them), so few
shards of unequal size leave processes idle. :func:`plan_processes` estimates each choice's
time from the shards' sizes — the greedy in-order schedule's longest queue, divided by the
threads each process gets, discounted by :data:`THREAD_EFFICIENCY` per doubling of threads —
and takes the fastest. On the 2-core development machine two threads of one bfloat16 encoder
ran 1.91× one thread (43.6 against 22.8 chunks/s on 160 whole-page chunks): a 1,432-chunk
collection (shards of 1,024 and 408) is encoded in one process with both threads, a
5,494-page one (18 shards) in two single-threaded processes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from nclue.engine import Engine, cap_threads
from nclue.index.token_codec import pack_tokens
from nclue.models.encoder import Encoder, encode_with_tokens, load_encoder

ShardResult = tuple[np.ndarray | None, tuple[np.ndarray, np.ndarray, np.ndarray] | None]
"""``(vectors or None, (codes, scales, lengths) or None)``."""

THREAD_EFFICIENCY = 0.9
"""Assumed speed-up lost per doubling of one encoder's threads (measured 0.955 at two threads on
the development machine; 0.9 leans towards processes, whose scaling does not depend on the BLAS)."""

_ENCODERS: dict[tuple, Encoder] = {}
"""Per worker process: the encoder of the build it serves."""


def shard_result(encoder: Encoder, texts: list[str], vectors: bool, token_bits: int | None) -> ShardResult:
    """One encoder pass over ``texts``: pooled vectors if ``vectors``, packed token codes if ``token_bits``."""
    if token_bits is None:
        return encoder.encode(texts), None
    if not vectors:
        return None, pack_tokens(encoder.token_vectors(texts), token_bits)
    pooled, tokens = encode_with_tokens(encoder, texts)
    return pooled, pack_tokens(tokens, token_bits)


def encode_shard(
    model_path: str,
    backend: str,
    batch_size: int,
    threads: int,
    texts: list[str],
    vectors: bool,
    token_bits: int | None,
) -> ShardResult:
    """Worker task: :func:`shard_result` with this process's (cached) encoder."""
    key = (model_path, backend, batch_size, threads)
    if key not in _ENCODERS:
        _ENCODERS.clear()
        _ENCODERS[key] = load_encoder(model_path, backend=backend, batch_size=batch_size, threads=cap_threads(threads))
    return shard_result(_ENCODERS[key], texts, vectors, token_bits)


def plan_processes(sizes: Sequence[int], cpus: int) -> int:
    """Processes (each with ``cpus // count`` threads) that should finish shards of ``sizes`` first.

    Estimated time of ``count`` processes: the longest queue when each shard, in order, goes to
    the process that frees first, over ``t · THREAD_EFFICIENCY ** log2(t)`` with ``t = cpus // count``
    threads per process (module docstring); ties go to more processes.
    """
    best, best_time = 1, float("inf")
    for count in range(max(1, min(cpus, len(sizes))), 0, -1):
        queues = [0] * count
        for size in sizes:
            queues[queues.index(min(queues))] += size
        threads = max(1, cpus // count)
        estimate = max(queues) / (threads * THREAD_EFFICIENCY ** np.log2(threads))
        if estimate < best_time - 1e-9:
            best, best_time = count, estimate
    return best


def run_shards(
    jobs: Iterable[tuple[int, list[str]]],
    n_jobs: int,
    make_encoder: Callable[[], Encoder],
    worker_args: tuple[str, str, int],
    workers: int | None,
    vectors: bool,
    token_bits: int | None,
    on_result: Callable[[int, int, ShardResult], Any],
    engine: Engine | None = None,
) -> None:
    """Encode every ``(shard, texts)`` job; call ``on_result(shard, n_texts, result)`` as each finishes.

    ``workers``: processes (``None``: :func:`plan_processes` over the jobs' sizes); with one,
    the encoder from ``make_encoder()`` runs here, with its own threads. ``worker_args`` = ``(model path, backend,
    batch size)`` for the workers' own encoders. ``engine`` (e.g. Ray), when given, takes the
    shards instead of a local pool and is left open for the caller.
    """
    from nclue.engine import LocalEngine

    if engine is not None:
        threads = 1 if engine.name == "ray" else max(1, (os.cpu_count() or 1) // engine.workers)
        _map(engine, jobs, worker_args, threads, vectors, token_bits, on_result)
        return
    jobs = list(jobs)
    cpus = os.cpu_count() or 1
    count = max(1, min(workers, n_jobs)) if workers else plan_processes([len(t) for _, t in jobs], cpus)
    if count == 1:
        encoder = None
        for shard, texts in jobs:
            encoder = encoder or make_encoder()
            on_result(shard, len(texts), shard_result(encoder, texts, vectors, token_bits))
        return
    pool = LocalEngine(count)
    try:
        _map(pool, jobs, worker_args, max(1, cpus // count), vectors, token_bits, on_result)
    finally:
        pool.close()


def _map(
    engine: Engine,
    jobs: Iterable[tuple[int, list[str]]],
    worker_args: tuple[str, str, int],
    threads: int,
    vectors: bool,
    token_bits: int | None,
    on_result: Callable[[int, int, ShardResult], Any],
) -> None:
    """:func:`encode_shard` over ``jobs`` on ``engine``; results handed to ``on_result`` as they complete."""
    listed = list(jobs)
    args = [(*worker_args, threads, texts, vectors, token_bits) for _, texts in listed]
    for position, result in engine.imap(encode_shard, args):
        shard, texts = listed[position]
        on_result(shard, len(texts), result)
