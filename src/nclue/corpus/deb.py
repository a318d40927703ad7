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
import zlib
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


def data_tree(deb: Path) -> bytes:
    """The uncompressed ``data.tar`` of ``deb`` (pass it to :func:`iter_pdfs` and :func:`read_files`).

    Why whole: ``tarfile`` over a compressed stream seeks by decompressing again from the start,
    and reading a package's licence files and then its PDFs seeked once per member (32 s for the
    three ``debian-docs`` packages, against one decompression each). A caller that reads one
    package twice decompresses it once and hands the bytes to both readers.
    """
    members = ar_members(deb.read_bytes(), deb)
    names = [n for n in members if n.startswith("data.tar")]
    if not names:
        raise NclueError(f"{deb}: no data.tar member; delete it and fetch again")
    name = names[0]
    payload = members[name]
    if name.endswith(".zst"):
        return _unzstd(deb, payload)
    decoders = {".xz": lzma.decompress, ".lzma": lzma.decompress, ".gz": gzip.decompress, ".bz2": bz2.decompress}
    decode = next((fn for suffix, fn in decoders.items() if name.endswith(suffix)), None)
    if decode is None:
        return payload
    try:
        return decode(payload)
    except (lzma.LZMAError, zlib.error, OSError, EOFError, ValueError) as exc:
        raise NclueError(f"{deb}: cannot decompress {name} ({exc}); delete it and fetch again") from None


def _data_tar(deb: Path, tree: bytes | None) -> tarfile.TarFile:
    """The package's file tree, opened over its decompressed bytes (``tree``, else :func:`data_tree`)."""
    try:
        return tarfile.open(fileobj=io.BytesIO(data_tree(deb) if tree is None else tree), mode="r:")
    except tarfile.TarError as exc:
        raise NclueError(f"{deb}: cannot read its data.tar ({exc}); delete it and fetch again") from None


def _unzstd(deb: Path, payload: bytes) -> bytes:
    try:
        import zstandard
    except ImportError:
        zstandard = None
    if zstandard is not None:
        try:
            return zstandard.ZstdDecompressor().decompressobj().decompress(payload)
        except zstandard.ZstdError as exc:
            raise NclueError(f"{deb}: cannot decompress data.tar.zst ({exc}); delete it and fetch again") from None
    if shutil.which("dpkg-deb"):
        result = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(deb)], capture_output=True)
        if result.returncode != 0:
            message = result.stderr.decode("utf-8", "replace").strip() or f"exit code {result.returncode}"
            raise NclueError(f"{deb}: dpkg-deb cannot read it ({message}); delete it and fetch again")
        return result.stdout
    raise NclueError(f"{deb}: data.tar.zst needs `pip install zstandard` or dpkg-deb; install one and retry")


def _normal(name: str) -> str:
    """``./usr/x`` and ``/usr/x`` → ``usr/x``."""
    return posixpath.normpath("/" + name).lstrip("/")


def iter_pdfs(deb: Path, tree: bytes | None = None) -> Iterator[DebMember]:
    """Yield every ``*.pdf`` of ``deb``'s file tree, in archive order, symlinks dereferenced.

    Paths are normalised (no leading ``./``; ``..`` cannot climb above the tree root).
    A link whose target is not a regular file inside the package raises :class:`NclueError`.
    ``tree``: the package's :func:`data_tree` when the caller has it (else it is read here).
    """
    with _data_tar(deb, tree) as tar:
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


def read_files(deb: Path, paths: Iterator[str] | list[str], tree: bytes | None = None) -> dict[str, bytes]:
    """The bytes of each named regular file of ``deb`` that exists (normalised paths; links not followed);
    ``tree`` as for :func:`iter_pdfs`."""
    wanted = {_normal(p) for p in paths}
    out: dict[str, bytes] = {}
    with _data_tar(deb, tree) as tar:
        for member in tar.getmembers():
            path = _normal(member.name)
            if path in wanted and member.isfile():
                handle = tar.extractfile(member)
                if handle is not None:
                    out[path] = handle.read()
    return out
