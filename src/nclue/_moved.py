"""Old module paths that still import, with a warning: modules renamed so no two share a name.

Each entry of :data:`MOVED` maps a module's old dotted path to its new one. Importing the old
path gives the new module itself (the same object, so ``isinstance`` and monkeypatching agree)
and a :class:`DeprecationWarning` naming the new path. The finder is installed once, by
``nclue/__init__.py``; it answers only for the old paths listed here. The finder and loader are
plain classes with the protocol's methods (not ``importlib.abc`` subclasses, whose import pulls in
``importlib.resources`` and ``tempfile``: 20 ms on every ``import nclue``).
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

MOVED: dict[str, str] = {
    "nclue.systems.structure": "nclue.systems.structural",
    "nclue.index.structure": "nclue.index.heading_vectors",
    "nclue.bench.params": "nclue.bench.construction_params",
    "nclue.audit.params": "nclue.audit.audit_params",
    "nclue.select.params": "nclue.select.selection_defaults",
    "nclue.evidence.params": "nclue.evidence.evidence_defaults",
    "nclue.bench.paraphrase": "nclue.bench.paraphrase_fill",
    "nclue.report.paraphrase": "nclue.report.paraphrase_probe",
    "nclue.bench.evidence": "nclue.bench.excerpts",
    "nclue.select.evidence": "nclue.select.coverage_evidence",
    "nclue.audit.text": "nclue.audit.quote_match",
}
"""Old dotted path → new dotted path."""


class _Alias:
    """Loads an old path as the module at its new path."""

    def __init__(self, new: str) -> None:
        self.new = new

    def create_module(self, spec: ModuleSpec) -> None:
        """The default placeholder module; :meth:`exec_module` swaps it for the new one."""

    def get_code(self, fullname: str) -> None:
        """``python -m OLD.PATH``: refused with the new path (runpy asks the loader for code)."""
        raise ImportError(f"{fullname} was renamed {self.new}; run `python -m {self.new}`")

    def exec_module(self, module: ModuleType) -> None:
        """Put the new module under the old name: the import system returns what ``sys.modules``
        holds after this call, so the placeholder is never seen (and the new module's own
        ``__spec__`` is left as it is)."""
        warnings.warn(
            f"{module.__name__} was renamed {self.new}; import {self.new} (the old path will be removed)",
            DeprecationWarning,
            stacklevel=2,
        )
        sys.modules[module.__name__] = importlib.import_module(self.new)


class MovedFinder:
    """A meta-path finder that answers only for the old paths of :data:`MOVED`."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        new = MOVED.get(fullname)
        return None if new is None else ModuleSpec(fullname, _Alias(new))


def install() -> None:
    """Put :class:`MovedFinder` on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, MovedFinder) for f in sys.meta_path):
        sys.meta_path.append(MovedFinder())
