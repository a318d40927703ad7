"""The model digest is memoised across processes on file sizes and times, and recomputed on change."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from nclue.models import identity


@pytest.fixture
def model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("NCLUE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(identity, "_memo", {})
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text('{"dim": 4}')
    (folder / "weights.bin").write_bytes(b"\x00\x01" * 100)
    return folder


def expected_digest(folder: Path) -> str:
    """The documented formula, computed here by hand."""
    lines = "".join(
        f"{name}\t{hashlib.sha256((folder / name).read_bytes()).hexdigest()}\n"
        for name in ("config.json", "weights.bin")
    )
    return hashlib.sha256(lines.encode()).hexdigest()


def test_a_new_process_reads_the_stored_digest_without_hashing(model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = identity.model_identity(model).sha256
    assert first == expected_digest(model)
    assert (identity.cache_dir() / identity.IDENTITIES_FILE).is_file()
    monkeypatch.setattr(identity, "_memo", {})  # as in a fresh process

    def no_hashing(path: object) -> str:
        raise AssertionError(f"hashed {path} again")

    monkeypatch.setattr(identity, "sha256_file", no_hashing)
    assert identity.model_identity(model).sha256 == first


def test_a_changed_file_is_hashed_again(model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = identity.model_identity(model).sha256
    monkeypatch.setattr(identity, "_memo", {})
    (model / "weights.bin").write_bytes(b"\x00\x02" * 100)  # same size
    stat = (model / "weights.bin").stat()
    os.utime(model / "weights.bin", ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    after = identity.model_identity(model).sha256
    assert after != before and after == expected_digest(model)


def test_a_damaged_or_unwritable_store_is_ignored(model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = identity.cache_dir() / identity.IDENTITIES_FILE
    store.parent.mkdir(parents=True)
    store.write_text("{not json")
    assert identity.model_identity(model).sha256 == expected_digest(model)
    monkeypatch.setattr(identity, "_memo", {})
    monkeypatch.setattr(identity, "atomic_write_text", lambda *a: (_ for _ in ()).throw(PermissionError("read-only")))
    store.unlink()
    assert identity.model_identity(model).sha256 == expected_digest(model)
