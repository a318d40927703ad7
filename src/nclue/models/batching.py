"""Encode many texts in one call when that gives every text exactly the vectors it has alone.

A query's vector must depend on its text only, never on the texts that shared its padded batch:
otherwise a run's scores would depend on which texts an earlier run left in the cache. The dense
and late-interaction systems therefore encoded each query text in its own forward pass, which on
two cores costs 3.7 ms for a 15-token text against 2.3 ms a text in batches of 32
(``benchmarks/RESULTS.md``).

Batching is exact where the forward pass is row-independent and padding adds exact zeros: the
padded keys' attention weights underflow to 0.0, a zero term leaves a floating-point sum unchanged,
GEMM kernels accumulate each output element over ``k`` in the same order whatever the number of
rows, and mean pooling sums tokens along a strided axis (one sequential sum per column, so trailing
zero rows change nothing). ONNX Runtime's fp32 graph behaves so (MiniLM, 520 query and page texts
of 1–256 tokens in random batches of 2–64: every pooled and token vector bit-identical to the text
encoded alone); the bfloat16 and PyTorch backends need not.

So it is checked, not assumed: :func:`batch_independent` encodes :data:`PROBE_TEXTS` (6 to 65
tokens) one by one and then together, once per encoder, and :func:`encode_as_alone` batches
only where every pooled and token vector came out bit-identical; elsewhere it encodes one text per
call as before. Either way the result equals encoding each text alone.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence

import numpy as np

from nclue.models.encoder import Encoder, encode_with_tokens

_WORDS = (
    "conjunctive retrieval over long documents finds the manual whose pages together cover every "
    "condition of a query: line numbering, a critical apparatus, footnotes in several series, the "
    "package options, the index of first lines and the bibliography style all on different pages"
).split()
PROBE_TEXTS: tuple[str, ...] = tuple(" ".join(_WORDS[i % len(_WORDS)] for i in range(n)) for n in (2, 12, 53))
"""Texts of 6, 16 and 65 tokens with MiniLM's tokenizer: a partial 16-element vector block, a full one,
and a row past four blocks (the probe costs about 50 ms on two cores)."""

_VERDICTS: weakref.WeakKeyDictionary[object, bool] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def batch_independent(encoder: Encoder) -> bool:
    """Whether ``encoder`` gives each of :data:`PROBE_TEXTS` the same pooled and token vectors
    (bit for bit) in one batch as alone; probed once per encoder object, then remembered."""
    with _LOCK:
        try:
            verdict = _VERDICTS.get(encoder)
        except TypeError:  # an encoder that cannot be weakly referenced is probed on every call
            return _probe(encoder)
        if verdict is None:
            verdict = _probe(encoder)
            _VERDICTS[encoder] = verdict
        return verdict


def _probe(encoder: Encoder) -> bool:
    if not hasattr(encoder, "token_vectors"):
        return False
    alone = [encode_with_tokens(encoder, [text]) for text in PROBE_TEXTS]
    pooled, tokens = encode_with_tokens(encoder, list(PROBE_TEXTS))
    return all(
        np.array_equal(pooled[i], one[0][0]) and np.array_equal(tokens[i], one[1][0]) for i, one in enumerate(alone)
    )


def encode_as_alone(encoder: Encoder, texts: Sequence[str]) -> np.ndarray:
    """``(len(texts), dim)`` float32: each text's vector as ``encoder.encode([text])`` gives it, in one
    call where :func:`batch_independent`, else one call per text."""
    if len(texts) > 1 and batch_independent(encoder):
        return encoder.encode(list(texts))
    return (
        np.stack([encoder.encode([text])[0] for text in texts])
        if len(texts)
        else np.zeros((0, encoder.dim), np.float32)
    )


def encode_with_tokens_as_alone(encoder: Encoder, texts: Sequence[str]) -> tuple[np.ndarray, list[np.ndarray]]:
    """:func:`~nclue.models.encoder.encode_with_tokens` of ``texts``, each text's vectors as it gets them
    encoded alone (one call where :func:`batch_independent`, else one per text)."""
    if len(texts) > 1 and batch_independent(encoder):
        return encode_with_tokens(encoder, list(texts))
    parts = [encode_with_tokens(encoder, [text]) for text in texts]
    if not parts:
        return np.zeros((0, encoder.dim), np.float32), []
    return np.stack([p[0][0] for p in parts]), [p[1][0] for p in parts]
