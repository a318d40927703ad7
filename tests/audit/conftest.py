"""Audit fixtures: a real benchmark release built from the committed 12-PDF collection, and its audit."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from nclue.audit.params import SampleParams


@pytest.fixture(scope="session")
def release_dir(small_collection: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``root/coll`` (fixture collection + lexical index) and ``root/bench`` (30 queries built from it)."""
    from nclue.bench.params import BuildOptions, ComposeParams, MineParams
    from nclue.bench.pipeline import build
    from nclue.index.lexical import build_lexical_index

    root = tmp_path_factory.mktemp("audit-release")
    shutil.copytree(small_collection, root / "coll")
    build_lexical_index(root / "coll")
    options = BuildOptions(
        mine=MineParams(min_df=2, max_df_frac=0.34, min_heading_df=1), compose=ComposeParams(n_queries=30)
    )
    build(root / "coll", root / "bench", options)
    return root


@pytest.fixture(scope="session")
def audited(release_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A 12-pair stratified audit of the release with its blind packet built (read-only for tests)."""
    from nclue.audit.packet import build_packet
    from nclue.audit.sample import sample

    root = tmp_path_factory.mktemp("audit")
    summary = sample(release_dir / "bench", root / "audit", SampleParams(pairs=12))
    packet = build_packet(root / "audit", release_dir / "coll", root / "packet.html")
    return {
        "root": root,
        "audit": root / "audit",
        "coll": release_dir / "coll",
        "bench": release_dir / "bench",
        "sample": summary,
        "packet": packet,
        "html": root / "packet.html",
    }


@pytest.fixture
def fresh_audit(audited: dict, tmp_path: Path) -> dict:
    """A private copy of the audit directory (tests that repair or adjudicate write into it)."""
    target = tmp_path / "audit"
    shutil.copytree(audited["audit"], target)
    return {**audited, "audit": target, "root": tmp_path}
