"""Token vector codes: symmetric block quantisation at 4 or 8 bits (arrays in, arrays out).

**Codec** (symmetric block quantisation, as GGML's ``Q4_0`` / ``Q8_0``): each L2-normalised
token vector is cut into blocks of ``BLOCK = 32`` dimensions; block ``b`` stores the scale
``s_b = max_j |x_j| / L`` (float16; ``L = 2^(bits−1) − 1``, i.e. 7 for 4 bits, 127 for 8)
and the integers ``q_j = round(x_j / s_b) ∈ [−L, L]``; decoding is ``x̂_j = s_b q_j``.
At 4 bits a 384-dimensional token costs 192 + 24 = 216 bytes (int8: 408), against 1,536 in
float32. No training pass is needed, so the index is written shard by shard and a killed
build resumes. Why not faiss: its product and residual quantisers must be trained on a
sample before any code is written (which breaks shard-wise resumption), and on 99k real
MiniLM token vectors of the Debian collection (400 pages × 150 query texts, page-level
MaxSim top-10 against exact) PQ96 kept 0.914 at 96 B/token and SQ4 0.954 at 192 B/token,
against 0.968 for this codec at 4 bits and 0.996 at 8 bits (``benchmarks/maxsim.py``
reports the agreement of the stored index on the development benchmark).

The stored index that holds these codes is :mod:`nclue.index.tokens`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from nclue.errors import NclueError

BLOCK = 32
"""Dimensions per quantisation block (one float16 scale each)."""
BITS = (4, 8)
DEFAULT_BITS = 4


def require_bits(bits: int) -> None:
    """Refuse a code width other than 4 or 8 bits."""
    _levels(bits)


def _levels(bits: int) -> int:
    if bits not in BITS:
        raise NclueError(f"token codes must have 4 or 8 bits, got {bits}")
    return 2 ** (bits - 1) - 1


ROWS = 2048
"""Token vectors quantised per step (3 MiB of float32 at 384 dimensions): the temporaries stay in
the CPU cache instead of costing fresh pages of memory. On 879 whole-page chunks (224k tokens) one
step over all rows took 6.8 s, of which most was page faults on five full-size temporaries."""


def quantize(vectors: np.ndarray, bits: int = DEFAULT_BITS) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, scales)`` of ``(n, dim)`` vectors (``dim`` a multiple of :data:`BLOCK`); see the module docstring.

    ``codes`` is ``(n, dim · bits / 8)`` uint8 (4 bits: two values per byte, even dimension in
    the low nibble, each stored as ``q + 8``; 8 bits: ``q`` as int8 bytes); ``scales`` is
    ``(n, dim / BLOCK)`` float16. Rows are coded :data:`ROWS` at a time, each row alone.
    """
    levels = _levels(bits)
    x = np.asarray(vectors)
    if x.ndim != 2 or x.shape[1] % BLOCK:
        raise NclueError(f"token vectors of shape {x.shape} cannot be cut into blocks of {BLOCK} dimensions")
    n, dim = x.shape
    codes = np.empty((n, dim * bits // 8), dtype=np.uint8)
    scales = np.empty((n, dim // BLOCK), dtype=np.float16)
    for lo in range(0, n, ROWS):
        hi = min(lo + ROWS, n)
        _quantize_rows(np.asarray(x[lo:hi], dtype=np.float32), levels, bits, codes[lo:hi], scales[lo:hi])
    return codes, scales


def _quantize_rows(x: np.ndarray, levels: int, bits: int, codes: np.ndarray, scales: np.ndarray) -> None:
    """Code the rows ``x`` into the output slices ``codes`` and ``scales`` (:func:`quantize`)."""
    n, dim = x.shape
    blocks = x.reshape(n, dim // BLOCK, BLOCK)
    np.divide(np.abs(blocks).max(axis=2), levels, out=scales, casting="unsafe")
    wide = scales.astype(np.float32)[:, :, None]
    q = np.divide(blocks, wide, out=np.zeros_like(blocks), where=wide > 0)
    np.rint(q, out=q)
    np.clip(q, -levels, levels, out=q)
    q = q.astype(np.int8).reshape(n, dim)
    if bits == 8:
        codes[:] = q.view(np.uint8)
        return
    q += 8
    nibbles = q.view(np.uint8)
    np.bitwise_or(nibbles[:, 0::2], nibbles[:, 1::2] << 4, out=codes)


def dequantize(codes: np.ndarray, scales: np.ndarray, bits: int = DEFAULT_BITS) -> np.ndarray:
    """``(n, dim)`` float32 vectors ``x̂ = s_b · q`` from :func:`quantize`'s output."""
    _levels(bits)
    n = len(codes)
    if bits == 4:  # nibbles unpacked arithmetically (8× faster than a byte → pair lookup table)
        values = np.empty((n, codes.shape[1] * 2), dtype=np.float32)
        values[:, 0::2] = codes & 15
        values[:, 1::2] = codes >> 4
        values -= 8
    else:
        values = codes.view(np.int8).astype(np.float32)
    dim = values.shape[1]
    blocks = values.reshape(n, dim // BLOCK, BLOCK)
    blocks *= scales.astype(np.float32)[:, :, None]
    return blocks.reshape(n, dim)


def pack_tokens(vectors: Sequence[np.ndarray], bits: int = DEFAULT_BITS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(codes, scales, lengths)`` of several texts' ``(n_tokens, dim)`` token vectors, stacked in order.

    The texts are coded a few at a time (about :data:`ROWS` tokens), never stacked whole."""
    lengths = np.fromiter((len(v) for v in vectors), dtype=np.int64, count=len(vectors))
    dim = int(vectors[0].shape[1]) if len(vectors) else BLOCK
    if dim % BLOCK:
        raise NclueError(f"token vectors of dimension {dim} cannot be cut into blocks of {BLOCK}")
    codes = np.empty((int(lengths.sum()), dim * bits // 8), dtype=np.uint8)
    scales = np.empty((len(codes), dim // BLOCK), dtype=np.float16)
    ends = np.cumsum(lengths)
    first = 0
    while first < len(vectors):
        last = max(int(np.searchsorted(ends, ends[first] - lengths[first] + ROWS, side="right")), first + 1)
        lo, hi = int(ends[first] - lengths[first]), int(ends[last - 1])
        group = vectors[first] if last == first + 1 else np.concatenate(vectors[first:last])
        codes[lo:hi], scales[lo:hi] = quantize(group, bits)
        first = last
    return codes, scales, lengths
