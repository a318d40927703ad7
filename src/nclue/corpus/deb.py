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

import io
import posixpath
import shutil
import subprocess
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
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
    members = ar_members(deb.read_bytes(), deb)
    names = [n for n in members if n.startswith("data.tar")]
    if not names:
        raise NclueError(f"{deb}: no data.tar member; delete it and fetch again")
    name = names[0]
    payload = members[name]
    if name.endswith(".zst"):
        payload = _unzstd(deb, payload)
    try:
        return tarfile.open(fileobj=io.BytesIO(payload), mode="r:*")
    except tarfile.TarError as exc:
        raise NclueError(f"{deb}: cannot read {name} ({exc}); delete it and fetch again") from None


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
