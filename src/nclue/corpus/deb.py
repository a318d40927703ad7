"""Read the PDFs out of a Debian binary package (``.deb``) without installing it.

A ``.deb`` is an ``ar`` archive (``!<arch>\\n`` then 60-byte member headers, see
``deb(5)`` and ``ar(5)``) whose ``data.tar[.xz|.gz|.bz2|.zst]`` member holds the file
tree. We parse the ``ar`` container and the tar with the standard library rather than
calling ``dpkg -x`` because (1) only the PDFs are wanted, not the whole tree, (2) it
works where dpkg is absent, and (3) symlinked PDFs (``r-doc-pdf`` links its manuals from
``usr/share/doc`` into ``usr/share/R``) must be dereferenced inside the archive.
Only ``data.tar.zst`` needs help: the ``zstandard`` module when installed, otherwise
``dpkg-deb --fsys-tarfile``.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import posixpath
import shutil
import subprocess
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from nclue.errors import NclueError

AR_MAGIC = b"!<arch>\n"
AR_HEADER = 60
MAX_LINK_DEPTH = 16


@dataclass(frozen=True)
class DebMember:
    """One PDF of a package: its path inside the package tree and its bytes."""

    path: str
    data: bytes
    via_symlink: bool


def ar_members(blob: bytes, origin: object) -> dict[str, bytes]:
    """Split an ``ar`` archive into ``{name: bytes}`` (GNU ``name/`` suffixes removed)."""
    if not blob.startswith(AR_MAGIC):
        raise NclueError(f"{origin}: not a Debian package (no ar header); delete it and fetch again")
    members: dict[str, bytes] = {}
    offset = len(AR_MAGIC)
    while offset + AR_HEADER <= len(blob):
        header = blob[offset : offset + AR_HEADER]
        name = header[:16].decode("ascii", "replace").strip().rstrip("/")
        try:
            size = int(header[48:58].decode("ascii").strip())
        except ValueError:
            raise NclueError(
                f"{origin}: corrupt ar member header at byte {offset}; delete it and fetch again"
            ) from None
        start = offset + AR_HEADER
        members[name] = blob[start : start + size]
        offset = start + size + (size & 1)
    return members


def _data_tar(deb: Path) -> tarfile.TarFile:
    """The package's file tree, opened over its decompressed bytes (:func:`_tree_bytes`)."""
    stat = deb.stat()
    payload = _tree_bytes(str(deb), stat.st_size, stat.st_mtime_ns)
    try:
        return tarfile.open(fileobj=io.BytesIO(payload), mode="r:")
    except tarfile.TarError as exc:
        raise NclueError(f"{deb}: cannot read its data.tar ({exc}); delete it and fetch again") from None


@lru_cache(maxsize=1)
def _tree_bytes(deb: str, size: int, mtime_ns: int) -> bytes:
    """The uncompressed ``data.tar`` of ``deb`` (keyed on its size and time, so a new file is read again).

    Why whole: ``tarfile`` over a compressed stream seeks by decompressing again from the start,
    and reading a package's licence files and then its PDFs seeked once per member (32 s for the
    three ``debian-docs`` packages, against one decompression each). The last package is kept,
    so its licence files and PDFs come from one decompression.
    """
    members = ar_members(Path(deb).read_bytes(), deb)
    names = [n for n in members if n.startswith("data.tar")]
    if not names:
        raise NclueError(f"{deb}: no data.tar member; delete it and fetch again")
    name = names[0]
    payload = members[name]
    try:
        if name.endswith(".zst"):
            return _unzstd(Path(deb), payload)
        if name.endswith(".xz"):
            return lzma.decompress(payload)
        if name.endswith(".gz"):
            return gzip.decompress(payload)
        if name.endswith(".bz2"):
            return bz2.decompress(payload)
    except (lzma.LZMAError, OSError, EOFError, ValueError) as exc:
        raise NclueError(f"{deb}: cannot decompress {name} ({exc}); delete it and fetch again") from None
    return payload


def _unzstd(deb: Path, payload: bytes) -> bytes:
    try:
        import zstandard
    except ImportError:
        zstandard = None
    if zstandard is not None:
        return zstandard.ZstdDecompressor().decompressobj().decompress(payload)
    if shutil.which("dpkg-deb"):
        return subprocess.run(["dpkg-deb", "--fsys-tarfile", str(deb)], check=True, capture_output=True).stdout
    raise NclueError(f"{deb}: data.tar.zst needs `pip install zstandard` or dpkg-deb; install one and retry")


def _normal(name: str) -> str:
    """``./usr/x`` and ``/usr/x`` → ``usr/x``."""
    return posixpath.normpath("/" + name).lstrip("/")


def iter_pdfs(deb: Path) -> Iterator[DebMember]:
    """Yield every ``*.pdf`` of ``deb``'s file tree, in archive order, symlinks dereferenced.

    Paths are normalised (no leading ``./``; ``..`` cannot climb above the tree root).
    A link whose target is not a regular file inside the package raises :class:`NclueError`.
    """
    with _data_tar(deb) as tar:
        entries = {_normal(m.name): m for m in tar.getmembers()}
        for path, member in entries.items():
            if not path.lower().endswith(".pdf"):
                continue
            target, depth = member, 0
            current = path
            while target.issym() or target.islnk():
                depth += 1
                link = target.linkname
                current = (
                    _normal(link)
                    if (target.islnk() or link.startswith("/"))
                    else posixpath.normpath(posixpath.join(posixpath.dirname(current), link))
                )
                resolved = entries.get(current)
                if resolved is None or depth > MAX_LINK_DEPTH:
                    raise NclueError(f"{deb}: {path} links to {link!r}, which is not in the package")
                target = resolved
            if not target.isfile():
                continue
            handle = tar.extractfile(target)
            if handle is None:
                continue
            yield DebMember(path=path, data=handle.read(), via_symlink=target is not member)


def read_files(deb: Path, paths: Iterator[str] | list[str]) -> dict[str, bytes]:
    """The bytes of each named regular file of ``deb`` that exists (normalised paths; links not followed)."""
    wanted = {_normal(p) for p in paths}
    out: dict[str, bytes] = {}
    with _data_tar(deb) as tar:
        for member in tar.getmembers():
            path = _normal(member.name)
            if path in wanted and member.isfile():
                handle = tar.extractfile(member)
                if handle is not None:
                    out[path] = handle.read()
    return out
