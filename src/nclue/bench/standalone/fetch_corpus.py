#!/usr/bin/env python3
"""Fetch the PDFs of an nclue benchmark release from its ``corpus.jsonl`` and check every SHA-256.

Standard library only (Python >= 3.9); nclue need not be installed.

    python fetch_corpus.py [RELEASE_DIR] --out PDF_DIR [--mirror URL] [--cache DIR]

Each ``corpus.jsonl`` row with a ``url`` of the form ``<package URL>#<path inside the package>``
is fetched: the Debian package (``.deb``) is downloaded once (kept under ``--cache``), read as an
``ar`` archive whose ``data.tar.{xz,gz,bz2}`` holds the file tree (``.zst`` needs ``dpkg-deb``),
the file is taken out (symbolic links followed inside the archive), its SHA-256 compared with
the row's ``sha256``, and it is written to ``PDF_DIR/<path>`` — the row's own ``path``, so
``nclue ingest PDF_DIR COLLECTION`` gives the release's ``doc_id``s. A file already there with the
right hash is not fetched again (a run resumes). ``--mirror`` replaces the URLs' Debian mirror
(everything before ``/pool/``) with another one, e.g. ``http://snapshot.debian.org/archive/debian/20230601T000000Z``.

Exit status: 0 when every row with a URL is present with its hash; 1 otherwise, each failure
listed (a row without a URL is reported and counts as a failure: it cannot be rebuilt).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import posixpath
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

AR_MAGIC = b"!<arch>\n"
MAX_LINKS = 16


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_corpus(release: Path) -> list[dict]:
    path = release / "corpus.jsonl"
    if not path.is_file():
        sys.exit(f"{path}: not found; give the release directory (the folder holding corpus.jsonl)")
    rows = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as exc:
                sys.exit(f"{path}:{number}: not JSON ({exc}); restore the file from the release")
            if not isinstance(row, dict) or not isinstance(row.get("doc_id"), str):
                sys.exit(f"{path}:{number}: a corpus row needs a string 'doc_id'")
            rows.append(row)
    return rows


def ar_members(blob: bytes, origin: str) -> dict[str, bytes]:
    """Split an ``ar`` archive (``ar(5)``: 60-byte member headers) into ``{name: bytes}``."""
    if not blob.startswith(AR_MAGIC):
        raise ValueError(f"{origin}: not a Debian package (no ar header)")
    members, offset = {}, len(AR_MAGIC)
    while offset + 60 <= len(blob):
        header = blob[offset : offset + 60]
        name = header[:16].decode("ascii", "replace").strip().rstrip("/")
        size = int(header[48:58].decode("ascii").strip())
        start = offset + 60
        members[name] = blob[start : start + size]
        offset = start + size + (size & 1)
    return members


def data_tar(deb: Path) -> tarfile.TarFile:
    members = ar_members(deb.read_bytes(), str(deb))
    names = [n for n in members if n.startswith("data.tar")]
    if not names:
        raise ValueError(f"{deb}: no data.tar member")
    payload = members[names[0]]
    if names[0].endswith(".zst"):
        if not shutil.which("dpkg-deb"):
            raise ValueError(f"{deb}: data.tar.zst needs dpkg-deb (the standard library has no zstd)")
        payload = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(deb)], check=True, capture_output=True).stdout
    return tarfile.open(fileobj=io.BytesIO(payload), mode="r:*")


def normal(name: str) -> str:
    return posixpath.normpath("/" + name).lstrip("/")


def extract(deb: Path, wanted: set[str]) -> dict[str, bytes]:
    """``{path: bytes}`` of each wanted path of the package (links followed inside the archive).

    Files are read in archive order: a compressed tar stream seeks backwards only by
    decompressing again from the start, so reading in any other order is quadratic.
    """
    out = {}
    with data_tar(deb) as tar:
        entries = {normal(m.name): m for m in tar.getmembers()}
        targets: dict[str, tarfile.TarInfo] = {}
        for path in wanted:
            current, member, depth = path, entries.get(path), 0
            while member is not None and (member.issym() or member.islnk()) and depth <= MAX_LINKS:
                link = member.linkname
                current = (
                    normal(link)
                    if member.islnk() or link.startswith("/")
                    else posixpath.normpath(posixpath.join(posixpath.dirname(current), link))
                )
                member, depth = entries.get(current), depth + 1
            if member is not None and member.isfile():
                targets[path] = member
        for path, member in sorted(targets.items(), key=lambda item: item[1].offset_data):
            handle = tar.extractfile(member)
            if handle is not None:
                out[path] = handle.read()
    return out


def remirror(url: str, mirror: str | None) -> str:
    if not mirror or "/pool/" not in url:
        return url
    return mirror.rstrip("/") + url[url.index("/pool/") :]


def download(url: str, cache: Path) -> Path:
    target = cache / hashlib.sha256(url.encode()).hexdigest()[:16] / posixpath.basename(url.split("?")[0])
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with urllib.request.urlopen(url, timeout=120) as response:
        data = response.read()
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".part-")
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.replace(tmp, target)
    return target


def write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".part-")
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.replace(tmp, path)


def fetch(release: Path, out: Path, cache: Path, mirror: str | None) -> tuple[int, int, list[str]]:
    """``(fetched, already_present, problems)``."""
    rows = read_corpus(release)
    problems: list[str] = []
    by_package: dict[str, list[tuple[dict, str]]] = {}
    present = 0
    for row in rows:
        url, path, sha = row.get("url"), row.get("path"), row.get("sha256")
        if not url or "#" not in url or not path or not sha:
            problems.append(f"{row['doc_id']}: no url#member, path and sha256 in corpus.jsonl; it cannot be fetched")
            continue
        target = out / path
        if target.is_file() and sha256_file(target) == sha:
            present += 1
            continue
        package, member = url.split("#", 1)
        by_package.setdefault(remirror(package, mirror), []).append((row, normal(member)))
    fetched = 0
    for number, (package, items) in enumerate(sorted(by_package.items()), start=1):
        print(f"[{number}/{len(by_package)}] {package} ({len(items)} file(s))", file=sys.stderr)
        try:
            files = extract(download(package, cache), {member for _, member in items})
        except (urllib.error.URLError, OSError, ValueError, tarfile.TarError) as exc:
            problems += [f"{row['doc_id']}: {package}: {exc}" for row, _ in items]
            continue
        for row, member in items:
            data = files.get(member)
            if data is None:
                problems.append(f"{row['doc_id']}: {member} is not a file in {package}")
            elif sha256_bytes(data) != row["sha256"]:
                problems.append(f"{row['doc_id']}: SHA-256 mismatch for {member} (the package changed); try --mirror")
            else:
                write_atomic(out / row["path"], data)
                fetched += 1
    return fetched, present, problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Fetch an nclue release's PDFs from corpus.jsonl and check every SHA-256 (standard library only).",
        epilog="example: python fetch_corpus.py . --out pdfs && nclue ingest pdfs coll",
    )
    here = Path(__file__).resolve().parent
    parser.add_argument(
        "release", nargs="?", type=Path, default=here, help="release directory (default: this script's)"
    )
    parser.add_argument("--out", type=Path, required=True, help="folder to write the PDFs into (PATH/<corpus path>)")
    parser.add_argument(
        "--cache", type=Path, default=None, help="where downloaded packages are kept (default: OUT/.packages)"
    )
    parser.add_argument("--mirror", default=None, help="a Debian mirror to use instead of the URLs' own")
    args = parser.parse_args(argv)
    cache = args.cache or args.out / ".packages"
    fetched, present, problems = fetch(args.release, args.out, cache, args.mirror)
    print(f"{fetched} fetched, {present} already present, {len(problems)} problem(s)")
    for problem in problems:
        print(f"  {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
