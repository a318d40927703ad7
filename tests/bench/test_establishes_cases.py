"""The establishes rule on real pages of the corpus, one test per class of reader disagreement.

Each case is a real page (with its neighbours) of the development corpus, as ``nclue ingest``
stores it, in ``tests/fixtures/pages/establishes_cases.json`` (document id, page number → text;
the texts are GPL/LPPL documentation). The blind audit of the earlier rule found readers
rejecting labels from boilerplate, author lines, numbered messages, passing mentions, running
headers and table rows, and finding concepts the rule missed through inflection; each test
builds a collection of the case's pages at their real page numbers and checks what the rule
says (:func:`nclue.bench.inventory.establishing_pages`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nclue.bench.inventory import establishing_pages
from nclue.bench.text import s_stem
from nclue.corpus.store import PageStore

CASES = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "pages" / "establishes_cases.json").read_text())


@pytest.fixture
def rule(make_collection):
    """``rule(case, names)`` → (name → established pages, name → contested) for the case's document."""

    def run(case: str, names: list[str]) -> tuple[dict[str, tuple[int, ...]], dict[str, bool]]:
        doc, pages = CASES[case]["doc_id"], {int(p): t for p, t in CASES[case]["pages"].items()}
        texts = [pages.get(p, "") for p in range(1, max(pages) + 1)]  # real page numbers; the rest blank
        store = PageStore.open(make_collection({doc: texts}))
        established, mentioned = establishing_pages(store, names)
        return (
            {n: established[n].get(doc, ()) for n in names},
            {n: doc in mentioned[n] for n in names},
        )

    return run


def test_bibtex_and_organisation_lines_never_establish(rule) -> None:
    # R-FAQ p. 12: "organization = {R Foundation for Statistical Computing}", "author = {{R Core Team}}"
    pages, contested = rule("bibtex_organization", ["statistical computing", "core team"])
    assert pages == {"statistical computing": (), "core team": ()}
    assert not contested["statistical computing"]  # a BibTeX field is not even a mention


def test_title_and_copyright_pages_never_establish(rule) -> None:
    # R-data p. 1: the author line "R Core Team"; p. 2: "Copyright © 2000–2022 R Core Team"
    pages, _ = rule("title_and_copyright_pages", ["core team"])
    assert pages["core team"] == ()


def test_a_numbered_message_is_not_a_heading(rule) -> None:
    # refman p. 2016: "5 Tag tag name is invalid in a block name block" (a list of checker messages)
    pages, _ = rule("numbered_message_list", ["block name"])
    assert pages["block name"] == ()


def test_passing_mentions_do_not_establish_but_are_contested(rule) -> None:
    # R-data p. 14: "many Unix-alike OSes do not accept them", "on a Unix-alike might need"
    pages, contested = rule("passing_mentions", ["unix-alikes", "data interchange format"])
    assert pages["unix-alikes"] == () and contested["unix-alikes"]
    # p. 15 carries the section "2.3 Data Interchange Format (DIF)"; the TOC page 13 does not count
    assert pages["data interchange format"] == (15,)


def test_mentions_after_a_preposition_do_not_repeat_a_topic(rule) -> None:
    # mhchem pp. 5–7: "This works in text mode and math mode." — twice on a page, always "in text mode"
    pages, contested = rule("prepositional_mentions", ["text mode"])
    assert pages["text mode"] == () and contested["text mode"]


def test_running_headers_never_establish(rule) -> None:
    # R-admin pp. 10–12: the running header "Chapter 2: Installing R under Unix-alikes N"
    pages, _ = rule("running_header", ["unix-alikes"])
    assert pages["unix-alikes"] == ()


def test_a_one_word_condition_needs_to_be_the_head_noun_of_the_heading(rule) -> None:
    # nchairx p. 20: "3.8.5 Vector Bundles" is about vector bundles, not about vectors
    pages, _ = rule("head_noun_heading", ["vector", "vector bundles"])
    assert pages == {"vector": (), "vector bundles": (20,)}


def test_a_table_row_is_not_a_heading(rule) -> None:
    # refman p. 2126: "CF_DIF 5 Data Interchange Format", a row of a table of clipboard formats
    pages, _ = rule("table_row", ["data interchange format"])
    assert pages["data interchange format"] == ()


def test_a_numbered_list_item_is_not_a_heading(rule) -> None:
    # qtreenotes p. 2: "2. Customization hooks allow easy adjustments to the default style of"
    pages, _ = rule("numbered_list_item", ["default style"])
    assert pages["default style"] == ()


def test_latin_plurals_are_the_same_condition(rule) -> None:
    # R-intro p. 27: the section "5.3 Index matrices" establishes "index matrix"; p. 3 is the TOC
    assert s_stem("matrices") == s_stem("matrix") and s_stem("indexes") == s_stem("index") == s_stem("indices")
    pages, _ = rule("latin_plural", ["index matrix", "matrices"])
    assert pages["index matrix"] == (27,)
    assert pages["matrices"] == (26, 27)  # the head noun of "5 Arrays and matrices" and of "5.3 Index matrices"


def test_real_sections_and_definitions_still_establish(rule) -> None:
    # tree-manual p. 10: "7 Rotation" then text about it; R-intro p. 36: "A data frame is a list with class …"
    assert rule("section_heading", ["rotation"])[0]["rotation"] == (10,)
    assert 36 in rule("definition", ["data frame"])[0]["data frame"]


def test_an_acronym_stands_for_its_expansion_only_where_the_document_writes_it(make_collection) -> None:
    # R-data p. 15 pairs "Data Interchange Format (DIF)"; in diffcoeff p. 28 "DIF" names a template
    docs = {}
    for case in ("passing_mentions", "acronym_elsewhere"):
        doc, pages = CASES[case]["doc_id"], {int(p): t for p, t in CASES[case]["pages"].items()}
        docs[doc] = [pages.get(p, "") for p in range(1, max(pages) + 1)]
    established, _ = establishing_pages(PageStore.open(make_collection(docs)), ["data interchange format"])
    assert established["data interchange format"] == {"r-doc-pdf/R/doc/manual/R-data": (15,)}


def test_a_passive_use_is_not_a_definition_and_code_is_not_prose(rule) -> None:
    # refman p. 254: "The R subscript recycling rule is used to align names …" — a use, not a definition
    assert rule("passive_use", ["recycling rule"])[0]["recycling rule"] == ()
    # R-data p. 15: "Function read.fortran is a similar function" — an identifier, not the concept Fortran
    assert rule("passing_mentions", ["fortran"])[0]["fortran"] == ()


def test_an_option_list_is_a_list(rule) -> None:
    # cryptocode p. 45: "topstyle The TIKZ style to be used for the top node." — one entry per option
    pages, contested = rule("option_list", ["tikz style"])
    assert pages["tikz style"] == () and contested["tikz style"]


def test_a_definition_needs_the_condition_as_its_whole_subject(rule) -> None:
    # R-exts p. 97: "Pie charts are a very bad way of displaying information." says nothing of charts in general
    assert rule("modified_subject", ["chart"])[0]["chart"] == ()
