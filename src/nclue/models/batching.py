"""Encode many texts in one call when that gives every text exactly the vectors it has alone.

A query's vector must depend on its text only, never on the texts that shared its padded batch:
otherwise a run's scores would depend on which texts an earlier run left in the cache. The dense
and late-interaction systems therefore encoded each query text in its own forward pass, which on
two cores costs 3.7 ms for a 15-token text against 2.3 ms a text in batches of 32
(``benchmarks/RESULTS.md``).

Batching can be exact when the forward pass treats rows independently and padding adds exact zeros:
- the padded keys' attention weights underflow to 0.0, and a zero term leaves a floating-point sum
  unchanged;
- the matrix kernels sum each output element over ``k`` in an order that does not depend on the
  number of rows. ONNX Runtime's MLAS kernels do so as measured; OpenBLAS's GEMM does not
  (:mod:`nclue.models.similarity`);
- mean pooling sums tokens along a strided axis, one sequential sum per column, so trailing zero
  rows change nothing.

ONNX Runtime's fp32 MiniLM graph was bit-identical on a 2-core AVX-512 machine: 520 query and page
texts of 1–256 tokens in random batches of 2–64 at two threads, and 242 more at 1, 2, 4 and 16
threads, each gave every pooled and token vector as when encoded alone. Its int8 graph, PyTorch
fp32 and bfloat16 are not batch-independent: most vectors move in the last bits.

So batching is checked, not assumed. :func:`batch_independent` encodes :data:`PROBE_TEXTS` one by
one and then together, once per encoder. The check covers the pooled vectors, plus the token
vectors where they are asked for; an encoder that has no token vectors fails the token check.
The encoders that pass are batched, and all others get one text per call, as before. The probe is a
sample, not a proof: the guarantee rests on the mechanism above and the measurements, and the probe
catches a backend or machine where the mechanism fails. Encoders that cannot be weakly referenced
(so their verdict cannot be remembered) are never batched.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence

import numpy as np

from nclue.errors import NclueError
from nclue.models.encoder import Encoder, encode_with_tokens

_WORDS = (
    "conjunctive retrieval over long documents finds the manual whose pages together cover every "
    "condition of a query: line numbering, a critical apparatus, footnotes in several series, the "
    "package options, the index of first lines and the bibliography style all on different pages"
).split()
PROBE_TEXTS: tuple[str, ...] = tuple(" ".join(_WORDS[i % len(_WORDS)] for i in range(n)) for n in (2, 12, 53))
"""Texts of 6, 16 and 65 tokens with MiniLM's tokenizer: a partial 16-element vector block, a full one,
and a row past four blocks (the probe costs about 50 ms on two cores)."""

_VERDICTS: weakref.WeakKeyDictionary[object, dict[bool, bool]] = weakref.WeakKeyDictionary()
_LOCK = threading.RLock()


def batch_independent(encoder: Encoder, tokens: bool = False) -> bool:
    """Whether ``encoder`` gives each of :data:`PROBE_TEXTS` the same pooled vector (and, with ``tokens``,
    the same token vectors), bit for bit, in one batch as alone. Probed once per encoder object and
    kind, then remembered; ``False`` for an encoder that cannot be weakly referenced."""
    with _LOCK:
        try:
            verdicts = _VERDICTS.setdefault(encoder, {})
        except TypeError:
            return False
        if tokens not in verdicts:
            verdicts[tokens] = _probe(encoder, tokens)
        return verdicts[tokens]


def _probe(encoder: Encoder, tokens: bool) -> bool:
    texts = list(PROBE_TEXTS)
    if not tokens:
        alone = [encoder.encode([text])[0] for text in texts]
        return all(np.array_equal(a, b) for a, b in zip(encoder.encode(texts), alone, strict=True))
    try:
        alone = [encode_with_tokens(encoder, [text]) for text in texts]
        pooled, vectors = encode_with_tokens(encoder, texts)
    except (NclueError, NotImplementedError, AttributeError):  # no token vectors (static models)
        return False
    return all(
        np.array_equal(pooled[i], one[0][0]) and np.array_equal(vectors[i], one[1][0]) for i, one in enumerate(alone)
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
    if len(texts) > 1 and batch_independent(encoder, tokens=True):
        return encode_with_tokens(encoder, list(texts))
    parts = [encode_with_tokens(encoder, [text]) for text in texts]
    if not parts:
        return np.zeros((0, encoder.dim), np.float32), []
    return np.stack([p[0][0] for p in parts]), [p[1][0] for p in parts]
