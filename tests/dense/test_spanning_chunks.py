"""Page-spanning chunks: windows over a document's joined pages, mapped back to the pages they cover.

Every word below is one MiniLM word piece (checked), so windows can be computed by hand.
"""

from __future__ import annotations

import numpy as np
import pytest

from nclue.corpus.store import PageStore
from nclue.errors import NclueError
from nclue.index.dense import build_dense_index, dense_settings, open_dense_index, select_index
from nclue.index.options import DenseOptions
from nclue.models.chunking import PAGE_SEPARATOR, chunk_documents, chunk_pages
from nclue.models.encoder import load_encoder, load_tokenizer
from nclue.systems.backbone import PageTable
from nclue.systems.dense import DenseBackbone
from tests.dense.handmade import write_collection

# page rows: 0 "alpha beta gamma" | 1 "" | 2 "delta epsilon" | 3 "zeta" (doc a) ; 4 "eta theta kappa lambda" (doc b)
DOCS = {"a.pdf": ["alpha beta gamma", "", "delta epsilon", "zeta"], "b.pdf": ["eta theta kappa lambda"]}
PAGES = [*DOCS["a.pdf"], *DOCS["b.pdf"]]


@pytest.fixture(scope="module")
def tokenizer():
    return load_tokenizer()


def test_words_are_single_pieces(tokenizer):
    assert [len(tokenizer.encode(p, add_special_tokens=False).ids) for p in PAGES] == [3, 0, 2, 1, 4]


def test_windows_by_hand(tokenizer):
    """Doc a has 6 tokens (alpha…zeta): window 3, overlap 1 → starts 0, 2, 4; doc b (4 tokens) → 0, 2."""
    chunks = chunk_documents(PAGES, [0, 4, 5], tokenizer, window=3, overlap=1)
    assert chunks.texts(PAGES) == [
        "alpha beta gamma",
        "gamma" + PAGE_SEPARATOR * 2 + "delta epsilon",  # over the empty page 1
        "epsilon" + PAGE_SEPARATOR + "zeta",
        "eta theta kappa",  # a new document: no window crosses documents
        "kappa lambda",
    ]
    covers = [chunks.cover_pages[a:b].tolist() for a, b in zip(chunks.cover_offsets[:-1], chunks.cover_offsets[1:])]
    assert covers == [[0], [0, 2], [2, 3], [4], [4]]  # the empty page 1 is never covered
    assert chunks.page.tolist() == [0, 0, 2, 4, 4] and chunks.start.tolist() == [0, 11, 6, 0, 10]
    columns, starts, rows = chunks.page_groups()
    assert rows.tolist() == [0, 2, 3, 4]
    assert [columns[a:b].tolist() for a, b in zip(starts, [*starts[1:], len(columns)])] == [[0, 1], [1, 2], [2], [3, 4]]


def test_per_page_chunks_keep_their_groups(tokenizer):
    chunks = chunk_pages(PAGES, tokenizer, window=3, overlap=1)
    assert chunks.cover_pages is None and not chunks.spanning
    columns, starts, rows = chunks.page_groups()
    assert columns is None and rows.tolist() == [0, 2, 3, 4] and starts.tolist() == [0, 1, 2, 3]


def test_spanning_index_scores_pages_by_covering_chunks(tmp_path):
    collection = write_collection(tmp_path / "coll", DOCS)
    path = build_dense_index(collection, DenseOptions(backend="torch", window=3, overlap=1, span_pages=True))
    assert "-span-" in path.name and select_index(collection, "span") == path
    index = open_dense_index(collection)
    assert index.manifest["span_pages"] is True and index.chunks.spanning
    texts = PageStore.open(collection).texts
    assert index.chunks.texts(texts)[1] == "gamma\n\ndelta epsilon"
    encoder = load_encoder(None, backend="torch")
    np.testing.assert_allclose(
        index.vectors, np.stack([encoder.encode([t])[0] for t in index.chunks.texts(texts)]), atol=1e-5
    )
    backbone = DenseBackbone(index, PageTable.from_store(PageStore.open(collection)))
    query = ["delta", "lambda"]
    cos = backbone.chunk_scores(query)
    expected = np.zeros((2, 5), np.float32)
    for page, chunk_ids in {0: [0, 1], 2: [1, 2], 3: [2], 4: [3, 4]}.items():
        expected[:, page] = cos[:, chunk_ids].max(axis=1)
    np.testing.assert_allclose(backbone.page_scores(query), expected, atol=1e-6)
    assert backbone.page_scores(query)[:, 1].tolist() == [0.0, 0.0]


def test_spanning_is_part_of_the_settings(tmp_path):
    collection = write_collection(tmp_path / "coll", DOCS)
    per_page = dense_settings(collection, DenseOptions())
    spanning = dense_settings(collection, DenseOptions(span_pages=True))
    assert spanning["key"] != per_page["key"] and spanning["settings"]["span_pages"] is True
    with pytest.raises(NclueError, match="--dense-max-chunks"):
        DenseOptions(span_pages=True, max_chunks_per_page=1).checked()


def test_cli_span_pages(tmp_path, cli):
    collection = write_collection(tmp_path / "coll", DOCS)
    args = ("--dense-backend", "torch", "--dense-window", "8", "--dense-overlap", "2", "--dense-span-pages")
    result = cli("index", collection, "--dense", "minilm", *args)
    assert result.exit_code == 0, result.output
    index = open_dense_index(collection)
    assert (index.manifest["window"], index.manifest["overlap"], index.manifest["span_pages"]) == (8, 2, True)
    assert index.chunks.page.tolist() == [0, 4]  # doc a (6 tokens) and doc b (4 tokens): one window each


def test_maxsim_reads_every_covering_chunk(tmp_path):
    """MaxSim on a spanning index scores a page by the tokens of every chunk covering it (brute force
    over the chunks' own token vectors), not by the chunks that start on it."""
    from nclue.index.tokens import open_token_index
    from nclue.systems.late_interaction import MaxSimBackbone, maxsim

    collection = write_collection(tmp_path / "coll", DOCS)
    build_dense_index(collection, DenseOptions(backend="torch", window=3, overlap=1, span_pages=True), tokens=True)
    index = open_dense_index(collection)
    texts = PageStore.open(collection).texts
    backbone = MaxSimBackbone(
        DenseBackbone(index, PageTable.from_store(PageStore.open(collection))), open_token_index(collection, index)
    )
    encoder = load_encoder(None, backend="torch")
    chunk_tokens = encoder.token_vectors(index.chunks.texts(texts))
    query = encoder.token_vectors(["zeta"])[0]
    for page, chunk_ids in {0: [0, 1], 2: [1, 2], 3: [2], 4: [3, 4]}.items():
        exact = maxsim(query, np.concatenate([chunk_tokens[c] for c in chunk_ids]))
        assert maxsim(query, backbone.page_vectors(page)) == pytest.approx(exact, abs=0.02)  # int4 token codes
    assert len(backbone.page_vectors(1)) == 0  # the empty page: no chunk covers it
    assert len(backbone.page_vectors(3)) == len(chunk_tokens[2])  # "zeta" starts no chunk, one covers it
    with pytest.raises(NclueError, match="--tokens"):  # without a token index, page text cannot be re-cut
        MaxSimBackbone(DenseBackbone(index, PageTable.from_store(PageStore.open(collection))))


def test_byte_level_separator_tokens_cover_no_page():
    """A byte-level BPE (RoBERTa, GPT and Qwen embedders) makes a token "Ċ" of each page separator; the
    one after an empty page lies on that page, which must still not count as covered."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    pages = ["alpha beta", "", "gamma delta"]
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    trainer = trainers.BpeTrainer(vocab_size=300, initial_alphabet=alphabet, show_progress=False)
    tokenizer.train_from_iterator([PAGE_SEPARATOR.join(pages)] * 10, trainer)
    tokens = tokenizer.encode(PAGE_SEPARATOR.join(pages), add_special_tokens=False).tokens
    assert tokens.count("Ċ") == 2  # the separators are tokens here, unlike MiniLM's word pieces
    chunks = chunk_documents(pages, [0, 3], tokenizer, window=64, overlap=0)
    assert chunks.cover_pages.tolist() == [0, 2] and chunks.page.tolist() == [0]
    assert chunks.texts(pages) == ["alpha beta" + PAGE_SEPARATOR * 2 + "gamma delta"]
