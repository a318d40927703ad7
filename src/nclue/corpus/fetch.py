"""Corpus recipes: bring a folder of real PDFs from Debian documentation packages.

``fetch_recipe("debian-docs", DEST)`` downloads ``texlive-science-doc``,
``texlive-humanities-doc`` and ``r-doc-pdf``; ``debian-docs-shift`` (the SourceShift corpus,
``docs/report.md#sourceshift``) eight other documentation packages that ship PDFs, each
package one *source* of the per-source extraction gate: ``texlive-metapost-doc``,
``pari-doc``, ``octave-doc``, ``asymptote-doc``, ``auto-multiple-choice-doc-pdf``,
``yacas-doc``, ``gnuplot-doc`` and ``texlive-fonts-recommended-doc`` (bookworm: 131 PDFs,
127 distinct, 5,494 pages; 68 MB of packages). Downloads use ``apt-get download`` where apt exists,
otherwise the ``.deb`` named by a mirror's ``Packages`` index), extracts only their PDFs
(symlinks dereferenced, see :mod:`nclue.corpus.deb`) to ``DEST/<package>/<path>`` and
records, per PDF, its relative path, SHA-256, size, source package and URL (the
``.deb``'s URL ``#`` the path inside it) in ``DEST/fetch-manifest.jsonl``.

Layout of ``<path>``: the package path with its ``usr/share/doc/`` prefix removed, else
its ``usr/share/`` prefix (so ``texlive-science-doc/texlive-doc/latex/functan/functan.pdf``
and ``r-doc-pdf/R/doc/manual/R-intro.pdf``).

Caching: each package is committed by ``DEST/.nclue/<package>.json`` (written last,
atomically). A package whose record exists and whose files are all present with the
recorded sizes is not fetched again, so a second call does no network work. A lock file
serialises concurrent fetches into the same ``DEST``.
"""

from __future__ import annotations

import fcntl
import gzip
import json
import lzma
import os
import shutil
import subprocess
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from nclue.corpus.deb import data_tree, iter_pdfs, read_files
from nclue.corpus.licences import licence_of, package_files
from nclue.errors import NclueError
from nclue.io import (
    atomic_write_bytes,
    atomic_write_text,
    dumps_canonical,
    iter_jsonl,
    sha256_bytes,
    sha256_file,
    write_json,
)

RECIPES: dict[str, tuple[str, ...]] = {
    "debian-docs": ("texlive-science-doc", "texlive-humanities-doc", "r-doc-pdf"),
    "debian-docs-shift": (
        "texlive-metapost-doc",
        "pari-doc",
        "octave-doc",
        "asymptote-doc",
        "auto-multiple-choice-doc-pdf",
        "yacas-doc",
        "gnuplot-doc",
        "texlive-fonts-recommended-doc",
    ),
}
STATE_DIR = ".nclue"
MANIFEST = "fetch-manifest.jsonl"
DEFAULT_SUITE = "bookworm"
PATH_PREFIXES = ("usr/share/doc/", "usr/share/")
RECORD_VERSION = 3


@dataclass
class FetchSummary:
    """What :func:`fetch_recipe` did: files now in ``dest``, and whether the network was used."""

    recipe: str
    dest: Path
    packages: tuple[str, ...]
    n_pdfs: int
    n_bytes: int
    n_symlinks: int
    fetched: list[str] = field(default_factory=list)
    cached: list[str] = field(default_factory=list)

    @property
    def manifest(self) -> Path:
        """``DEST/fetch-manifest.jsonl``: one row per PDF (path, sha256, n_bytes, package)."""
        return self.dest / MANIFEST


def package_path(package: str, member: str) -> str:
    """Relative destination path of a package member (see the module docstring)."""
    for prefix in PATH_PREFIXES:
        if member.startswith(prefix):
            return f"{package}/{member[len(prefix) :]}"
    return f"{package}/{member}"


@contextmanager
def _locked(dest: Path) -> Iterator[None]:
    state = dest / STATE_DIR
    state.mkdir(parents=True, exist_ok=True)
    with open(state / "fetch.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _record_path(dest: Path, package: str) -> Path:
    return dest / STATE_DIR / f"{package}.json"


def _cached_record(dest: Path, package: str) -> dict | None:
    path = _record_path(dest, package)
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text("utf-8"))
    except json.JSONDecodeError:
        return None
    if record.get("version") != RECORD_VERSION:
        return None
    for row in record.get("files", []):
        target = dest / row["path"]
        if not target.is_file() or target.stat().st_size != row["n_bytes"]:
            return None
    return record


def _apt_uri(package: str) -> str | None:
    """The ``.deb`` URL apt would download (``apt-get download --print-uris``), if it says."""
    result = subprocess.run(["apt-get", "download", "--print-uris", package], capture_output=True, text=True)
    for line in result.stdout.splitlines():
        if line.startswith("'") and f"/{package}_" in line:
            return line.split("'")[1]
    return None


def _apt_download(package: str, workdir: Path) -> tuple[Path, str | None]:
    if not shutil.which("apt-get"):
        raise NclueError(
            "apt-get not found; pass --mirror http://deb.debian.org/debian to download the .deb files directly"
        )
    result = subprocess.run(["apt-get", "download", package], cwd=workdir, capture_output=True, text=True)
    if result.returncode != 0:
        message = (result.stderr.strip().splitlines() or ["unknown error"])[-1]
        raise NclueError(
            f"apt-get download {package} failed: {message}; check the package name, run `apt-get update`, "
            "or pass --mirror http://deb.debian.org/debian"
        )
    debs = sorted(workdir.glob(f"{package}_*.deb"))
    if not debs:
        raise NclueError(f"apt-get download {package} produced no .deb in {workdir}")
    return debs[-1], _apt_uri(package)


def _read_url(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=120) as response:
            return response.read()
    except (urllib.error.URLError, OSError) as exc:
        raise NclueError(f"{url}: download failed ({exc}); check --mirror and the network") from None


def parse_packages_index(text: str) -> dict[str, dict[str, str]]:
    """Parse a Debian ``Packages`` index (RFC-822 stanzas) into ``{package: fields}``.

    The highest ``Version`` string wins when a package appears twice (lexical order is
    enough to be deterministic; mirrors list one version per suite).
    """
    index: dict[str, dict[str, str]] = {}
    for stanza in text.split("\n\n"):
        fields: dict[str, str] = {}
        key = None
        for line in stanza.splitlines():
            if line.startswith((" ", "\t")) and key:
                fields[key] += "\n" + line.strip()
            elif ":" in line:
                key, _, value = line.partition(":")
                fields[key] = value.strip()
        name = fields.get("Package")
        if name and (name not in index or fields.get("Version", "") > index[name].get("Version", "")):
            index[name] = fields
    return index


def _mirror_index(mirror: str, suite: str) -> dict[str, dict[str, str]]:
    base = mirror.rstrip("/")
    errors = []
    for arch in ("binary-all", "binary-amd64"):
        for suffix, decode in ((".xz", lzma.decompress), (".gz", gzip.decompress), ("", bytes)):
            url = f"{base}/dists/{suite}/main/{arch}/Packages{suffix}"
            try:
                return parse_packages_index(decode(_read_url(url)).decode("utf-8", "replace"))
            except NclueError as exc:
                errors.append(str(exc))
    raise NclueError(f"{base}: no Packages index for suite {suite!r} ({errors[-1]}); check --mirror and --suite")


def _mirror_download(package: str, index: dict[str, dict[str, str]], mirror: str, workdir: Path) -> tuple[Path, str]:
    fields = index.get(package)
    if fields is None or "Filename" not in fields:
        raise NclueError(f"{mirror}: package {package!r} is not in the mirror's index; check --packages and --suite")
    url = f"{mirror.rstrip('/')}/{fields['Filename']}"
    data = _read_url(url)
    expected = fields.get("SHA256")
    if expected and sha256_bytes(data) != expected:
        raise NclueError(f"{mirror}: {fields['Filename']} failed its SHA-256 check; retry or use another mirror")
    deb = workdir / Path(fields["Filename"]).name
    deb.write_bytes(data)
    return deb, url


def extract_package(deb: Path, package: str, dest: Path, url: str | None = None) -> dict:
    """Write every PDF of ``deb`` under ``dest/<package>/`` and return the package record.

    Each file row carries ``url`` = the ``.deb``'s URL + ``#`` + the path inside the
    package (``None`` when the URL is unknown), so a release can cite where bytes came from,
    and the ``licence``, ``licence_rule`` and ``licence_file`` read from the package's own
    copyright files (:mod:`nclue.corpus.licences`).
    """
    files = []
    n_symlinks = 0
    tree = data_tree(deb)  # decompressed once for both readers
    notices = read_files(deb, package_files(package), tree)
    for member in iter_pdfs(deb, tree):
        terms = licence_of(package, member.path, notices, url)
        rel = package_path(package, member.path)
        atomic_write_bytes(dest / rel, member.data)
        n_symlinks += member.via_symlink
        files.append(
            {
                "path": rel,
                "sha256": sha256_bytes(member.data),
                "n_bytes": len(member.data),
                "package": package,
                "url": f"{url}#{member.path}" if url else None,
                "licence": terms.licence,
                "licence_rule": terms.rule,
                "licence_file": terms.licence_file,
            }
        )
    files.sort(key=lambda row: row["path"])
    return {
        "version": RECORD_VERSION,
        "package": package,
        "deb": deb.name,
        "deb_url": url,
        "deb_sha256": sha256_file(deb),
        "n_symlinks": n_symlinks,
        "files": files,
    }


def fetched_files(pdf_dir: str | os.PathLike[str] | None) -> dict[str, dict]:
    """``{path: row}`` of ``PDF_DIR/fetch-manifest.jsonl`` (url, licence ... per PDF); ``{}`` when the
    folder was not fetched by :func:`fetch_recipe` (then a release carries no URL or licence)."""
    if pdf_dir is None or not (Path(pdf_dir) / MANIFEST).is_file():
        return {}
    return {row["path"]: row for _, row in iter_jsonl(Path(pdf_dir) / MANIFEST) if isinstance(row.get("path"), str)}


def fetch_recipe(
    name: str,
    dest: str | os.PathLike[str],
    packages: Sequence[str] | None = None,
    mirror: str | None = None,
    suite: str = DEFAULT_SUITE,
) -> FetchSummary:
    """Fetch recipe ``name`` (or the explicit ``packages``) into ``dest``; see the module docstring.

    ``mirror`` (e.g. ``http://deb.debian.org/debian``) forces downloads from that mirror's
    ``dists/<suite>/main`` index; without it ``apt-get download`` is used.
    """
    if packages:
        wanted = tuple(dict.fromkeys(p.strip() for p in packages if p.strip()))
    elif name in RECIPES:
        wanted = RECIPES[name]
    else:
        raise NclueError(
            f"unknown corpus recipe {name!r}; choose one of {', '.join(sorted(RECIPES))} or pass --packages"
        )
    root = Path(dest)
    fetched, cached, records = [], [], []
    index: dict[str, dict[str, str]] | None = None
    with _locked(root):
        for package in wanted:
            record = _cached_record(root, package)
            if record is None:
                with tempfile.TemporaryDirectory(dir=root / STATE_DIR, prefix="download-") as tmp:
                    if mirror:
                        index = index if index is not None else _mirror_index(mirror, suite)
                        deb, url = _mirror_download(package, index, mirror, Path(tmp))
                    else:
                        deb, url = _apt_download(package, Path(tmp))
                    record = extract_package(deb, package, root, url)
                write_json(_record_path(root, package), record)
                fetched.append(package)
            else:
                cached.append(package)
            records.append(record)
        rows = sorted((row for record in records for row in record["files"]), key=lambda row: row["path"])
        text = "".join(dumps_canonical(row) + "\n" for row in rows)
        manifest = root / MANIFEST
        if not manifest.is_file() or manifest.read_text("utf-8") != text:
            atomic_write_text(manifest, text)
    return FetchSummary(
        recipe=name,
        dest=root,
        packages=wanted,
        n_pdfs=len(rows),
        n_bytes=sum(row["n_bytes"] for row in rows),
        n_symlinks=sum(record.get("n_symlinks", 0) for record in records),
        fetched=fetched,
        cached=cached,
    )
