"""Checksums of index files: recorded at build time, checked cheaply on every load, fully on demand.

Every index records, per file, its size, a *quick* digest and its full SHA-256. The quick
digest hashes the size, the first and last 64 KiB and 16 evenly spaced 4 KiB blocks, so an
index load reads well under a megabyte per file however large the index is, yet catches a
truncated, emptied, overwritten or swapped file. A value changed inside an otherwise valid
file can fall between the samples: ``nclue index COLLECTION --verify`` compares every file's
full SHA-256.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from nclue.errors import NclueError
from nclue.io import sha256_file

EDGE = 1 << 16
BLOCK = 1 << 12
SAMPLES = 16


def quick_sha256(path: str | os.PathLike[str]) -> str:
    """SHA-256 over the size, the first and last 64 KiB and 16 evenly spaced 4 KiB blocks."""
    p = Path(path)
    size = p.stat().st_size
    digest = hashlib.sha256(str(size).encode())
    with open(p, "rb") as handle:
        digest.update(handle.read(EDGE))
        for i in range(SAMPLES):
            handle.seek(size * (i + 1) // (SAMPLES + 1))
            digest.update(handle.read(BLOCK))
        handle.seek(max(0, size - EDGE))
        digest.update(handle.read(EDGE))
    return digest.hexdigest()


def record_files(directory: str | os.PathLike[str], names: Iterable[str]) -> dict[str, dict[str, object]]:
    """``{relative name: {"bytes", "quick", "sha256"}}`` for the named files of ``directory``."""
    root = Path(directory)
    return {
        name: {
            "bytes": (root / name).stat().st_size,
            "quick": quick_sha256(root / name),
            "sha256": sha256_file(root / name),
        }
        for name in sorted(names)
    }


def files_under(directory: str | os.PathLike[str], exclude: Iterable[str] = ()) -> list[str]:
    """Relative names of every regular file below ``directory`` except ``exclude``."""
    root = Path(directory)
    skip = set(exclude)
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and p.name not in skip)


def problems(directory: str | os.PathLike[str], recorded: Mapping[str, Mapping], full: bool = False) -> list[str]:
    """Every recorded file that is missing, resized or changed (quick digest, or full SHA-256 if ``full``)."""
    root = Path(directory)
    out = []
    for name, expected in sorted(recorded.items()):
        path = root / name
        if not path.is_file():
            out.append(f"{path}: missing")
        elif path.stat().st_size != expected.get("bytes"):
            out.append(
                f"{path}: {path.stat().st_size} bytes, built with {expected.get('bytes')} (truncated or replaced)"
            )
        elif quick_sha256(path) != expected.get("quick"):
            out.append(f"{path}: content changed since the build")
        elif full and sha256_file(path) != expected.get("sha256"):
            out.append(f"{path}: SHA-256 differs from the build's (values changed inside the file)")
    return out


def check(directory: str | os.PathLike[str], recorded: Mapping[str, Mapping], fix: str) -> None:
    """Raise one :class:`NclueError` naming the first damaged file and ``fix`` (the cheap load-time check)."""
    found = problems(directory, recorded)
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise NclueError(f"{found[0]}{more}; the index is damaged — {fix}")
