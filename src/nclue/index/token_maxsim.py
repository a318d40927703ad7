"""MaxSim of query token vectors against pages, read straight from the token index's codes.

For query tokens ``q_i`` and a page's decoded tokens ``x̂_t`` (:mod:`nclue.index.token_codec`:
``x̂_{t,d} = s_{t,b(d)} · c_{t,d}``)::

    maxsim(q, page) = (1 / |q|) Σ_i max_t ⟨q_i, x̂_t⟩

Why a compiled kernel (numba) instead of NumPy: in NumPy a page is decoded into a float32 array
(four passes over ``n × 384`` values: two nibble casts, the offset, the block scales) and then read
again by the matrix product; on whole pages (≈ 750 tokens) the decode cost as much as the product
(``benchmarks/RESULTS.md``). Here each page is decoded in tiles of ``TILE`` tokens into a small
buffer that stays in the CPU cache, each tile is multiplied by the query (BLAS, as before) and only
the running maximum per query token is kept; the pages of one call are shared between threads
(:mod:`nclue.index.token_maxsim_kernels`).

Layout trick: a 4-bit code byte holds dimensions ``2j`` (low nibble) and ``2j + 1`` (high nibble).
The tile stores every low nibble first, then every high nibble (dimension ``2j`` at column ``j``,
``2j + 1`` at ``192 + j``), so the decode writes contiguously; the query's columns are permuted
the same way, which leaves every dot product unchanged (up to float32 summation order).
"""

from __future__ import annotations

from functools import cache

import numpy as np

from nclue.errors import NclueError
from nclue.index.token_codec import BLOCK


def permuted_query(query: np.ndarray, bits: int) -> np.ndarray:
    """``(dim, n_q)`` float32, C-contiguous: the query's transposed columns in the tile layout (module
    docstring) for 4-bit codes, in natural order for 8-bit ones."""
    q = np.asarray(query, dtype=np.float32)
    if bits == 4:
        q = np.concatenate([q[:, 0::2], q[:, 1::2]], axis=1)
    return np.ascontiguousarray(q.T)


def pages_maxsim(
    query: np.ndarray, codes: np.ndarray, scales: np.ndarray, starts: np.ndarray, ends: np.ndarray, bits: int
) -> np.ndarray:
    """``(len(starts),)`` float32: MaxSim of ``query`` (``(n_q, dim)``) on the pages whose tokens are
    rows ``starts[k]:ends[k]`` of ``codes`` / ``scales`` (the token index's arrays, memory-mapped);
    0 for an empty page or an empty query."""
    out = np.zeros(len(starts), dtype=np.float32)
    if not len(query) or not len(starts):
        return out
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    ends = np.ascontiguousarray(ends, dtype=np.int64)
    check_inputs(np.asarray(query), codes, scales, starts, ends, bits)
    try:
        import nclue.index.token_maxsim_kernels as kernels
    except ImportError as exc:
        raise NclueError(
            f"MaxSim over a token index needs numba ({exc}); install it with: pip install 'nclue[neural]'"
        ) from None
    kernels.pages_maxsim(
        permuted_query(query, bits), codes, scales.view(np.uint16), half_floats(), bits, starts, ends, out
    )
    return out


def check_inputs(
    query: np.ndarray, codes: np.ndarray, scales: np.ndarray, starts: np.ndarray, ends: np.ndarray, bits: int
) -> None:
    """Refuse what the kernel would read out of bounds or misread: a width, dtype or shape that does
    not match the codec, or a token span outside the codes."""
    dim = codes.shape[1] * 8 // bits if bits in (4, 8) else 0
    if not dim or codes.dtype != np.uint8 or dim % BLOCK:
        raise NclueError(f"token codes of dtype {codes.dtype} and width {codes.shape[1]} are not {bits}-bit codes")
    if query.ndim != 2 or query.shape[1] != dim:
        raise NclueError(f"query tokens of shape {query.shape} do not match codes of dimension {dim}")
    if scales.dtype != np.float16 or scales.shape != (len(codes), dim // BLOCK):
        raise NclueError(
            f"token scales of dtype {scales.dtype} and shape {scales.shape} do not match "
            f"{len(codes)} codes of dimension {dim} (float16, one per {BLOCK} dimensions)"
        )
    if len(starts) != len(ends) or (starts < 0).any() or (ends > len(codes)).any():
        raise NclueError(f"token spans outside the {len(codes)} stored tokens")


@cache
def half_floats() -> np.ndarray:
    """float32 value of every float16 bit pattern (numba has no float16 arrays: scales are looked up)."""
    return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32)
