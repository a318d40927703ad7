"""A stale, damaged or half-built index is never used silently: one line naming the file and the fix."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from nclue.corpus.store import META_FILE, PAGES_FILE, write_table_atomic
from nclue.index.lexical import INDEX_DIR
from nclue.index.lexical import META_FILE as INDEX_META
from tests.robustness.robust_helpers import assert_clean, swap_two_documents

QUERY = '"regression model"; "data frame"'


def test_a_stale_lexical_index_is_refused(cli, indexed: Path) -> None:
    assert cli("search", indexed, QUERY).exit_code == 0
    swap_two_documents(indexed)
    assert_clean(cli("search", indexed, QUERY), 2, "stale", f"nclue index {indexed} --lexical")


def test_a_store_replaced_behind_ingests_back_is_still_detected(cli, indexed: Path) -> None:
    """collection.json not rewritten: the pages file no longer matches its record, so it is hashed again."""
    table = pq.read_table(indexed / PAGES_FILE)
    rows = table.to_pylist()
    rows[0]["text"], rows[1]["text"] = rows[1]["text"], rows[0]["text"]
    write_table_atomic(indexed / PAGES_FILE, table.from_pylist(rows, schema=table.schema))
    assert_clean(cli("search", indexed, QUERY), 2, "stale")


def index_files(collection: Path) -> list[Path]:
    root = collection / INDEX_DIR
    return sorted(p for p in root.rglob("*") if p.is_file() and p.name != INDEX_META)


@pytest.mark.parametrize("cut", ["half", "empty"])
def test_every_truncated_index_file_is_named(cli, indexed: Path, cut: str) -> None:
    files = index_files(indexed)
    assert len(files) >= 8  # pages/ and docs/ bm25s matrices, vocabularies, params, terms, offsets
    for path in files:
        original = path.read_bytes()
        path.write_bytes(original[: len(original) // 2] if cut == "half" else b"")
        out = assert_clean(cli("search", indexed, QUERY), 2, "damaged", "nclue index")
        assert str(path) in out
        path.write_bytes(original)
    assert cli("search", indexed, QUERY).exit_code == 0


def test_a_damaged_index_description_is_named(cli, indexed: Path) -> None:
    meta = indexed / INDEX_DIR / INDEX_META
    meta.write_text('{"format": 3, "params": ')
    assert_clean(cli("search", indexed, QUERY), 2, str(meta), "damaged", "nclue index")
    meta.write_text("[1, 2]")
    assert_clean(cli("search", indexed, QUERY), 2, str(meta), "damaged")


def test_verify_finds_a_value_changed_inside_a_valid_file(cli, indexed: Path) -> None:
    """Same size, valid .npy header, one value changed between the sampled blocks: loads pass,
    ``nclue index --verify`` fails naming the file."""
    path = indexed / INDEX_DIR / "terms.npy"
    data = bytearray(path.read_bytes())
    size = len(data)
    starts = [size * (i + 1) // 17 for i in range(16)]  # the 16 sampled 4 KiB blocks
    gaps = [(a + 4096, b) for a, b in zip(starts, starts[1:]) if a + 4096 > 1 << 16 and b < size - (1 << 16)]
    assert gaps, size
    offset = (gaps[0][0] + gaps[0][1]) // 2  # outside the head, the tail and every sample
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))
    assert cli("search", indexed, QUERY).exit_code == 0
    out = assert_clean(cli("index", indexed, "--verify"), 1, "terms.npy", "SHA-256")
    assert "✗ lexical" in out


def test_verify_passes_on_an_intact_index(cli, indexed: Path) -> None:
    assert_clean(cli("index", indexed, "--verify"), 0, "✓ lexical")


def test_leftover_staging_of_a_killed_build_is_removed(indexed: Path) -> None:
    from nclue.index.lexical import build_lexical_index

    leftover = indexed / "index" / ".lexical.k1ll3d"
    (leftover / "pages").mkdir(parents=True)
    (leftover / "pages" / "data.csc.index.npy").write_bytes(b"\x93NUMPY half")
    build_lexical_index(indexed)
    assert not leftover.exists()
    assert [p.name for p in (indexed / "index").iterdir()] == ["lexical"]


@pytest.mark.parametrize(
    ("name", "damage", "fragment"),
    [
        ("pages.parquet", "truncate", "damaged"),
        ("docs.parquet", "empty", "damaged"),
        ("docs.parquet", "text", "damaged"),
    ],
)
def test_damaged_store_files_are_named(cli, indexed: Path, name: str, damage: str, fragment: str) -> None:
    path = indexed / name
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2] if damage == "truncate" else b"" if damage == "empty" else b"not parquet")
    out = assert_clean(cli("search", indexed, QUERY), 2, str(path), fragment, "nclue ingest")
    assert_clean(cli("collection", "info", indexed), 2, str(path))
    assert out


def test_a_damaged_collection_json_is_named(cli, indexed: Path) -> None:
    (indexed / META_FILE).write_text('{"ocr": ')
    assert_clean(cli("collection", "info", indexed), 2, str(indexed / META_FILE), "damaged", "nclue ingest")
    assert cli("search", indexed, QUERY).exit_code == 0  # the fingerprint falls back to hashing the pages
