"""Every index the default matrix needs, built in order: ``nclue index COLLECTION --all``.

:data:`BUILDERS` is an ordered registry of :class:`IndexBuilder` — a name, a ``build``
function and a ``current`` test — over one :class:`IndexOptions`. :func:`build_all` walks it:
an index that is already current (present, fresh, undamaged, same settings) is kept, any
other is built; every builder resumes or replaces an unfinished build, so a killed
``--all`` picks up where it stopped. Order matters where one index reads another: the
token index belongs to a dense index, and the ``dense`` builder writes both in one encoder
pass (``tokens`` then finds its index current); the near-duplicate pairs
(:mod:`nclue.index.duplicates`) read the lexical index's term sequences.

To add an index, write its ``build`` and ``current`` functions and add one
:class:`IndexBuilder` line to :data:`BUILDERS` (the ``structure`` entry — document structure
and heading vectors, :mod:`nclue.index.heading_vectors` — came this way).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from nclue.engine import Engine
from nclue.errors import NclueError
from nclue.index.options import BM25Params, DenseOptions
from nclue.progress import Progress, quiet, stage_advance


@dataclass(frozen=True)
class IndexOptions:
    """Settings of every index ``--all`` builds (defaults = ``nclue index``'s defaults).

    ``bm25``: the lexical index's parameters; ``dense``: the dense and token indexes'
    (:class:`~nclue.index.options.DenseOptions`: model, backend, chunking, dtype, token bits,
    encoder workers); ``engine``: where the encoder shards run instead (e.g. a
    ``nclue.engine.RayEngine``; the caller closes it);
    ``keep_other_dense``: keep the collection's other dense indexes when one is built (else it
    replaces them, :func:`nclue.index.dense.adopt_dense_index`).
    """

    bm25: BM25Params = field(default_factory=BM25Params)
    dense: DenseOptions = field(default_factory=DenseOptions)
    rebuild: bool = False
    engine: Engine | None = None
    keep_other_dense: bool = False


@dataclass(frozen=True)
class IndexBuilder:
    """One index of ``--all``: ``build(collection, options, progress) -> directory`` and
    ``current(collection, options) -> bool`` (present, fresh, undamaged, same settings)."""

    name: str
    build: Callable[[Path, IndexOptions, Progress], Path]
    current: Callable[[Path, IndexOptions], bool]


def _build_lexical(collection: Path, options: IndexOptions, progress: Progress) -> Path:
    from nclue.index.lexical import build_lexical_index

    return build_lexical_index(collection, options.bm25)


def _lexical_current(collection: Path, options: IndexOptions) -> bool:
    from nclue.index.lexical import LexicalIndex

    try:
        return LexicalIndex(collection).params == options.bm25
    except NclueError:
        return False


def _build_dense(collection: Path, options: IndexOptions, progress: Progress) -> Path:
    from nclue.index.dense import adopt_dense_index, build_dense_index

    path = build_dense_index(
        collection, options.dense, rebuild=options.rebuild, progress=progress, tokens=True, engine=options.engine
    )
    adopt_dense_index(collection, path, keep_others=options.keep_other_dense)
    return path


def _matching_dense(collection: Path, options: IndexOptions):  # noqa: ANN202 - DenseIndex | None
    """The finished dense index with exactly ``options``' settings, or ``None``."""
    from nclue.index.dense import dense_settings, list_dense_indexes, open_index_dir

    wanted = dense_settings(collection, options.dense)
    for directory in list_dense_indexes(collection):
        if directory.name != wanted["key"]:
            continue
        index = open_index_dir(collection, directory)
        if all(index.manifest.get(k) == v for k, v in wanted["settings"].items() if k != "shard_size"):
            return index
    return None


def _dense_current(collection: Path, options: IndexOptions) -> bool:
    try:
        return not options.rebuild and _matching_dense(collection, options) is not None
    except NclueError:
        return False


def _build_tokens(collection: Path, options: IndexOptions, progress: Progress) -> Path:
    from nclue.index.tokens import build_token_index

    dense = _matching_dense(collection, options)
    if dense is None:
        raise NclueError(
            f"{collection}: the token index needs the dense index first; run `nclue index {collection} --all`"
        )
    return build_token_index(
        collection, dense, bits=options.dense.token_bits, progress=progress, workers=options.dense.workers,
        engine=options.engine, batch_size=options.dense.batch_size,
    )  # fmt: skip


def _tokens_current(collection: Path, options: IndexOptions) -> bool:
    from nclue.index.tokens import open_token_index

    try:
        dense = _matching_dense(collection, options)
        index = open_token_index(collection, dense) if dense is not None else None
    except NclueError:
        return False
    return index is not None and index.bits == options.dense.token_bits


def _build_structure(collection: Path, options: IndexOptions, progress: Progress) -> Path:
    from nclue.corpus.structure import build_structure
    from nclue.index.heading_vectors import build_heading_vectors

    build_structure(collection, rebuild=options.rebuild)  # resumable; kept when fresh
    return build_heading_vectors(collection)


def _structure_current(collection: Path, options: IndexOptions) -> bool:
    from nclue.index.heading_vectors import headings_current

    return not options.rebuild and headings_current(collection)


def _build_duplicates(collection: Path, options: IndexOptions, progress: Progress) -> Path:
    from nclue.index.duplicates import build_duplicates

    return build_duplicates(collection, rebuild=options.rebuild)


def _duplicates_current(collection: Path, options: IndexOptions) -> bool:
    from nclue.index.duplicates import duplicates_current

    return not options.rebuild and duplicates_current(collection)


BUILDERS: list[IndexBuilder] = [
    IndexBuilder("lexical", _build_lexical, _lexical_current),
    IndexBuilder("duplicates", _build_duplicates, _duplicates_current),
    IndexBuilder("dense", _build_dense, _dense_current),
    IndexBuilder("tokens", _build_tokens, _tokens_current),
    IndexBuilder("structure", _build_structure, _structure_current),
]


@dataclass(frozen=True)
class BuildStep:
    """What :func:`build_all` did for one index: ``built`` or ``kept``, and the seconds it took."""

    name: str
    action: str
    seconds: float


def build_all(
    collection_dir: str | os.PathLike[str],
    options: IndexOptions = IndexOptions(),
    progress: Progress = quiet,
    on_step: Callable[[BuildStep], None] | None = None,
) -> list[BuildStep]:
    """Build every index of :data:`BUILDERS` that is not current, in order; report each step.

    ``progress`` (:mod:`nclue.progress`) hears ``"indexes"`` (one per builder) and the stages of
    the builds it runs (``"dense chunks"``, ``"token chunks"``).
    """
    collection = Path(collection_dir)
    steps = []
    done = stage_advance(progress, "indexes", len(BUILDERS))
    for builder in BUILDERS:
        started = time.perf_counter()
        if builder.current(collection, options) and not options.rebuild:
            action = "kept"
        else:
            builder.build(collection, options, progress)
            action = "built"
        step = BuildStep(builder.name, action, time.perf_counter() - started)
        steps.append(step)
        done(1)
        if on_step is not None:
            on_step(step)
    return steps


def remove_other_dense_indexes(collection_dir: str | os.PathLike[str], options: IndexOptions) -> list[str]:
    """Delete every dense index (with its token index) that ``options`` would not build; return their names.

    A collection whose matrix names the plain ``dense`` backbone must hold one dense index; a
    folder that one program owns (``nclue demo``'s) calls this before :func:`build_all` when
    its settings changed (e.g. another backend), so the old vectors do not make ``dense``
    ambiguous. An index with the wanted name but other settings (or unfinished with other
    settings) is removed too and rebuilt.
    """
    import shutil

    from nclue.index.dense import dense_root, dense_settings, read_manifest
    from nclue.index.tokens import token_dir

    collection = Path(collection_dir)
    root = dense_root(collection)
    if not root.is_dir():
        return []
    wanted = dense_settings(collection, options.dense)
    removed = []
    for directory in sorted(p for p in root.iterdir() if p.is_dir()):
        manifest = read_manifest(directory) or {}
        same = directory.name == wanted["key"] and all(
            manifest.get(k) == v for k, v in wanted["settings"].items() if k != "shard_size"
        )
        if not same:
            shutil.rmtree(directory)
            shutil.rmtree(token_dir(collection, directory.name), ignore_errors=True)
            removed.append(directory.name)
    return removed


def verify_token_indexes(collection_dir: str | os.PathLike[str]) -> dict[str, list[str]]:
    """Full check of every finished token index: its dense index, freshness, every file's SHA-256."""
    from nclue.index.dense import dense_root, open_index_dir
    from nclue.index.integrity import problems
    from nclue.index.tokens import list_token_indexes, open_token_index

    collection = Path(collection_dir)
    out = {}
    for directory in list_token_indexes(collection):
        try:
            dense = open_index_dir(collection, dense_root(collection) / directory.name)
            index = open_token_index(collection, dense)
        except NclueError as exc:
            out[directory.name] = [str(exc)]
            continue
        assert index is not None
        out[directory.name] = problems(directory, index.manifest["files"], full=True)
    return out
