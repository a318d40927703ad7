"""Texts encoded together must get exactly the vectors they get alone, or not be batched."""

from __future__ import annotations

import numpy as np
import pytest

from nclue.models.batching import batch_independent, encode_as_alone, encode_with_tokens_as_alone


def _mixed_texts(page_texts: list[str]) -> list[str]:
    """Forty texts of 1 to ~256 word pieces cut from real pages (queries are short, conditions
    shorter, and some callers encode page-length texts)."""
    rng = np.random.default_rng(3)
    out = []
    for i in range(40):
        words = page_texts[i % len(page_texts)].split()
        n = int(rng.integers(1, 200))
        start = int(rng.integers(0, max(1, len(words) - n)))
        out.append(" ".join(words[start : start + n]) or "x")
    return out


def test_onnx_fp32_texts_get_their_vectors_alone_batched_or_not(page_texts: list[str]) -> None:
    from nclue.models.encoder import load_encoder

    encoder = load_encoder(None, backend="onnx", threads=2)
    texts = _mixed_texts(page_texts)
    alone = [encoder.encode_with_tokens([t]) for t in texts]
    # The probe passes on the machines measured (benchmarks/RESULTS.md); where it does not, the texts
    # are encoded one by one and the equalities below hold all the same.
    pooled = encode_as_alone(encoder, texts)
    both, tokens = encode_with_tokens_as_alone(encoder, texts)
    for i, (one_pooled, one_tokens) in enumerate(alone):
        assert np.array_equal(pooled[i], one_pooled[0]), i
        assert np.array_equal(both[i], one_pooled[0]), i
        assert np.array_equal(tokens[i], one_tokens[0]), i


class _BatchDependent:
    """An encoder whose vectors move with the batch size (as a padded bfloat16 batch can)."""

    dim = 4

    def __init__(self) -> None:
        self.calls: list[int] = []

    def encode(self, texts):  # noqa: ANN001, ANN201
        self.calls.append(len(texts))
        return np.array([[len(t), len(texts), 0.0, 1.0] for t in texts], dtype=np.float32)

    def token_vectors(self, texts):  # noqa: ANN001, ANN201
        return [np.full((len(t), 4), len(texts), dtype=np.float32) for t in texts]


def test_a_batch_dependent_encoder_is_detected_and_fed_one_text_at_a_time() -> None:
    encoder = _BatchDependent()
    assert not batch_independent(encoder)
    encoder.calls.clear()
    texts = ["one", "three", "seven words"]
    pooled = encode_as_alone(encoder, texts)
    assert encoder.calls == [1, 1, 1]
    np.testing.assert_array_equal(pooled, np.array([[3, 1, 0, 1], [5, 1, 0, 1], [11, 1, 0, 1]], np.float32))
    _, tokens = encode_with_tokens_as_alone(encoder, texts)
    assert all((t == 1).all() for t in tokens)


def test_the_verdict_is_probed_once_per_encoder() -> None:
    encoder = _BatchDependent()
    batch_independent(encoder)
    probed = len(encoder.calls)
    assert probed > 0
    batch_independent(encoder)
    assert len(encoder.calls) == probed


@pytest.mark.parametrize("texts", [[], ["only one"]])
def test_no_probe_for_fewer_than_two_texts(texts: list[str]) -> None:
    encoder = _BatchDependent()
    assert encode_as_alone(encoder, texts).shape == (len(texts), 4)
    assert encoder.calls == [1] * len(texts)


class _NoTokens(_BatchDependent):
    """A batch-independent encoder without token vectors (as a static model2vec model)."""

    def encode(self, texts):  # noqa: ANN001, ANN201
        self.calls.append(len(texts))
        return np.array([[len(t), 0.0, 0.0, 1.0] for t in texts], dtype=np.float32)

    def token_vectors(self, texts):  # noqa: ANN001, ANN201
        from nclue.errors import NclueError

        raise NclueError("the static backend has no contextual token vectors")


def test_an_encoder_without_token_vectors_batches_its_pooled_vectors_only() -> None:
    encoder = _NoTokens()
    assert batch_independent(encoder)
    assert not batch_independent(encoder, tokens=True)
    encoder.calls.clear()
    np.testing.assert_array_equal(encode_as_alone(encoder, ["a", "bcd"])[:, 0], [1, 3])
    assert encoder.calls == [2]


class _Slotted:
    """An encoder that cannot be weakly referenced: its verdict cannot be remembered."""

    __slots__ = ("calls",)
    dim = 4

    def __init__(self) -> None:
        self.calls: list[int] = []

    def encode(self, texts):  # noqa: ANN001, ANN201
        self.calls.append(len(texts))
        return np.ones((len(texts), 4), dtype=np.float32)


def test_an_encoder_that_cannot_be_weakly_referenced_gets_one_text_per_call_and_no_probe() -> None:
    encoder = _Slotted()
    encode_as_alone(encoder, ["a", "b", "c"])
    assert encoder.calls == [1, 1, 1]
