"""A text's similarity row must not depend on how many texts shared the call."""

from __future__ import annotations

import numpy as np

from nclue.models.similarity import row_products


def test_one_row_equals_its_row_in_any_batch() -> None:
    rng = np.random.default_rng(7)
    rows = rng.standard_normal((300, 384)).astype(np.float32)
    matrix = rng.standard_normal((5000, 384)).astype(np.float32)
    full = row_products(rows, matrix)
    for size in (1, 2, 3, 17, 64, 299):
        for start in (0, 1, 300 - size):
            part = row_products(rows[start : start + size], matrix)
            assert np.array_equal(part, full[start : start + size]), (size, start)


def test_values_are_the_plain_product() -> None:
    rng = np.random.default_rng(8)
    rows, matrix = rng.standard_normal((1, 8)).astype(np.float32), rng.standard_normal((5, 8)).astype(np.float32)
    np.testing.assert_allclose(
        row_products(rows, matrix), rows.astype(np.float64) @ matrix.T.astype(np.float64), rtol=1e-5
    )
