"""The paraphrase form comes only from a frozen cache; the three renderings for every query."""

from __future__ import annotations

import pytest

from nclue.errors import NclueError
from nclue.models.paraphrase import load_paraphrases, query_text
from nclue.types import Query

QUERY = Query(qid="q1", conditions=("Line numbering", "Poetry"))


def test_forms():
    assert query_text(QUERY, "raw") == "Line numbering Poetry"
    assert query_text(QUERY, "clean_v2") == '"Line numbering"; "Poetry"'
    assert query_text(QUERY, "natural") == 'Find the document that discusses "Line numbering" and "Poetry".'
    custom = Query(qid="q2", conditions=("A", "B"), forms={"raw": "A with B"})
    assert query_text(custom, "raw") == "A with B"


def test_paraphrase_from_cache(tmp_path):
    path = tmp_path / "para.jsonl"
    path.write_text('{"qid": "q1", "text": "poems with numbered lines"}\n\n{"qid": "q9", "paraphrase": "other"}\n')
    cache = load_paraphrases(path)
    assert cache == {"q1": "poems with numbered lines", "q9": "other"}
    assert query_text(QUERY, "paraphrase", cache) == "poems with numbered lines"


def test_paraphrase_never_generated(tmp_path):
    with pytest.raises(NclueError, match="frozen cache"):
        query_text(QUERY, "paraphrase")
    with pytest.raises(NclueError, match="no entry for qid 'q1'; paraphrases are never generated"):
        query_text(QUERY, "paraphrase", {"q2": "x"}, cache_path=tmp_path / "p.jsonl")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            '{"qid": "q1", "text": "a"}\n{"qid": "q1", "text": "b"}\n',
            r"p.jsonl:2: qid 'q1' repeated \(first at line 1\)",
        ),
        ('{"qid": "q1"}\n', r"p.jsonl:1: qid 'q1' has no non-empty 'text'"),
        ('{"text": "a"}\n', r"p.jsonl:1: missing or non-string 'qid'"),
        ("not json\n", r"p.jsonl:1: malformed JSON"),
    ],
)
def test_bad_cache(tmp_path, content, message):
    path = tmp_path / "p.jsonl"
    path.write_text(content)
    with pytest.raises(NclueError, match=message):
        load_paraphrases(path)


def test_unknown_form():
    with pytest.raises(NclueError, match="unknown query form 'fancy'"):
        query_text(QUERY, "fancy")
