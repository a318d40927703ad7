"""Before any work: does the collection hold every index a set of systems reads?

A matrix of 39 runs, a coverage freeze or ``nclue run -s A -s B`` should not spend minutes
on the runs it can make and then stop at the first system whose index is missing.
:func:`index_problems` walks the system names (through ``rrf(...)`` and ``rerank(...)``),
collects the backbones they read and checks each one's indexes the way its loader would —
present, of this format, fresh for the collection's pages, files intact by size and sample —
without loading a model or a BM25 matrix:

* ``bm25``: the lexical index (:func:`nclue.index.lexical.checked_meta`);
* ``dense[:VARIANT]``: the dense index the token names (:func:`nclue.index.dense.select_index`);
* ``maxsim[:VARIANT]``: that dense index and its token index;
* ``struct[:NAME]``: the lexical and dense indexes, ``structure.parquet`` with heading vectors
  for the dense index, and the calibration ``NAME`` names when it is one.

Each problem is the loader's own sentence (what is missing and the command that builds it).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from nclue.errors import NclueError
from nclue.systems.names import Call, Op, Spec, parse_name


def backbone_tokens(systems: Iterable[str]) -> list[str]:
    """The backbone tokens (``bm25``, ``dense:onnx``, ``struct``, …) the named systems read, sorted."""
    found: set[str] = set()

    def walk(spec: Spec) -> None:
        if isinstance(spec, Op):
            found.add(spec.backbone)
        elif isinstance(spec, Call):
            for inner in spec.systems:
                walk(inner)

    for name in systems:
        walk(parse_name(name.split("@", 1)[0]))
    return sorted(found)


def index_problems(collection_dir: str | os.PathLike[str], systems: Iterable[str]) -> list[str]:
    """One sentence per index the ``systems`` need that the collection lacks or holds stale (empty: all there)."""
    collection = Path(collection_dir)
    checks = {"bm25": _lexical, "dense": _dense, "maxsim": _maxsim, "struct": _structure}
    problems: list[str] = []
    for token in backbone_tokens(systems):
        family, _, variant = token.partition(":")
        check = checks.get(family)
        if check is None:
            continue
        for problem in check(collection, variant or None):
            if problem not in problems:
                problems.append(problem)
    return problems


def require_indexes(collection_dir: str | os.PathLike[str], systems: Iterable[str], what: str) -> None:
    """Raise one :class:`NclueError` listing every problem :func:`index_problems` finds, before ``what`` starts."""
    problems = index_problems(collection_dir, list(systems))
    if problems:
        listed = "\n".join(f"  - {p}" for p in problems)
        raise NclueError(f"{what} needs indexes the collection does not have; nothing was run:\n{listed}")


def _attempt(check) -> list[str]:  # noqa: ANN001 - a callable raising NclueError
    try:
        check()
    except NclueError as exc:
        return [str(exc)]
    return []


def _lexical(collection: Path, variant: str | None) -> list[str]:
    from nclue.index.lexical import checked_meta

    return _attempt(lambda: checked_meta(collection))


def _dense(collection: Path, variant: str | None) -> list[str]:
    from nclue.index.dense import open_index_dir, select_index

    return _attempt(lambda: open_index_dir(collection, select_index(collection, variant)))


def _maxsim(collection: Path, variant: str | None) -> list[str]:
    from nclue.index.dense import open_index_dir, select_index
    from nclue.index.tokens import build_command, open_token_index

    problems = _dense(collection, variant)
    if problems:
        return problems

    def tokens() -> None:
        dense = open_index_dir(collection, select_index(collection, variant))
        if open_token_index(collection, dense) is None:
            raise NclueError(
                f"{collection}: no token index for the dense index {dense.key} (MaxSim reads it); build it with "
                f"`{build_command(collection)}`"
            )

    return _attempt(tokens)


def _structure(collection: Path, variant: str | None) -> list[str]:
    from nclue.corpus.structure import STRUCTURE_FILE
    from nclue.index.heading_vectors import headings_current

    calibration = collection / "calibration" / f"{variant}.json"
    dense_variant = variant if variant is not None and not calibration.is_file() else None
    problems = _lexical(collection, None) + _dense(collection, dense_variant)
    if not (collection / STRUCTURE_FILE).is_file():
        problems.append(
            f"{collection}: no document structure ({STRUCTURE_FILE}); build it with `nclue index {collection} --all`"
        )
    elif dense_variant is None and not problems and not headings_current(collection):
        problems.append(
            f"{collection}: the heading vectors are missing or stale for the dense index; rebuild them with "
            f"`nclue index {collection} --all`"
        )
    return problems
