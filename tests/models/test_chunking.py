"""Token-window chunking: hand-checked windows, full coverage, word-start snapping, bad settings."""

from __future__ import annotations

import numpy as np
import pytest

from nclue.errors import NclueError
from nclue.models.chunking import chunk_pages, word_windows
from nclue.models.encoder import load_tokenizer


@pytest.fixture(scope="module")
def tokenizer():
    return load_tokenizer()


def test_word_windows_never_exceed_the_window():
    """Random word structures (1–6 pieces a word): every window holds at most ``window`` tokens, opens
    on a word's first piece unless that word is longer than the stride, and together they cover every
    token; without continuation pieces they are exactly the stride grid."""
    rng = np.random.default_rng(7)
    for _ in range(400):
        pieces = rng.integers(1, 7, size=int(rng.integers(1, 60)))
        words = np.repeat(np.arange(len(pieces)), pieces).tolist()
        n, window = len(words), int(rng.integers(2, 16))
        overlap = int(rng.integers(0, window))
        spans = word_windows(words, n, window, overlap)
        covered = np.zeros(n, bool)
        for s, e in spans:
            assert 0 <= s <= e < n and e - s + 1 <= window
            assert s == 0 or words[s - 1] != words[s] or pieces[words[s]] > window - overlap
            covered[s : e + 1] = True
        assert covered.all()
        grid = [0]
        while grid[-1] + window < n:
            grid.append(grid[-1] + window - overlap)
        assert word_windows(list(range(n)), n, window, overlap) == [(s, min(s + window, n) - 1) for s in grid]


def test_windows_of_whole_words_by_hand():
    def starts(n: int, window: int, overlap: int) -> list[int]:
        return [s for s, _ in word_windows(list(range(n)), n, window, overlap)]

    assert starts(0, 4, 1) == []
    assert starts(4, 4, 1) == [0]
    assert starts(5, 4, 1) == [0, 3]
    assert starts(10, 4, 1) == [0, 3, 6]
    assert starts(10, 5, 0) == [0, 5]
    assert word_windows([0, 0, 0, 0, 0, 0, 1], 7, 4, 1) == [(0, 3), (3, 6)]  # a 6-piece word is cut inside


def test_chunks_by_hand(tokenizer):
    text = "Hello world, this is a page about Debian packaging policy."
    chunks = chunk_pages([text, "", "x"], tokenizer, window=4, overlap=1)
    assert chunks.page.tolist() == [0, 0, 0, 0, 0, 2]  # the empty page has no chunk
    assert chunks.texts([text, "", "x"]) == [
        "Hello world, this",
        "this is a page",
        "page about Debian",
        "Debian packaging policy",  # starts at the word, not at its continuation piece "##bian" ...
        "policy.",  # ... and still holds 4 tokens, so one more window covers the last one
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
            assert len(tokenizer.encode(piece, add_special_tokens=False).ids) <= 254


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


@pytest.mark.parametrize("max_chunks", [1, 2])
def test_first_windows_from_a_prefix_are_those_of_the_whole_page(tokenizer, page_texts, max_chunks):
    """``max_chunks`` tokenises only a prefix of each page; the windows must be those of the whole
    page's tokens (computed here with ``word_windows`` on the full tokenisation), on real pages and on
    pages that defeat the prefix: many short tokens (the prefix falls short and is read again whole),
    no blank at all, a blank right at the cut, and a word straddling it."""
    from nclue.models.chunking import PREFIX_CHARS_PER_TOKEN, PREFIX_MARGIN

    cut = (max_chunks * 16 + PREFIX_MARGIN) * PREFIX_CHARS_PER_TOKEN
    hard = [
        "a-b.c,d;e " * 80,  # about one token per character
        "x" * 3000,
        "word " * (cut // 5) + "Debianization " * 40,
        "y" * (cut - 3) + " " + "packaging policy " * 60,
        "",
        # NEL is a blank to Python but deleted by the BERT normaliser: cut there, the prefix splits
        # a 128-letter word into pieces that the whole page reads as one [UNK]
        "international " * 3 + "a1b2c3d4" * 8 + "\x85" + "e5f6a7b8" * 8 + " end" * 300,
        "word " * (cut // 5 - 8) + "a1b2c3d4" * 8 + "\x85" + "e5f6a7b8" * 8 + " end" * 300,
    ]
    texts = [*page_texts, *hard]
    for window in (16, 254):
        chunks = chunk_pages(texts, tokenizer, window=window, overlap=4, max_chunks=max_chunks)
        want = []
        for i, enc in enumerate(tokenizer.encode_batch(texts, add_special_tokens=False)):
            for s, e in word_windows(enc.word_ids, len(enc.offsets), window, 4, max_chunks):
                want.append((i, enc.offsets[s][0], enc.offsets[e][1]))
        assert list(zip(chunks.page.tolist(), chunks.start.tolist(), chunks.end.tolist(), strict=True)) == want
