"""Fixtures: small hand-built benchmark releases for the scorer tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scoring.nclue_eval_helpers import S6_QRELS, S6_QUERY, make_release


@pytest.fixture
def s6_release(tmp_path: Path) -> Path:
    """The seed's Table S6 query plus a two-condition query with two golds (hand-checkable)."""
    queries = [
        S6_QUERY,
        {"qid": "q2", "conditions": ["A", "B"], "forms": {}},
    ]
    qrels = S6_QRELS + [
        {"qid": "q2", "doc_id": "g1", "grade": 2, "label": "gold", "pages": {"A": [1], "B": [2]}},
        {"qid": "q2", "doc_id": "g2", "grade": 2, "label": "gold", "pages": {"A": [5], "B": [9]}},
        {"qid": "q2", "doc_id": "s1", "grade": 1, "label": "partial", "pages": {"A": [3]}},
        {"qid": "q2", "doc_id": "j061", "grade": 2, "label": "partial", "pages": {"A": [7], "B": [7]}},
    ]
    corpus = [
        {"doc_id": "world_bank_34454344", "n_pages": 80},
        {"doc_id": "world_bank_34422285", "n_pages": 50},
        {"doc_id": "world_bank_34353633", "n_pages": 12},
        {"doc_id": "g1", "n_pages": 20},
        {"doc_id": "g2", "n_pages": 200},
        {"doc_id": "s1", "n_pages": 4},
        {"doc_id": "j061", "n_pages": 9},
    ]
    return make_release(tmp_path / "bench", queries, qrels, corpus)
