"""Audit fixtures: a real benchmark release built from the committed 12-PDF collection, and its audit."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from nclue.audit.audit_params import SampleParams
from tests.fixtures.small_collection import build_small_release


@pytest.fixture(scope="session")
def release_dir(small_collection: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``root/coll`` (fixture collection + lexical index) and ``root/bench`` (30 queries built from it)."""
    return build_small_release(small_collection, tmp_path_factory.mktemp("audit-release"))


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
