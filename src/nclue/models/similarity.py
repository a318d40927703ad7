"""Similarity products of encoder vectors whose rows do not depend on the batch they came in.

``rows @ matrix.T`` is computed by BLAS as a matrix–vector product (GEMV) when ``rows`` has one row
and as a matrix–matrix product (GEMM) otherwise. The two sum in different orders, so a text's
cosines differ in the last bit depending on how many texts shared its call — and a text scored
alone (a cache miss) would rank ties differently from the same text scored in a batch. Run files
would then depend on the cache history: a serial matrix and a parallel one would not be byte-identical.
A one-row call is therefore padded to two rows and the copy dropped; every batch of two or more
rows goes through GEMM, whose rows were found equal bit for bit across batch sizes (OpenBLAS,
float32; ``tests/models/test_similarity.py``).
"""

from __future__ import annotations

import numpy as np


def row_products(rows: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """``rows @ matrix.T``, each output row identical whatever the number of ``rows`` passed."""
    if rows.shape[0] == 1:
        return (np.repeat(rows, 2, axis=0) @ matrix.T)[:1]
    return rows @ matrix.T
