"""Systems fixtures: the shared small real collection with its lexical index built once."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def lexical_collection(small_collection: Path) -> Path:
    """``small_collection`` with ``index/lexical`` built by :func:`nclue.index.lexical.build_lexical_index`."""
    from nclue.index.lexical import build_lexical_index, index_exists

    if not index_exists(small_collection):
        build_lexical_index(small_collection)
    return small_collection


@pytest.fixture(scope="session")
def workspace(lexical_collection: Path):  # noqa: ANN201
    """A :class:`nclue.systems.registry.Workspace` over the indexed small collection."""
    from nclue.systems.registry import Workspace

    return Workspace(lexical_collection)
