"""Line classification, tokenisation and inflection folding on hand-made page text."""

from __future__ import annotations

from nclue.bench.text import heading_title, is_reference_line, running_lines, s_stem, split_pages, tokenize_document


def test_s_stem_folds_inflection_only() -> None:
    assert s_stem("footnotes") == s_stem("footnote") == "footnote"
    assert s_stem("bibliographies") == s_stem("bibliography")
    assert s_stem("hyphenation") != s_stem("hyphen")
    assert s_stem("analysis") == "analysis"
    assert s_stem("class") == "class"


def test_reference_and_heading_lines() -> None:
    assert is_reference_line("12.3 Glosses with a side panel . . . . . . . 53")
    assert is_reference_line("6 Numbering text lines and paragraphs 8")
    assert is_reference_line("hyphenation, 12, 40")
    assert not is_reference_line("The server is disabled by setting the environment variable.")
    assert heading_title("2.3 Making the manuals") == "Making the manuals"
    assert heading_title("Chapter 4 Footnotes") == "Footnotes"
    assert heading_title("Critical Apparatus") == "Critical Apparatus"
    assert heading_title("8 \\DeclareMathSymbol{\\Xi}{\\mathalpha}{letters}{4}") is None
    assert heading_title("This is a sentence that ends.") is None


def test_running_lines_and_tokens() -> None:
    pages = split_pages(
        [
            f"Chapter 2: Installing R {n}\r\nSome font-encoding text about non\ufffeempty values {w}.\r\n"
            f"\\usepackage{{x}} for {w}\r\nmore body text on {w}\r\nfooter line"
            for n, w in enumerate(["alpha", "beta", "gamma", "delta"], start=1)
        ]
    )
    assert "chapter : installing r" in running_lines(pages)
    tokens = tokenize_document(pages)[0]
    assert "Chapter" not in tokens.words and "footer" not in tokens.words
    assert tokens.words[:5] == ["Some", "font", "encoding", "text", "about"]
    assert bool(tokens.hyph[2]) and not bool(tokens.hyph[1])
    assert "usepackage" not in tokens.words
    assert tokens.words[5:7] == ["non", "empty"]
