"""From a system name to a runnable system: the registry of backbones and combinators.

Backbone families and combinators live in modules imported only when a name uses them,
so ``nclue --help`` and BM25-only runs never import torch.

* A **backbone module** (``BACKBONES``) exposes
  ``load_backbone(workspace: Workspace, variant: str | None) -> Backbone`` and may expose
  ``build_op(spec: Op, backbone: Backbone, workspace: Workspace) -> System | None`` for
  operations of its own (BM25's ``and``/``or``/``condition_text``/``cover``); returning
  ``None`` falls through to the generic operations of :mod:`nclue.systems.operations`
  (``joint``, ``joint(max|ptop{p})``, ``page_max``, ``ptop{p}``,
  ``decompose(min|product|hmean|distinct)``), which work for any backbone.
* A **combinator module** (``FUNCTIONS``) exposes
  ``build_system(spec: Call, workspace: Workspace) -> System``.

A :class:`Workspace` holds one opened collection and caches loaded backbones and built
systems, so ``rrf(bm25.and, bm25.decompose(distinct))`` loads the BM25 index once.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TypeVar

from nclue.corpus.store import PageStore
from nclue.errors import NclueError
from nclue.systems.backbone import Backbone, PageTable, System
from nclue.systems.names import Call, Op, Spec, format_name, parse_name, suggest

T = TypeVar("T")

BACKBONES: dict[str, str] = {
    "bm25": "nclue.systems.lexical",
    "dense": "nclue.systems.dense",
    "maxsim": "nclue.systems.late_interaction",
    "struct": "nclue.systems.structural",
}
FUNCTIONS: dict[str, str] = {
    "rrf": "nclue.systems.fusion",
    "rerank": "nclue.systems.rerank",
}


def _import(module: str, what: str) -> ModuleType:
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name and module.startswith(exc.name):
            raise NclueError(f"{what} is not available in this installation (module {module} is missing)") from None
        raise NclueError(
            f"{what} needs the optional package {exc.name!r}; install it with `pip install 'nclue[neural]'`"
        ) from None


class Workspace:
    """One opened collection plus caches of its backbones and systems."""

    def __init__(self, collection_dir: str | os.PathLike[str], store: PageStore | None = None) -> None:
        self.collection_dir = Path(collection_dir)
        self.store = store if store is not None else PageStore.open(self.collection_dir)
        self.pages = PageTable.from_store(self.store)
        self._backbones: dict[str, Backbone] = {}
        self._systems: dict[str, System] = {}
        self._shared: dict[tuple, object] = {}

    def shared(self, key: tuple, make: Callable[[], T]) -> T:
        """The object ``make()`` returns, made once per ``key`` in this workspace: a loaded model
        that several systems of one name (``rrf(rerank(A, m), rerank(B, m))``) use, loaded once."""
        if key not in self._shared:
            self._shared[key] = make()
        return self._shared[key]  # type: ignore[return-value]

    def backbone(self, token: str) -> Backbone:
        """The loaded backbone for a token such as ``bm25`` or ``dense:e5`` (cached)."""
        if token not in self._backbones:
            family, _, variant = token.partition(":")
            if family not in BACKBONES:
                raise NclueError(
                    f"unknown backbone {family!r}; known backbones: {', '.join(sorted(BACKBONES))}" + suggest(token)
                )
            module = _import(BACKBONES[family], f"backbone {family!r}")
            self._backbones[token] = module.load_backbone(self, variant or None)
        return self._backbones[token]

    def system(self, name: str | Spec) -> System:
        """The system for a name (parsed, canonicalised, cached)."""
        spec = parse_name(name) if isinstance(name, str) else name
        key = format_name(spec)
        if key not in self._systems:
            self._systems[key] = self._build(spec)
        return self._systems[key]

    def _build(self, spec: Spec) -> System:
        from nclue.systems import operations

        if isinstance(spec, Call):
            if spec.func not in FUNCTIONS:
                raise NclueError(
                    f"unknown system combinator {spec.func!r} in {format_name(spec)!r}" + suggest(format_name(spec))
                )
            module = _import(FUNCTIONS[spec.func], f"combinator {spec.func!r}")
            return module.build_system(spec, self)
        assert isinstance(spec, Op)
        if spec.family not in BACKBONES:
            raise NclueError(
                f"unknown backbone {spec.family!r} in {format_name(spec)!r}; known: {', '.join(sorted(BACKBONES))}"
                + suggest(format_name(spec))
            )
        backbone = self.backbone(spec.backbone)
        module = importlib.import_module(BACKBONES[spec.family])
        builder = getattr(module, "build_op", None)
        system = builder(spec, backbone, self) if builder is not None else None
        return system if system is not None else operations.build_op(spec, backbone)


def build_system(name: str, collection_dir: str | os.PathLike[str]) -> System:
    """Convenience: open ``collection_dir`` and build one system by name."""
    return Workspace(collection_dir).system(name)
