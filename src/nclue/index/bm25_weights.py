"""BM25 term weights of the five variants bm25s implements, vectorised (arrays in, arrays out).

Written here from Kamphuis, de Vries, Boytsov and Lin, *Which BM25 do you mean? A large-scale
reproducibility study of scoring variants* (ECIR 2020), in bm25s's parameterisation, so the lexical
index does not reach into bm25s's private scorer functions; ``tests/index/test_lexical.py`` checks
every variant's page scores against bare ``bm25s.BM25(method=…)`` on real pages.

With ``L = 1 − b + b · |d| / avg|d|`` (the length normalisation of unit ``d``), ``N`` units and a
term in ``df`` of them:

========== ====================================== ==========================================
variant    term-frequency factor ``tfc(tf)``      ``idf``
========== ====================================== ==========================================
robertson  ``tf / (k1·L + tf)``                   ``ln(max(1, (N − df + ½) / (df + ½)))``
lucene     ``tf / (k1·L + tf)``                   ``ln(1 + (N − df + ½) / (df + ½))``
atire      ``tf·(k1 + 1) / (tf + k1·L)``          ``ln(N / df)``
bm25l      ``(k1 + 1)(c + δ) / (k1 + c + δ)``,    ``ln((N + 1) / (df + ½))``
           ``c = tf / L``
bm25+      ``(k1 + 1)·tf / (k1·L + tf) + δ``      ``ln((N + 1) / df)``
========== ====================================== ==========================================

(bm25s, like Lucene since 8, drops the constant ``k1 + 1`` numerator of the robertson and lucene
factors.) The weight of a term in a unit is ``idf · tfc``; BM25L and BM25+ give a term absent
from a unit the non-zero weight ``idf · tfc(0)``, which the index stores separately.
"""

from __future__ import annotations

import numpy as np

from nclue.index.options import METHODS


def term_frequency_factor(
    method: str, tf: np.ndarray, length: np.ndarray, avg_length: float, k1: float, b: float, delta: float
) -> np.ndarray:
    """``tfc(tf)`` of ``method`` (module table) for term counts ``tf`` in units of ``length`` tokens."""
    tf = np.asarray(tf, dtype=np.float64)
    norm = 1.0 - b + b * np.asarray(length, dtype=np.float64) / avg_length
    if method in ("robertson", "lucene"):
        return tf / (k1 * norm + tf)
    if method == "atire":
        return tf * (k1 + 1.0) / (tf + k1 * norm)
    if method == "bm25l":
        c = tf / norm
        return (k1 + 1.0) * (c + delta) / (k1 + c + delta)
    if method == "bm25+":
        return (k1 + 1.0) * tf / (k1 * norm + tf) + delta
    raise ValueError(f"BM25 variant {method!r} is not one of {', '.join(METHODS)}")


def inverse_document_frequency(method: str, df: np.ndarray, n_units: int) -> np.ndarray:
    """``idf(df)`` of ``method`` (module table) over ``n_units`` units; 0 where ``df == 0`` (a term no unit holds)."""
    df = np.asarray(df, dtype=np.float64)
    held = df > 0
    out = np.zeros(df.shape)
    out[held] = _idf(method, df[held], float(n_units))
    return out


def _idf(method: str, df: np.ndarray, n: float) -> np.ndarray:
    if method == "robertson":
        return np.log(np.maximum((n - df + 0.5) / (df + 0.5), 1.0))
    if method == "lucene":
        return np.log(1.0 + (n - df + 0.5) / (df + 0.5))
    if method == "atire":
        return np.log(n / df)
    if method == "bm25l":
        return np.log((n + 1.0) / (df + 0.5))
    if method == "bm25+":
        return np.log((n + 1.0) / df)
    raise ValueError(f"BM25 variant {method!r} is not one of {', '.join(METHODS)}")


def saturation_limit(method: str, k1: float, delta: float) -> float:
    """``lim tfc(tf)`` as ``tf → ∞`` (the largest factor a term can reach): 1, ``k1 + 1`` or ``k1 + 1 + δ``."""
    if method in ("robertson", "lucene"):
        return 1.0
    if method in ("atire", "bm25l"):
        return k1 + 1.0
    if method == "bm25+":
        return k1 + 1.0 + delta
    raise ValueError(f"BM25 variant {method!r} is not one of {', '.join(METHODS)}")
