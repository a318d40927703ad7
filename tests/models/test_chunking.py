"""Token-window chunking: hand-checked windows, full coverage, word-start snapping, bad settings."""

from __future__ import annotations

import pytest

from nclue.errors import NclueError
from nclue.models.chunking import chunk_pages, window_starts
from nclue.models.encoder import load_tokenizer


@pytest.fixture(scope="module")
def tokenizer():
    return load_tokenizer()


def test_window_starts_by_hand():
    assert window_starts(0, 4, 1) == []
    assert window_starts(4, 4, 1) == [0]
    assert window_starts(5, 4, 1) == [0, 3]
    assert window_starts(10, 4, 1) == [0, 3, 6]
    assert window_starts(10, 5, 0) == [0, 5]


def test_chunks_by_hand(tokenizer):
    text = "Hello world, this is a page about Debian packaging policy."
    chunks = chunk_pages([text, "", "x"], tokenizer, window=4, overlap=1)
    assert chunks.page.tolist() == [0, 0, 0, 0, 2]  # the empty page has no chunk
    assert chunks.texts([text, "", "x"]) == [
        "Hello world, this",
        "this is a page",
        "page about Debian",
        "Debian packaging policy.",  # starts at the word, not at its continuation piece "##bian"
        "x",
    ]


def test_real_pages_are_covered(tokenizer, page_texts):
    chunks = chunk_pages(page_texts, tokenizer, window=254, overlap=32)
    for i, text in enumerate(page_texts):
        mine = chunks.page == i
        assert mine.any()
        assert chunks.start[mine].min() <= len(text) - len(text.lstrip()) + 1
        assert chunks.end[mine].max() == len(text.rstrip())
        for piece in chunks.texts(page_texts, slice(int(mine.argmax()), int(mine.argmax()) + 1)):
            assert len(tokenizer.encode(piece, add_special_tokens=False).ids) <= 254 + 8


@pytest.mark.parametrize(("window", "overlap"), [(0, 0), (4, 4), (4, -1)])
def test_bad_settings(tokenizer, window, overlap):
    with pytest.raises(NclueError):
        chunk_pages(["text"], tokenizer, window=window, overlap=overlap)


def test_max_chunks_keeps_each_pages_first_windows(tokenizer):
    text = "Hello world, this is a page about Debian packaging policy."
    full = chunk_pages([text, "x"], tokenizer, window=4, overlap=1)
    first = chunk_pages([text, "x"], tokenizer, window=4, overlap=1, max_chunks=1)
    two = chunk_pages([text, "x"], tokenizer, window=4, overlap=1, max_chunks=2)
    assert first.page.tolist() == [0, 1]
    assert first.texts([text, "x"]) == ["Hello world, this", "x"]
    assert two.texts([text, "x"]) == full.texts([text, "x"])[:2] + ["x"]
    with pytest.raises(NclueError):
        chunk_pages([text], tokenizer, window=4, overlap=1, max_chunks=0)
