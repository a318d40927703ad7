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


def test_line_classes_of_the_establishes_rule() -> None:
    """Title page, proper names, list items and a bibliography, as tokenize_document marks them."""
    pages = split_pages(
        [
            "R Data Import/Export\nVersion 4.2.2\nR Core Team",  # a title page: no heading counts
            "1 Introduction\nThe R Foundation for Statistical Computing publishes R. Data frames are tables.\n"
            "• block name is invalid\nmore text",
            "References\nR Core Team (2022). R: A Language. Vienna.\nAnother entry of the list\n2 Import\nText about import.",
        ]
    )
    title, body, refs = tokenize_document(pages)
    assert not title.head.any()
    names = [w for w, n in zip(body.words, body.name) if n]
    assert names == ["The", "R", "Foundation", "for", "Statistical", "Computing"]
    items = [w for w, i in zip(body.words, body.item) if i]
    assert items == ["block", "name", "is", "invalid"]
    assert refs.words == ["Import", "Text", "about", "import"]  # the bibliography ends at the next heading
    assert refs.head[0] and not refs.head[1:].any()
