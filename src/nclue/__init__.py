"""nclue: conjunctive cross-page retrieval over long PDF documents.

The public API (``nclue.api``) is imported lazily, so ``import nclue`` and ``nclue --help``
stay fast::

    import nclue
    coll = nclue.open_collection("coll")
    bench = nclue.open_release("bench")
    card = nclue.evaluate(bench, [nclue.run_system(bench, coll, "bm25.and")])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nclue import _moved
from nclue._version import __version__

_moved.install()

_API = {
    "Collection": "nclue.api",
    "open_collection": "nclue.api",
    "ingest": "nclue.api",
    "build_benchmark": "nclue.api",
    "load_benchmark": "nclue.api",
    "open_release": "nclue.api",
    "load_run": "nclue.api",
    "run_system": "nclue.api",
    "evaluate": "nclue.api",
    "compare": "nclue.api",
    "select_documents": "nclue.select.single",
    "CoverageSelector": "nclue.select.single",
    "NclueError": "nclue.errors",
    "Release": "nclue.release",
    "Query": "nclue.types",
    "Judgment": "nclue.types",
    "CorpusDoc": "nclue.types",
    "RankedDoc": "nclue.types",
    "Run": "nclue.types",
    "Qrels": "nclue.types",
    "Scorecard": "nclue.scoring.results",
    "Comparison": "nclue.scoring.results",
    "DEFAULT_SEED": "nclue.types",
}

__all__ = ["__version__", *_API]

if TYPE_CHECKING:
    from nclue.api import (
        Collection,
        build_benchmark,
        compare,
        evaluate,
        ingest,
        load_benchmark,
        load_run,
        open_collection,
        open_release,
        run_system,
    )
    from nclue.errors import NclueError
    from nclue.release import Release
    from nclue.scoring.results import Comparison, Scorecard
    from nclue.select.single import CoverageSelector, select_documents
    from nclue.types import DEFAULT_SEED, CorpusDoc, Judgment, Qrels, Query, RankedDoc, Run


def __getattr__(name: str) -> Any:
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'nclue' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
