"""System names round-trip: parse(format(x)) == x and format(parse(s)) == s."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nclue.errors import NclueError
from nclue.systems.names import Call, Op, canonical, format_name, parse_name

CANONICAL = [
    "bm25.joint",
    "bm25.and",
    "bm25.or",
    "bm25.condition_text",
    "bm25.page_max",
    "bm25.ptop3",
    "bm25.decompose(distinct)",
    "bm25.cover",
    "dense.joint(ptop3)",
    "dense.joint(max)",
    "dense:e5.decompose(hmean)",
    "maxsim.joint(ptop3)",
    "rrf(bm25.and, dense.decompose(hmean))",
    "rrf(bm25.and, rrf(bm25.or, bm25.ptop3), k=60)",
    "rerank(bm25.joint, minilm-cross, pool=100)",
]


@pytest.mark.parametrize("name", CANONICAL)
def test_canonical_names_round_trip(name: str) -> None:
    assert format_name(parse_name(name)) == name


def test_parse_structure() -> None:
    assert parse_name("bm25.decompose(distinct)") == Op("bm25", "decompose", ("distinct",))
    spec = parse_name("rerank(bm25.joint, minilm-cross, pool=100)")
    assert spec == Call("rerank", (Op("bm25", "joint"), "minilm-cross"), (("pool", "100"),))
    assert spec.option("pool") == "100" and spec.systems == (Op("bm25", "joint"),)
    assert parse_name("dense:e5.joint").family == "dense" and parse_name("dense:e5.joint").variant == "e5"


def test_canonical_spacing() -> None:
    assert canonical("rrf( bm25.and ,dense.joint( max ))") == "rrf(bm25.and, dense.joint(max))"
    assert canonical("rrf(bm25.and,bm25.decompose(distinct))") == "rrf(bm25.and, bm25.decompose(distinct))"


@pytest.mark.parametrize(
    "bad", ["", "bm25", "rrf(", "bm25.joint)", "x(a=1, b)", "bm25.x(a.b)", "bm25.joint@natural", "dense:e5"]
)
def test_bad_names_raise(bad: str) -> None:
    with pytest.raises(NclueError):
        parse_name(bad)


WORD = st.from_regex(r"[a-z][a-z0-9_+-]{0,6}", fullmatch=True)
OPS = st.builds(
    Op,
    backbone=st.one_of(WORD, st.builds(lambda a, b: f"{a}:{b}", WORD, WORD)),
    op=WORD,
    args=st.lists(WORD, max_size=3).map(tuple),
)
SPECS = st.recursive(
    OPS,
    lambda inner: st.builds(
        Call,
        func=WORD,
        args=st.lists(st.one_of(inner, WORD), min_size=1, max_size=3).map(tuple),
        options=st.lists(st.tuples(WORD, WORD), max_size=2).map(tuple),
    ),
    max_leaves=6,
)


@given(SPECS)
def test_values_round_trip(spec) -> None:  # noqa: ANN001
    text = format_name(spec)
    assert parse_name(text) == spec
    assert format_name(parse_name(text)) == text
