"""Page-text normalisation on strings PDFium really returns for corpus pages (``nclue.corpus.normalize``).

Each input below is copied from the raw text layer of a development-corpus page (the document
is named); the expected output is what a reader sees on the rendered page.
"""

from __future__ import annotations

from nclue.corpus.normalize import REPLACEMENT, normalize_document, text_defects


def one(text: str, *context: str) -> str:
    """Normalise ``text`` as page 1 of a document whose other pages are ``context``."""
    return normalize_document([text, *context])[0]


def test_soft_hyphens_join_words_split_at_a_line_end() -> None:
    # R-FAQ / R-admin: "or Win\ufffedows F", " repos\ufffeitory,", "nd rec\ufffeommend"
    assert one("for Win\ufffedows users") == "for Windows users"
    assert one("a CRAN repos\ufffeitory, or") == "a CRAN repository, or"
    assert one("we rec\ufffeommend it") == "we recommend it"
    assert one("soft\u00adhyphen") == "softhyphen"


def test_a_soft_hyphen_that_was_a_real_hyphen_stays_one() -> None:
    # R-FAQ: "the R\ufffehelp mailing list" — one letter before the break: TeX never breaks there
    assert one("the R\ufffehelp mailing list") == "the R-help mailing list"
    # digits on either side: "UTF\ufffe8"
    assert one("encoded in UTF\ufffe8 text") == "encoded in UTF-8 text"
    # the document writes the compound itself elsewhere
    assert one("font\ufffeencoding", "the font-encoding table") == "font-encoding"
    # both halves are words of their own in the document, the whole is not an English word
    assert one("page\ufffebreaking rules", "a page is broken at a breaking point") == "page-breaking rules"


def test_a_word_of_another_language_is_joined() -> None:
    # German manuals (jura): "ande\ufffeeren" would not be two words of the document
    assert one("die ande\ufffeeren Befehle") == "die andeeren Befehle"


def test_ligature_codes_become_the_ligature_that_makes_an_english_word() -> None:
    # chemnum_en: "de\x1bned", "\x1brst", "di\x1berent" (one code per ligature, per document)
    text = "de\x1bned \x1brst \x1cle di\x1derent e\x1dects"
    assert one(text) == "defined first file different effects"


def test_a_code_the_word_list_cannot_decide_takes_the_documents_majority() -> None:
    # jurarsp: German "Anforderungspro\x1cl" with \x1c = fi elsewhere in the document
    text = "de\x1cne \x1cle \x1cnd Anforderungspro\x1cl"
    assert one(text).split()[-1] == "Anforderungsprofil"
    # a math symbol code between letters that no ligature makes plausible becomes U+FFFD
    assert one("\x1cle \x1cnd \x1cAB") == f"file find {REPLACEMENT}AB"


def test_other_control_codes_and_line_ends() -> None:
    # refman: "ln\x10", R-FAQ: "Copyright \rc 2021"; PDFium ends lines with \r\n
    assert one("log ln\x10 x") == f"log ln{REPLACEMENT} x"
    assert one("Copyright \rc 2021\r\nnext line\r\r") == f"Copyright {REPLACEMENT}c 2021\nnext line\n\n"
    assert one("zero\uf730ne \uf731\uf739\uf739\uf739") == "zero0ne 1999"  # Adobe old-style figures


def test_normalised_text_has_no_defect_left() -> None:
    raw = "Win\ufffedows de\x1bned \x1brst\r\n\x13 math \x0c"
    assert text_defects(raw) == {"soft_hyphen": 1, "control": 4, "cr": 1}
    assert sum(text_defects(one(raw, "\x1bgure de\x1bnes")).values()) == 0
