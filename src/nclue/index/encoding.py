"""Encoding the shards of an index build, in this process or in worker processes.

A shard is a list of chunk texts; its result is the pooled vectors and/or the packed token
codes (:func:`nclue.index.token_codec.pack_tokens`) of one encoder pass. With ``workers > 1`` the
shards go to :mod:`nclue.engine`'s spawn pool (workers die with their parent), and with a
given engine (``--engine ray``) to its workers: each worker loads the encoder once (from the
model path, which must be readable on every node) and runs it with ``CPUs / workers``
threads (one per Ray task), and the caller writes every result as it arrives, so resumption
and atomic writes are unchanged and a retried task cannot write a shard twice. Why processes:
on the 2-core development machine two single-threaded bfloat16 encoders finished the same
128 chunks 1.5–2.5× sooner than one encoder with two intra-op threads, whose threads
mostly wait on each other at this model size (``benchmarks/encode.py`` measures the
index path against bare ``SentenceTransformer.encode``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from nclue.engine import Engine
from nclue.index.token_codec import pack_tokens
from nclue.models.encoder import Encoder, encode_with_tokens, load_encoder

ShardResult = tuple[np.ndarray | None, tuple[np.ndarray, np.ndarray, np.ndarray] | None]
"""``(vectors or None, (codes, scales, lengths) or None)``."""

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
        os.environ["OMP_NUM_THREADS"] = str(threads)
        _ENCODERS[key] = load_encoder(model_path, backend=backend, batch_size=batch_size, threads=threads)
    return shard_result(_ENCODERS[key], texts, vectors, token_bits)


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

    ``workers``: processes (``None`` = one per CPU, at most one per job); with one, the
    encoder from ``make_encoder()`` runs here. ``worker_args`` = ``(model path, backend,
    batch size)`` for the workers' own encoders. ``engine`` (e.g. Ray), when given, takes the
    shards instead of a local pool and is left open for the caller.
    """
    from nclue.engine import LocalEngine

    if engine is not None:
        threads = 1 if engine.name == "ray" else max(1, (os.cpu_count() or 1) // engine.workers)
        _map(engine, jobs, worker_args, threads, vectors, token_bits, on_result)
        return
    count = max(1, min(workers or os.cpu_count() or 1, n_jobs))
    if count == 1:
        encoder = None
        for shard, texts in jobs:
            encoder = encoder or make_encoder()
            on_result(shard, len(texts), shard_result(encoder, texts, vectors, token_bits))
        return
    pool = LocalEngine(count)
    try:
        _map(pool, jobs, worker_args, max(1, (os.cpu_count() or 1) // count), vectors, token_bits, on_result)
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
