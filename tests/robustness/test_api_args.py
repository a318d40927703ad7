"""The Python API checks its arguments (issue 28, cause 12): a wrong type or range is one
:class:`NclueError` naming the argument, never a ``TypeError``/``AttributeError``/``IndexError``
from deep inside, nor a silently empty answer."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nclue
from nclue.api_args import bool_arg, is_int, path_arg, text_list
from nclue.errors import NclueError
from nclue.progress import quiet

FUZZ = settings(max_examples=60, deadline=None)
SYSTEM = "bm25.and"
QUERY = '"footnotes"; "line numbering"'

NONE, INTS, FLOATS, BOOLS = st.none(), st.integers(-5, 5), st.floats(allow_nan=True, allow_infinity=True), st.booleans()
INT_LISTS, BYTES = st.lists(st.integers(), min_size=1, max_size=3), st.binary(max_size=5)
DICTS = st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)
NOT_TEXT = [INTS, FLOATS, BOOLS, INT_LISTS, BYTES, DICTS]
NOT_INT = [FLOATS, BOOLS, INT_LISTS, BYTES, DICTS, st.sampled_from(["5", "1", ""]), st.just(5.0)]
WRONG = {
    "path": st.one_of(NONE, *NOT_TEXT, st.just("")),
    "optional_path": st.one_of(*NOT_TEXT, st.just("")),
    "text": st.one_of(NONE, *NOT_TEXT),
    "optional_text": st.one_of(*NOT_TEXT),
    "choice": st.one_of(NONE, *NOT_TEXT, st.sampled_from(["bogus", "FAMILY", ""])),
    "positive": st.one_of(NONE, *NOT_INT, st.integers(max_value=0)),
    "non_negative": st.one_of(NONE, *NOT_INT, st.integers(max_value=-1)),
    "seed": st.one_of(NONE, *NOT_INT, st.integers(max_value=-1)),
    "bool": st.one_of(NONE, st.integers(), FLOATS, st.text(max_size=3), st.lists(BOOLS, max_size=2)),
    "optional_bool": st.one_of(st.integers(), FLOATS, st.text(max_size=3), st.lists(BOOLS, max_size=2)),
    "progress": st.one_of(NONE, st.integers(), FLOATS, st.text(max_size=3), st.lists(BOOLS, max_size=2), DICTS),
    "query": st.one_of(NONE, INTS, FLOATS, BOOLS, INT_LISTS, BYTES, DICTS),
    "text_list": st.one_of(NONE, INTS, FLOATS, BOOLS, INT_LISTS, BYTES, DICTS, st.text(min_size=1, max_size=5)),
    "runs": st.one_of(
        NONE, INTS, FLOATS, BOOLS, BYTES, INT_LISTS, st.just([]), st.just({"q": {"d": 1.0}}), st.text(max_size=3)
    ),
    "run": st.one_of(NONE, INTS, FLOATS, BOOLS, BYTES, st.just(""), st.lists(st.integers(), max_size=2)),
    "qrels": st.one_of(INTS, FLOATS, BOOLS, BYTES, st.lists(st.integers(), max_size=2), st.just("")),
    "options": st.one_of(st.text(max_size=3), INTS, BOOLS, INT_LISTS, DICTS),
}


@pytest.fixture(scope="module")
def coll(indexed_source: Path) -> nclue.Collection:
    """The indexed fixture collection, opened once."""
    return nclue.open_collection(indexed_source)


@pytest.fixture(scope="module")
def calls(coll, release: Path, run_file: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:  # noqa: ANN001
    """Every public API entry point: ``name -> (callable, {argument: (a valid value, the kind of wrong values)})``."""
    spare = tmp_path_factory.mktemp("api-args")
    (spare / "pdfs").mkdir()
    variant = nclue.Run("variant", nclue.load_run(run_file).rankings)
    bench, runs, k, bootstrap = (release, "path"), ([run_file], "runs"), (10, "positive"), (20, "positive")
    seed, qrels = (1, "seed"), (None, "qrels")
    return {
        "Collection": (nclue.Collection, {"path": (coll.path, "path")}),
        "open_collection": (nclue.open_collection, {"path": (coll.path, "path")}),
        "Collection.page_text": (coll.page_text, {"doc_id": (coll.doc_ids[0], "text"), "page": (1, "positive")}),
        "Collection.search": (
            coll.search,
            {
                "query": (QUERY, "query"),
                "system": (SYSTEM, "text"),
                "k": (5, "positive"),
                "text": (None, "optional_text"),
            },
        ),
        "ingest": (
            nclue.ingest,
            {
                "pdf_dir": (spare / "pdfs", "path"),
                "collection_dir": (spare / "coll", "path"),
                "workers": (1, "non_negative"),
                "ocr": ("auto", "choice"),
                "progress": (quiet, "progress"),
            },
        ),
        "build_benchmark": (
            nclue.build_benchmark,
            {"collection": (coll.path, "path"), "out": (spare / "bench", "path"), "options": (None, "options")},
        ),
        "open_release": (nclue.open_release, {"path": bench, "qrels": qrels}),
        "load_run": (nclue.load_run, {"path": (run_file, "path"), "name": (None, "optional_text")}),
        "run_system": (
            nclue.run_system,
            {
                "bench": bench,
                "collection": (coll.path, "path"),
                "system": (SYSTEM, "text"),
                "form": ("clean_v2", "choice"),
                "depth": (5, "positive"),
                "progress": (quiet, "progress"),
            },
        ),
        "evaluate": (
            nclue.evaluate,
            {
                "bench": bench,
                "runs": runs,
                "k": k,
                "ci": ("family", "choice"),
                "bootstrap": bootstrap,
                "seed": seed,
                "strata": (False, "bool"),
                "qrels": qrels,
                "per_query": (None, "optional_path"),
                "strict": (False, "bool"),
                "measures": ((), "text_list"),
            },
        ),
        "compare": (
            nclue.compare,
            {
                "bench": bench,
                "base": (run_file, "run"),
                "variants": ([variant], "runs"),
                "k": k,
                "bootstrap": bootstrap,
                "draws": (50, "positive"),
                "seed": seed,
                "sensitivity": (False, "bool"),
                "blocks": (None, "optional_path"),
                "qrels": qrels,
                "strict": (None, "optional_bool"),
            },
        ),
    }


DEPRECATED = {"load_benchmark"}
"""Old names kept as warning aliases (``tests/architecture/test_public_names.py`` checks they still answer)."""

ENTRY_POINTS = [
    "Collection",
    "open_collection",
    "Collection.page_text",
    "Collection.search",
    "ingest",
    "build_benchmark",
    "open_release",
    "load_run",
    "run_system",
    "evaluate",
    "compare",
]


def test_the_fuzz_covers_every_public_function_and_method() -> None:
    from nclue import _API
    from nclue.api import Collection

    assert DEPRECATED <= set(_API)
    functions = {name for name, home in _API.items() if home == "nclue.api"} - DEPRECATED
    methods = {f"Collection.{name}" for name, value in vars(Collection).items() if callable(value) and name[0] != "_"}
    assert functions | methods == set(ENTRY_POINTS)


@pytest.mark.parametrize("name", ENTRY_POINTS)
@FUZZ
@given(data=st.data())
def test_wrong_argument_types_raise_only_a_named_nclue_error(name: str, data: st.DataObject, calls: dict) -> None:
    function, args = calls[name]
    wrong = data.draw(st.sets(st.sampled_from(sorted(args)), min_size=1), label="wrong arguments")
    kwargs = {arg: data.draw(WRONG[kind], label=arg) if arg in wrong else value for arg, (value, kind) in args.items()}
    with pytest.raises(NclueError) as refused:
        function(**kwargs)
    message = str(refused.value)
    assert "\n" not in message
    assert re.match(rf"({'|'.join(map(re.escape, wrong))})\b", message), message


@pytest.mark.parametrize(
    "name",
    ["Collection.page_text", "Collection.search", "load_run", "open_release", "run_system", "evaluate", "compare"],
)
def test_the_valid_arguments_of_the_fuzz_are_accepted(name: str, calls: dict) -> None:
    """The fuzz's baseline is right: with no argument corrupted, the call answers."""
    function, args = calls[name]
    assert function(**{arg: value for arg, (value, _) in args.items()}) is not None


@pytest.mark.parametrize("path", [None, 1, b"coll", "", ["coll"]])
def test_a_path_of_the_wrong_type_is_named(path: object) -> None:
    with pytest.raises(
        NclueError, match=r"^path must be a path: a non-empty str or os.PathLike .*; e\.g\. path='coll'$"
    ):
        nclue.open_collection(path)


@pytest.mark.parametrize(
    ("query", "said"),
    [
        (None, "query must be a string or a list of strings, got None"),
        (42, "query must be a string or a list of strings, got int 42"),
        ([1, 2], "query[0] must be a string, got int 1"),
    ],
)
def test_a_query_of_the_wrong_type_is_named(coll, query: object, said: str) -> None:  # noqa: ANN001
    with pytest.raises(NclueError, match=re.escape(said)):
        coll.search(query)


@pytest.mark.parametrize(("k", "shown"), [("5", "str '5'"), (2.5, "float 2.5"), (True, "bool True"), (0, "int 0")])
def test_k_must_be_a_positive_integer(coll, release: Path, run_file: Path, k: object, shown: str) -> None:  # noqa: ANN001
    said = f"k must be an integer of at least 1, got {shown}; e.g. k=10"
    for call in (lambda: coll.search(QUERY, k=k), lambda: nclue.evaluate(release, [run_file], k=k)):
        with pytest.raises(NclueError, match=re.escape(said)):
            call()


def test_numpy_integers_are_integers(coll, release: Path, run_file: Path) -> None:  # noqa: ANN001
    assert len(coll.search(QUERY, system=SYSTEM, k=np.int64(3))) <= 3
    assert coll.page_text(coll.doc_ids[0], np.int32(1)) == coll.page_text(coll.doc_ids[0], 1)
    card = nclue.evaluate(release, [run_file], k=np.int64(10), bootstrap=np.int16(20), seed=np.int64(3))
    assert card.k == 10


def test_a_missing_system_name_is_named(coll, release: Path) -> None:  # noqa: ANN001
    with pytest.raises(NclueError, match=re.escape("system must be a string, got None; e.g. system=")):
        coll.search(QUERY, system=None)
    with pytest.raises(NclueError, match=re.escape("system must be a string, got None; e.g. system='bm25.and'")):
        nclue.run_system(release, coll, None)


@pytest.mark.parametrize("depth", [0, -1])
def test_run_system_refuses_a_depth_below_one(coll, release: Path, depth: int) -> None:  # noqa: ANN001
    with pytest.raises(NclueError, match=re.escape(f"depth must be an integer of at least 1, got int {depth}")):
        nclue.run_system(release, coll, SYSTEM, depth=depth)


@pytest.mark.parametrize("bootstrap", [0, -1])
def test_bootstrap_below_one_is_refused(release: Path, run_file: Path, bootstrap: int) -> None:
    said = re.escape(f"bootstrap must be an integer of at least 1, got int {bootstrap}; e.g. bootstrap=1000")
    with pytest.raises(NclueError, match=said):
        nclue.evaluate(release, [run_file], bootstrap=bootstrap)
    with pytest.raises(NclueError, match=said):
        nclue.compare(release, run_file, [run_file], bootstrap=bootstrap)


@pytest.mark.parametrize(
    ("seed", "shown"), [(-1, "int -1"), (True, "bool True"), ("42", "str '42'"), (math.nan, "float nan")]
)
def test_a_seed_says_what_the_command_line_says(release: Path, run_file: Path, seed: object, shown: str) -> None:
    """The CLI's ``--seed`` takes integers ≥ 0; the API refuses the rest with the release-wide seed wording."""
    with pytest.raises(NclueError, match=re.escape(f"seed must be a non-negative integer, got {shown}; e.g. seed=42")):
        nclue.evaluate(release, [run_file], seed=seed)


def test_build_options_of_the_wrong_type_are_named(indexed_source: Path, tmp_path: Path) -> None:
    with pytest.raises(
        NclueError, match=re.escape("options must be nclue.bench.construction_params.BuildOptions or None, got str 'x'")
    ):
        nclue.build_benchmark(indexed_source, tmp_path / "bench", "x")
    assert not (tmp_path / "bench").exists()


def test_a_string_of_measures_is_refused_not_split(release: Path, run_file: Path) -> None:
    said = "measures must be a list of strings, got str 'AP'; pass a list of strings, e.g. measures=['nDCG@10', 'AP']"
    with pytest.raises(NclueError, match=re.escape(said)):
        nclue.evaluate(release, [run_file], measures="AP")
    with pytest.raises(NclueError, match=re.escape("measures[0] must be a string, got int 1")):
        nclue.evaluate(release, [run_file], measures=[1, 2])


def test_a_single_run_is_refused_by_evaluate_and_compare_alike(release: Path, run_file: Path) -> None:
    run = nclue.load_run(run_file)
    for call, name in (
        (lambda: nclue.evaluate(release, run), "runs"),
        (lambda: nclue.evaluate(release, run_file), "runs"),
        (lambda: nclue.compare(release, run_file, run), "variants"),
        (lambda: nclue.compare(release, run_file, run_file), "variants"),
    ):
        with pytest.raises(
            NclueError, match=rf"^{name} must be a list of runs .*; wrap a single run in a list, e\.g\. {name}=\[run\]$"
        ):
            call()
    with pytest.raises(NclueError, match=r"^runs is an empty list; give at least one run"):
        nclue.evaluate(release, [])


def test_a_flag_is_true_or_false_not_a_truthy_string(release: Path, run_file: Path) -> None:
    with pytest.raises(NclueError, match=re.escape("strict must be True or False, got str 'no'; e.g. strict=True")):
        nclue.evaluate(release, [run_file], strict="no")


def test_a_page_number_is_an_integer_in_the_documents_range(coll) -> None:  # noqa: ANN001
    doc = coll.doc_ids[0]
    with pytest.raises(NclueError, match=re.escape("page must be an integer of at least 1, got str '1'; e.g. page=1")):
        coll.page_text(doc, "1")
    with pytest.raises(
        NclueError, match=re.escape(f"document {doc!r} has pages 1–") + r"\d+; page 9999 is not one$"
    ) as out:
        coll.page_text(doc, 9999)
    last = int(re.search(r"has pages 1–(\d+)", str(out.value)).group(1))
    with pytest.raises(NclueError, match=re.escape(f"has pages 1–{last}; page {last + 1} is not one")):
        coll.page_text(doc, last + 1)
    with pytest.raises(NclueError, match=re.escape("unknown document 'nope'; Collection.doc_ids lists the documents")):
        coll.page_text("nope", 1)
    assert coll.page_text(doc, last)


def test_the_checks_themselves(tmp_path: Path) -> None:
    """``bool`` is no integer, NumPy integers are; a path-like is a path; a bare string is not a list."""
    assert is_int(np.int64(3)) and is_int(7) and not is_int(True) and not is_int(np.bool_(True)) and not is_int(3.0)
    assert bool_arg("strict", np.bool_(False)) is False and bool_arg("strict", True) is True
    with pytest.raises(NclueError, match=re.escape("strict must be True or False, got int 1; e.g. strict=True")):
        bool_arg("strict", 1)
    assert path_arg("out", tmp_path) == tmp_path and path_arg("out", "a/b") == Path("a/b")
    with pytest.raises(
        NclueError, match=r"^requirements must be a list of strings, got str 'ab'; pass a list of strings, e\.g\."
    ):
        text_list("requirements", "ab", "['footnotes']")
    assert text_list("requirements", ("a", "b"), "['footnotes']") == ["a", "b"]
