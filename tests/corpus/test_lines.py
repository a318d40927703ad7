"""The shared page-line rules (``nclue.corpus.lines``) on lines taken from corpus pages."""

from __future__ import annotations

import pytest

from nclue.corpus.lines import (
    is_bibliography_heading,
    is_boilerplate_line,
    is_list_item,
    numbered_heading,
    titlecase_line,
)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("2.3 Data Interchange Format (DIF)", ("Data Interchange Format (DIF)", 2)),  # R-data p. 15
        ("2.1 What is R?", ("What is R?", 2)),  # a question keeps its verb (R-FAQ)
        ("5 Tag tag name is invalid in a block name block", None),  # refman p. 2016: a numbered message
        ("2. Customization hooks allow easy adjustments to the default style of", None),  # qtreenotes p. 2
        ("4. AVM structures: These exist within lingmacros but Chris Manning’s AVM", None),  # lingmacros p. 3
        ("5 with an anti-clockwise rotation of ‘rot’", None),  # R-ints p. 46: lower case after the number
        ("Appendix A: Fonts", ("Fonts", 1)),
    ],
)
def test_numbered_headings(line: str, expected: tuple[str, int] | None) -> None:
    assert numbered_heading(line) == expected


def test_titlecase_lines_exclude_table_rows_and_sentences() -> None:
    assert titlecase_line("Critical Apparatus")
    assert not titlecase_line("CF_DIF 5 Data Interchange Format")  # refman p. 2126, a table row
    assert not titlecase_line("Paragraphs Are Sentences")


@pytest.mark.parametrize(
    "line",
    [
        "Copyright �c 2000–2022 R Core Team",  # R-data p. 2
        "organization = {R Foundation for Statistical Computing},",  # R-FAQ p. 12 (BibTeX)
        "@Manual{,",
        "Permission is granted to make and distribute verbatim copies of this manual provided the copy-",
        "R Development Core Team (2006). R: A language and environment. Vienna: R Foundation, pp. 1–12.",
        "Kurt.Hornik@R-project.org",
        "https://CRAN.R-project.org/doc/FAQ/R-FAQ.html",
    ],
)
def test_boilerplate_lines(line: str) -> None:
    assert is_boilerplate_line(line)


def test_prose_with_a_url_or_a_year_is_not_boilerplate() -> None:
    assert not is_boilerplate_line("See https://cran.r-project.org for the sources and binaries of R.")
    assert not is_boilerplate_line("In 2019 the default was changed to the new random number generator.")


def test_list_items_and_bibliography_headings() -> None:
    assert is_list_item("• block name is invalid")
    assert is_list_item("(a) the first case")
    assert is_list_item("- a dash item")
    assert not is_list_item("-1 is a negative number")
    assert is_bibliography_heading("References") and is_bibliography_heading("7 Bibliography")
    assert not is_bibliography_heading("References to objects")
