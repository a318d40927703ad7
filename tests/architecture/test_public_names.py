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


def test_renamed_functions_keep_their_old_names_with_a_warning(tmp_path: Path) -> None:
    """``load_benchmark`` -> ``open_release``; ``scoring.load_run`` -> ``load_run_matrix``;
    ``scoring.build_benchmark`` -> ``benchmark_from_judgments``: the old names warn and give the same values."""
    import numpy as np
    import pytest

    from nclue import scoring
    from tests.scoring.nclue_eval_helpers import S6_QRELS, S6_QUERY, make_release

    corpus = [{"doc_id": d, "n_pages": 50} for d in sorted({r["doc_id"] for r in S6_QRELS})]
    tiny_bench = make_release(tmp_path / "bench", [S6_QUERY], S6_QRELS, corpus)

    with pytest.warns(DeprecationWarning, match="open_release"):
        old = nclue.load_benchmark(tiny_bench)
    new = nclue.open_release(tiny_bench)
    assert old.queries == new.queries and old.judgments == new.judgments
    bench = scoring.Benchmark.from_release(new)
    with pytest.warns(DeprecationWarning, match="benchmark_from_judgments"):
        rebuilt = scoring.build_benchmark(None, list(bench.qids), list(bench.conditions), new.judgments)
    assert rebuilt.qids == bench.qids and np.array_equal(rebuilt.family, bench.family)
    run = tiny_bench.parent / "run.trec"
    run.write_text(f"{new.queries[0].qid} Q0 {new.judgments[0].doc_id} 1 1.0 r\n", encoding="utf-8")
    with pytest.warns(DeprecationWarning, match="load_run_matrix"):
        old_run = scoring.load_run(run, bench)
    assert np.array_equal(old_run.docs, scoring.load_run_matrix(run, bench).docs)
