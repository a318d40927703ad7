"""Every name ``nclue`` exports lazily resolves, to the object its home module defines."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import nclue

INIT = Path(nclue.__file__)


def test_every_exported_name_resolves_to_its_home_module() -> None:
    from nclue import _API

    for name in nclue.__all__:
        value = getattr(nclue, name)
        if name != "__version__":
            assert value is getattr(importlib.import_module(_API[name]), name), name


def test_the_type_checking_imports_list_exactly_the_exported_names() -> None:
    """Editors and type checkers see the same names as ``nclue.__all__`` (the lazy map)."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    block = next(n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING")
    imported = {alias.name for node in block.body for alias in node.names}
    assert imported == set(nclue.__all__) - {"__version__"}
