"""The late-interaction token index: codec by hand, one pass with the dense vectors, protection, ``--all``."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from nclue.errors import NclueError
from nclue.index.token_codec import BLOCK, dequantize, quantize
from nclue.index.tokens import open_token_index


def reference_codec(x: np.ndarray, bits: int) -> np.ndarray:
    """Plain-Python block quantisation (scale = max|x|/L per 32 values, rounded to float16; q = round(x / scale))."""
    levels = 2 ** (bits - 1) - 1
    out = []
    for row in x.tolist():
        decoded = []
        for b in range(0, len(row), BLOCK):
            block = row[b : b + BLOCK]
            scale = float(np.float16(max(abs(v) for v in block) / levels))
            decoded += [0.0 if scale == 0 else max(-levels, min(levels, round(v / scale))) * scale for v in block]
        out.append(decoded)
    return np.asarray(out, dtype=np.float32)


def test_codec_by_hand() -> None:
    x = np.zeros((1, 64), np.float32)
    x[0, :4] = [0.7, -0.35, 0.1, -0.7]  # block 0: scale 0.7 / 7 = 0.1 (as float16)
    codes, scales = quantize(x, bits=4)
    assert codes.shape == (1, 32) and scales.shape == (1, 2) and scales.dtype == np.float16
    assert scales[0, 0] == np.float16(0.1) and scales[0, 1] == 0
    # q = [7, -4 (round half to even of -3.5), 1, -7, 0, ...] stored as q + 8, even index in the low nibble
    assert codes[0, 0] == (7 + 8) | ((-4 + 8) << 4)
    assert codes[0, 1] == (1 + 8) | ((-7 + 8) << 4)
    assert codes[0, 2] == 8 | (8 << 4)
    s = float(np.float16(0.1))
    np.testing.assert_allclose(dequantize(codes, scales, 4)[0, :5], [7 * s, -4 * s, s, -7 * s, 0.0], rtol=1e-6)
    codes8, scales8 = quantize(x, bits=8)
    # scale = float16(0.7 / 127) = 1445 · 2^-18 = 0.0055122; -0.35 / 0.0055122 = -63.496 → -63; 0.1 / it = 18.14 → 18
    assert scales8[0, 0] == np.float16(1445 * 2.0**-18)
    assert codes8.view(np.int8)[0, :4].tolist() == [127, -63, 18, -127]


@pytest.mark.parametrize("bits", [4, 8])
def test_codec_matches_a_plain_python_reference(bits: int) -> None:
    rng = np.random.default_rng(11)
    x = rng.normal(size=(40, 384)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    x[3, :BLOCK] = 0.0  # an all-zero block decodes to zeros
    codes, scales = quantize(x, bits)
    assert codes.shape == (40, 384 * bits // 8)
    np.testing.assert_allclose(dequantize(codes, scales, bits), reference_codec(x, bits), atol=1e-7)


def test_codec_refuses_bad_input() -> None:
    with pytest.raises(NclueError, match="4 or 8 bits"):
        quantize(np.zeros((1, 32), np.float32), bits=2)
    with pytest.raises(NclueError, match="blocks of 32"):
        quantize(np.zeros((1, 40), np.float32))


@pytest.mark.parametrize("bits", [4, 8])
def test_packing_in_steps_codes_each_text_as_the_reference(bits: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Texts coded a few rows at a time (steps of 5: texts longer than a step, empty texts, groups)
    decode to the plain-Python reference of each text."""
    from nclue.index import token_codec

    monkeypatch.setattr(token_codec, "ROWS", 5)
    rng = np.random.default_rng(3)
    texts = [rng.normal(size=(n, 64)).astype(np.float32) for n in (0, 2, 12, 1, 0, 3, 5, 7)]
    codes, scales, lengths = token_codec.pack_tokens(texts, bits)
    assert lengths.tolist() == [0, 2, 12, 1, 0, 3, 5, 7] and len(codes) == len(scales) == 30
    ends = np.cumsum(lengths)
    for text, end, n in zip(texts, ends, lengths):
        np.testing.assert_allclose(
            dequantize(codes[end - n : end], scales[end - n : end], bits),
            reference_codec(text, bits).reshape(n, 64),
            atol=1e-7,
        )


@pytest.fixture(scope="module")
def token_source(tmp_path_factory: pytest.TempPathFactory, small_collection: Path) -> Path:
    """One real 16-page document with its dense and token index built in one pass (ONNX fp32)."""
    from nclue.index.dense import build_dense_index
    from tests.dense.conftest import cut_collection

    coll = cut_collection(small_collection, tmp_path_factory.mktemp("tokens") / "coll", ("latex/functan/functan",))
    build_dense_index(coll, backend="onnx", tokens=True, shard_size=8)
    return coll


@pytest.fixture
def tokens_coll(token_source: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(token_source, tmp_path / "coll"))


def opened(coll: Path):  # noqa: ANN201
    from nclue.index.dense import open_dense_index

    dense = open_dense_index(coll)
    return dense, open_token_index(coll, dense)


def test_one_pass_stores_the_encoders_token_vectors(token_source: Path) -> None:
    from nclue.corpus.store import PageStore

    dense, tokens = opened(token_source)
    assert tokens is not None and tokens.bits == 4 and tokens.manifest["bytes_per_token"] == 216
    texts = dense.chunks.texts(PageStore.open(token_source).texts)
    encoder = dense.load_encoder()
    exact = encoder.token_vectors(texts)
    # offsets: the tokenizer's own count per chunk ([CLS] + pieces + [SEP], at most 256)
    assert np.diff(tokens.offsets).tolist() == [len(v) for v in exact]
    decoded = tokens.tokens(0, len(texts))
    cos = (np.concatenate(exact) * decoded).sum(axis=1) / np.linalg.norm(decoded, axis=1)
    assert cos.min() > 0.95 and cos.mean() > 0.99
    # the pooled dense vectors of the same pass equal the encoder's own embeddings
    np.testing.assert_allclose(dense.vectors, encoder.encode(texts), atol=1e-5)


def test_token_only_pass_equals_the_one_pass_build(token_source: Path, tmp_path: Path) -> None:
    from nclue.index.dense import build_dense_index

    coll = Path(shutil.copytree(token_source, tmp_path / "coll"))
    shutil.rmtree(coll / "index" / "tokens")
    dense, missing = opened(coll)
    assert missing is None
    events: list[tuple[str, int, int | None]] = []
    build_dense_index(coll, backend="onnx", tokens=True, shard_size=8, progress=lambda *event: events.append(event))
    # dense kept (no "dense chunks" stage), a token-only pass over every chunk
    assert events[0] == ("token chunks", 0, len(dense.chunks))
    assert {stage for stage, _, _ in events} == {"token chunks"}
    assert sum(n for _, n, _ in events) == len(dense.chunks)
    _, rebuilt = opened(coll)
    _, original = opened(token_source)
    np.testing.assert_array_equal(np.asarray(rebuilt.codes), np.asarray(original.codes))
    np.testing.assert_array_equal(rebuilt.offsets, original.offsets)


def test_a_killed_token_pass_resumes(tokens_coll: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nclue.index import tokens as module
    from nclue.index.tokens import build_token_index

    shutil.rmtree(tokens_coll / "index" / "tokens")
    dense, _ = opened(tokens_coll)
    real = module.TokenShards.write
    calls: list[int] = []

    def failing(self, shard, vectors):  # noqa: ANN001
        calls.append(shard)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real(self, shard, vectors)

    monkeypatch.setattr(module.TokenShards, "write", failing)
    with pytest.raises(KeyboardInterrupt):
        build_token_index(tokens_coll, dense, shard_size=8)
    assert opened(tokens_coll)[1] is None  # unfinished: not used
    monkeypatch.setattr(module.TokenShards, "write", real)
    written: list[int] = []
    monkeypatch.setattr(module.TokenShards, "write", lambda self, s, v: (written.append(s), real(self, s, v)))
    events: list[tuple[str, int, int | None]] = []
    build_token_index(tokens_coll, dense, shard_size=8, progress=lambda *event: events.append(event))
    # shards may finish out of order (one encoder process per CPU): the one written before the kill is kept
    assert calls[0] not in written and len(written) == len(set(calls) | set(written)) - 1
    left = sum(min(8, len(dense.chunks) - 8 * shard) for shard in written)
    assert events[0] == ("token chunks", 0, left) and left < len(dense.chunks)
    assert sum(n for _, n, _ in events) == left
    assert opened(tokens_coll)[1] is not None


def test_damaged_token_files_are_named(cli, tokens_coll: Path) -> None:
    query = '"Banach space"; "operator"'
    assert cli("search", tokens_coll, query, "-s", "maxsim.joint(ptop3)").exit_code == 0
    codes = next((tokens_coll / "index" / "tokens").glob("*/codes.npy"))
    data = bytearray(codes.read_bytes())
    data[len(data) // 2] ^= 0xFF  # between the sampled blocks: loads pass, --verify fails
    codes.write_bytes(bytes(data))
    result = cli("index", tokens_coll, "--verify")
    assert result.exit_code == 1 and "✗ tokens/" in result.output and "codes.npy" in result.output
    codes.write_bytes(bytes(data[: len(data) // 2]))
    result = cli("search", tokens_coll, query, "-s", "maxsim.joint(ptop3)")
    assert result.exit_code == 2 and str(codes) in result.output and "damaged" in result.output


def test_a_token_index_of_another_dense_build_is_refused(tokens_coll: Path) -> None:
    manifest_path = next((tokens_coll / "index" / "tokens").glob("*/manifest.json"))
    manifest = json.loads(manifest_path.read_text())
    manifest["dense"]["chunks_sha256"] = "0" * 64
    manifest_path.write_text(json.dumps(manifest))
    from nclue.index.dense import open_dense_index

    with pytest.raises(NclueError, match="another version of the dense index.*--rebuild"):
        open_token_index(tokens_coll, open_dense_index(tokens_coll))


@pytest.mark.slow
def test_index_all_builds_in_order_and_keeps_current_ones(cli, tiny_source_copy: Path) -> None:
    from nclue.index.builders import BUILDERS

    assert [b.name for b in BUILDERS] == ["lexical", "duplicates", "dense", "tokens", "structure"]
    args = ("index", tiny_source_copy, "--all", "--dense-backend", "onnx", "--dense-max-chunks", "1")
    first = cli(*args)
    assert first.exit_code == 0, first.output
    assert re.search(r"^indexes .* 5/5", first.output, flags=re.M) and "dense chunks" in first.output
    actions = dict(re.findall(r"^(lexical|duplicates|dense|tokens|structure): (built|kept)", first.output, flags=re.M))
    # the dense builder writes the token index in the same encoder pass, so the tokens step finds it current
    assert actions == {
        "lexical": "built",
        "duplicates": "built",
        "dense": "built",
        "tokens": "kept",
        "structure": "built",
    }
    assert (tiny_source_copy / "index" / "duplicates" / "pairs.npz").is_file()
    assert (tiny_source_copy / "index" / "structure" / "headings.npy").is_file()
    second = cli(*args)
    assert second.exit_code == 0 and second.output.count(": kept") == 5
    assert cli("index", tiny_source_copy, "--verify").output.count("✓") == 3


@pytest.fixture
def tiny_source_copy(small_collection: Path, tmp_path: Path) -> Path:
    from tests.dense.conftest import cut_collection

    return cut_collection(small_collection, tmp_path / "tiny", ("latex/functan/functan",))


@pytest.mark.slow
def test_a_dense_index_of_other_settings_is_removed_with_its_tokens(cli, tiny_source_copy: Path) -> None:
    from nclue.index.builders import IndexOptions, remove_other_dense_indexes
    from nclue.index.options import DenseOptions

    args = ("index", tiny_source_copy, "--all", "--dense-backend", "onnx", "--dense-max-chunks", "1")
    assert cli(*args).exit_code == 0
    (built,) = [p.name for p in (tiny_source_copy / "index" / "dense").iterdir()]
    assert (tiny_source_copy / "index" / "tokens" / built).is_dir()
    same = IndexOptions(dense=DenseOptions(backend="onnx", max_chunks_per_page=1))
    assert remove_other_dense_indexes(tiny_source_copy, same) == []
    assert remove_other_dense_indexes(tiny_source_copy, IndexOptions(dense=DenseOptions(backend="onnx"))) == [
        built
    ]  # whole pages
    assert not (tiny_source_copy / "index" / "dense" / built).exists()
    assert not (tiny_source_copy / "index" / "tokens" / built).exists()
    assert (tiny_source_copy / "index" / "lexical").is_dir()


@pytest.mark.parametrize("bits", [4, 8])
def test_maxsim_from_codes_equals_decoding_then_the_product(bits: int) -> None:
    """The compiled kernel against the brute force ``mean_i max_t ⟨q_i, x̂_t⟩`` on decoded vectors, on
    pages empty, shorter than, equal to and across tile boundaries, with all-zero blocks."""
    from nclue.index.token_maxsim import pages_maxsim

    rng = np.random.default_rng(5)
    lengths = [1, 0, 63, 64, 65, 200, 5]
    x = rng.normal(size=(sum(lengths), 384)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    x[7, : 2 * BLOCK] = 0.0
    x[70] = 0.0  # a token whose every block is zero (scale 0)
    codes, scales = quantize(x, bits)
    ends = np.cumsum(lengths)
    starts = ends - np.array(lengths)
    query = rng.normal(size=(9, 384)).astype(np.float32)
    query /= np.linalg.norm(query, axis=1, keepdims=True)
    decoded = dequantize(codes, scales, bits)
    expected = [(query @ decoded[a:b].T).max(axis=1).mean() if b > a else 0.0 for a, b in zip(starts, ends)]
    got = pages_maxsim(query, codes, scales, starts, ends, bits)
    assert got.dtype == np.float32 and got.shape == (len(lengths),)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)
    order = np.array([6, 2, 0, 3])  # any subset, any order
    np.testing.assert_array_equal(pages_maxsim(query, codes, scales, starts[order], ends[order], bits), got[order])
    assert not pages_maxsim(query[:0], codes, scales, starts, ends, bits).any()
    with pytest.raises(NclueError, match="dimension"):
        pages_maxsim(query[:, :128], codes, scales, starts, ends, bits)
    with pytest.raises(NclueError, match="float16"):  # float32 scales would be misread as twice as many
        pages_maxsim(query, codes, scales.astype(np.float32), starts, ends, bits)
    with pytest.raises(NclueError, match="outside"):
        pages_maxsim(query, codes, scales, starts, ends + 1, bits)


def test_maxsim_without_numba_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from nclue.index.token_maxsim import pages_maxsim

    codes, scales = quantize(np.ones((4, 384), np.float32) / np.sqrt(384), 4)
    monkeypatch.setitem(sys.modules, "nclue.index.token_maxsim_kernels", None)  # as if numba were missing
    with pytest.raises(NclueError, match=r"needs numba.*nclue\[neural\]"):
        pages_maxsim(np.ones((2, 384), np.float32), codes, scales, np.array([0]), np.array([4]), 4)
