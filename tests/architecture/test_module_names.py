"""Module names: no two modules share a file name unless they are declared mirrors, and the
renamed modules' old paths still import (the same module object) with a DeprecationWarning."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings
from collections import defaultdict
from pathlib import Path

import pytest

from nclue._moved import MOVED

SRC = Path(__file__).resolve().parents[2] / "src" / "nclue"

MIRRORS: dict[str, str] = {
    "__init__": "package markers",
    "clustered": "stats computes the clustered intervals, report renders their tables",
    "demo": "cli/demo.py is the `nclue demo` command, demo.py the job",
    "dense": "index/dense.py builds the dense index, systems/dense.py searches it",
    "lexical": "index/lexical.py builds the BM25 index, systems/lexical.py searches it",
    "export": "audit/export.py reads evaluator exports back, bench/export.py writes a BEIR folder",
    "metrics": "scoring/ (retrieval) and select/ (coverage) each define their study's metrics",
    "pipeline": "bench/ (construction) and select/ (coverage study) each run their stages in one call",
    "results": "scoring/ and select/ each type their study's results",
    "store": "corpus/store.py is the page store, audit/store.py the audit folder",
    "structure": "cli/structure.py is the `nclue structure` command of corpus/structure.py",
    "text": "audit/quote_match.py normalises quotes, bench/text.py holds the page-line rules",
    "validate": "audit/ validates replies, bench/ validates a release",
}
"""File names shared on purpose, with why; any other shared name fails."""


def shared_names(root: Path) -> dict[str, list[str]]:
    """File stems that more than one module under ``root`` uses, with their paths."""
    seen: dict[str, list[str]] = defaultdict(list)
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" not in path.parts:
            seen[path.stem].append(str(path.relative_to(root)))
    return {stem: paths for stem, paths in seen.items() if len(paths) > 1}


def test_no_two_modules_share_a_name_unless_declared() -> None:
    undeclared = {stem: paths for stem, paths in shared_names(SRC).items() if stem not in MIRRORS}
    assert not undeclared, f"modules sharing a file name: {undeclared}; rename one (see nclue._moved)"
    assert not {"params", "paraphrase", "evidence", "text"} & set(shared_names(SRC))


def test_the_name_check_finds_a_planted_second_module(tmp_path: Path) -> None:
    for rel in ("a/params.py", "b/params.py", "b/other.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("", encoding="utf-8")
    assert shared_names(tmp_path) == {"params": ["a/params.py", "b/params.py"]}


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_a_renamed_module_keeps_its_old_path(old: str, new: str) -> None:
    assert not (SRC.parent / (old.replace(".", "/") + ".py")).exists()
    assert (SRC.parent / (new.replace(".", "/") + ".py")).is_file()
    sys.modules.pop(old, None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    assert module is importlib.import_module(new)
    assert module.__name__ == new and module.__spec__.name == new
    assert any(issubclass(w.category, DeprecationWarning) and new in str(w.message) for w in caught)


def test_from_package_import_old_name_in_a_fresh_interpreter() -> None:
    """``from nclue.bench import params`` (the commonest old spelling) warns at the caller's line."""
    code = (
        "import warnings; warnings.simplefilter('error', DeprecationWarning)\n"
        "try:\n    from nclue.bench import params\nexcept DeprecationWarning as w:\n    print('warned', w)\n"
        "warnings.simplefilter('ignore')\nfrom nclue.bench import params\nprint(params.__name__, params.BuildOptions)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "warned nclue.bench.params was renamed nclue.bench.construction_params" in out
    assert "nclue.bench.construction_params <class 'nclue.bench.construction_params.BuildOptions'>" in out


def test_python_dash_m_of_an_old_path_names_the_new_one() -> None:
    done = subprocess.run([sys.executable, "-m", "nclue.bench.params"], capture_output=True, text=True)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "nclue.bench.params was renamed nclue.bench.construction_params" in done.stderr
