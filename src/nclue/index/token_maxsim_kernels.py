"""The compiled loops of :mod:`nclue.index.token_maxsim` (numba; imported only when they run).

Defined at module level so that numba caches the machine code on disk (``cache=True``) and a
later process loads it instead of compiling again. :func:`pages_maxsim` scores the pages ``k`` of
one call in parallel (``prange``); a page's tokens are decoded :data:`TILE` at a time into a buffer
of its own, multiplied by the query with BLAS (``np.dot``), and reduced to the running maximum per
query token. The decode is written inline as plain loops over a token's 192 (or 384) bytes, which
LLVM turns into vector instructions: moved into a helper function it ran at half the speed.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

TILE = 64
"""Tokens decoded per tile (96 KiB of float32 at 384 dimensions: it stays in the L2 cache)."""


@njit(cache=True, nogil=True)
def _reduce_tile(tile: np.ndarray, n: int, qt: np.ndarray, best: np.ndarray) -> None:
    """``best[i] = max(best[i], max_r ⟨tile[r], q_i⟩)`` over the tile's first ``n`` rows."""
    product = np.dot(tile[:n], qt)
    for r in range(n):
        for i in range(qt.shape[1]):
            if product[r, i] > best[i]:
                best[i] = product[r, i]


@njit(cache=True, nogil=True, parallel=True)
def pages_maxsim(qt, codes, scales, half, bits, starts, ends, out):  # noqa: ANN001 - numba arrays
    """``out[k]`` = MaxSim on token rows ``starts[k]:ends[k]`` of ``codes`` (4 or 8 ``bits``), ``scales``
    (float16 bits, looked up in ``half``); ``qt`` is the ``(dim, n_q)`` query in the decoded layout."""
    dim, m = qt.shape
    width = codes.shape[1]
    for k in prange(len(starts)):
        lo, hi = starts[k], ends[k]
        if hi <= lo:
            out[k] = 0.0
            continue
        tile = np.empty((TILE, dim), dtype=np.float32)
        scale = np.empty(width, dtype=np.float32)
        best = np.full(m, -np.inf, dtype=np.float32)
        for t0 in range(lo, hi, TILE):
            n = min(TILE, hi - t0)
            for r in range(n):
                row = codes[t0 + r]
                block = scales[t0 + r]
                if bits == 4:  # the tile layout: low nibbles, then high nibbles
                    for j in range(width):
                        scale[j] = half[block[j >> 4]]
                    for j in range(width):
                        byte = np.int32(row[j])
                        tile[r, j] = np.float32((byte & 15) - 8) * scale[j]
                        tile[r, width + j] = np.float32((byte >> 4) - 8) * scale[j]
                else:  # int8 values stored as bytes, natural order
                    for j in range(width):
                        scale[j] = half[block[j >> 5]]
                    for j in range(width):
                        value = np.int32(row[j])
                        tile[r, j] = np.float32(value - 256 if value > 127 else value) * scale[j]
            _reduce_tile(tile, n, qt, best)
        out[k] = best.sum() / m
