"""Corpus recipe: the real Debian corpus, .deb reading, mirror downloads and caching."""

from __future__ import annotations

import io
import json
import lzma
import tarfile
from pathlib import Path

import pytest

import nclue.corpus.fetch as fetch
from nclue.corpus.deb import ar_members, iter_pdfs
from nclue.corpus.fetch import fetch_recipe, package_path, parse_packages_index
from nclue.errors import NclueError
from nclue.io import sha256_bytes, sha256_file

from .conftest import FUNCTAN, R_DATA


def test_debian_docs_corpus_is_complete(debian_pdf_dir: Path) -> None:
    rows = [json.loads(line) for line in (debian_pdf_dir / fetch.MANIFEST).read_text().splitlines()]
    assert len(rows) == 487
    assert {r["package"] for r in rows} == {"texlive-science-doc", "texlive-humanities-doc", "r-doc-pdf"}
    assert [r["path"] for r in rows] == sorted(r["path"] for r in rows)
    on_disk = sorted(p.relative_to(debian_pdf_dir).as_posix() for p in debian_pdf_dir.rglob("*.pdf"))
    assert on_disk == [r["path"] for r in rows]
    for row in rows:
        path = debian_pdf_dir / row["path"]
        assert not path.is_symlink() and path.stat().st_size == row["n_bytes"]
        assert row["path"].split("/")[0] == row["package"]
        assert row["url"].startswith("http") and f"/{row['package']}_" in row["url"] and row["url"].endswith(".pdf")
    assert "texlive-science-doc/texlive-doc/latex/functan/functan.pdf" in on_disk
    links = [r for r in rows if r["path"].startswith("r-doc-pdf/r-doc-pdf/manual/")]
    assert len(links) == 8
    by_path = {r["path"]: r for r in rows}
    for row in links:
        original = by_path[row["path"].replace("r-doc-pdf/r-doc-pdf/manual/", "r-doc-pdf/R/doc/manual/")]
        assert row["sha256"] == original["sha256"]
    assert sha256_file(debian_pdf_dir / R_DATA) == by_path[R_DATA]["sha256"]


def test_second_fetch_does_no_network_work(debian_pdf_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("the network was used")

    monkeypatch.setattr(fetch, "_apt_download", no_network)
    monkeypatch.setattr(fetch, "_read_url", no_network)
    monkeypatch.setattr(fetch.shutil, "which", lambda name: None)
    summary = fetch_recipe("debian-docs", debian_pdf_dir)
    assert summary.fetched == [] and len(summary.cached) == 3
    assert summary.n_pdfs == 487 and summary.n_symlinks == 8


def test_package_paths() -> None:
    assert package_path("p", "usr/share/doc/texlive-doc/a.pdf") == "p/texlive-doc/a.pdf"
    assert package_path("r-doc-pdf", "usr/share/R/doc/manual/R-FAQ.pdf") == "r-doc-pdf/R/doc/manual/R-FAQ.pdf"
    assert package_path("p", "opt/x.pdf") == "p/opt/x.pdf"


def _tar_xz(entries: list[tarfile.TarInfo], payloads: dict[str, bytes]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for info in entries:
            data = payloads.get(info.name)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return lzma.compress(raw.getvalue())


def _ar(members: list[tuple[str, bytes]]) -> bytes:
    out = bytearray(b"!<arch>\n")
    for name, data in members:
        out += f"{name + '/':<16}{0:<12}{0:<6}{0:<6}{'100644':<8}{len(data):<10}`\n".encode("ascii")
        out += data + (b"\n" if len(data) % 2 else b"")
    return bytes(out)


def make_deb(pdf: bytes, other_pdf: bytes) -> bytes:
    """A real-format .deb: two PDFs, a relative symlink to one of them, and a text file."""
    entries, payloads = [], {}
    for name, data in (
        ("./usr/share/doc/fakepkg/guide.pdf", pdf),
        ("./usr/share/fakepkg/manual/ref.pdf", other_pdf),
        ("./usr/share/doc/fakepkg/README", b"not a pdf"),
    ):
        info = tarfile.TarInfo(name)
        info.size = len(data)
        entries.append(info)
        payloads[name] = data
    link = tarfile.TarInfo("./usr/share/doc/fakepkg/ref.pdf")
    link.type = tarfile.SYMTYPE
    link.linkname = "../../fakepkg/manual/ref.pdf"
    entries.append(link)
    control = _tar_xz([], {})
    return _ar([("debian-binary", b"2.0\n"), ("control.tar.xz", control), ("data.tar.xz", _tar_xz(entries, payloads))])


@pytest.fixture()
def fake_deb(tmp_path: Path, debian_pdf_dir: Path) -> Path:
    deb = tmp_path / "fakepkg_1.0_all.deb"
    deb.write_bytes(make_deb((debian_pdf_dir / FUNCTAN).read_bytes(), (debian_pdf_dir / R_DATA).read_bytes()))
    return deb


def test_deb_reader_extracts_only_pdfs_and_dereferences_links(fake_deb: Path, debian_pdf_dir: Path) -> None:
    members = ar_members(fake_deb.read_bytes(), fake_deb)
    assert list(members) == ["debian-binary", "control.tar.xz", "data.tar.xz"]
    pdfs = {m.path: m for m in iter_pdfs(fake_deb)}
    assert sorted(pdfs) == [
        "usr/share/doc/fakepkg/guide.pdf",
        "usr/share/doc/fakepkg/ref.pdf",
        "usr/share/fakepkg/manual/ref.pdf",
    ]
    assert pdfs["usr/share/doc/fakepkg/ref.pdf"].via_symlink
    assert pdfs["usr/share/doc/fakepkg/ref.pdf"].data == (debian_pdf_dir / R_DATA).read_bytes()
    with pytest.raises(NclueError, match="not a Debian package"):
        ar_members(b"PK\x03\x04", "x.deb")


@pytest.mark.parametrize("suffix", ["gz", "bz2", "lzma", "none"])
def test_every_data_tar_compression_gives_the_same_pdfs(
    suffix: str, fake_deb: Path, tmp_path: Path, debian_pdf_dir: Path
) -> None:
    """The tree is decompressed once in memory (``deb._tree_bytes``) for each compression a ``.deb`` may use."""
    import bz2
    import gzip

    raw = lzma.decompress(ar_members(fake_deb.read_bytes(), fake_deb)["data.tar.xz"])
    legacy = lambda data: lzma.compress(data, format=lzma.FORMAT_ALONE)  # noqa: E731 - dpkg still reads .lzma
    packed = {"gz": gzip.compress, "bz2": bz2.compress, "lzma": legacy, "none": bytes}[suffix](raw)
    name = "data.tar" if suffix == "none" else f"data.tar.{suffix}"
    deb = tmp_path / f"other_{suffix}.deb"
    deb.write_bytes(_ar([("debian-binary", b"2.0\n"), ("control.tar.xz", _tar_xz([], {})), (name, packed)]))
    pdfs = {m.path: m.data for m in iter_pdfs(deb)}
    assert pdfs["usr/share/fakepkg/manual/ref.pdf"] == (debian_pdf_dir / R_DATA).read_bytes()
    assert len(pdfs) == 3


@pytest.mark.parametrize("suffix", ["xz", "gz", "bz2"])
def test_a_corrupt_data_tree_is_named_with_the_fix(suffix: str, fake_deb: Path, tmp_path: Path) -> None:
    """A damaged payload is an error naming the package and the fix, whatever the decoder's own
    exception (``zlib.error`` for gzip is not an ``OSError``), never a traceback."""
    import bz2
    import gzip

    raw = lzma.decompress(ar_members(fake_deb.read_bytes(), fake_deb)["data.tar.xz"])
    packed = bytearray({"xz": lzma.compress, "gz": gzip.compress, "bz2": bz2.compress}[suffix](raw))
    packed[40:50] = b"\x00" * 10
    broken = tmp_path / "broken_1.0_all.deb"
    broken.write_bytes(_ar([("debian-binary", b"2.0\n"), (f"data.tar.{suffix}", bytes(packed))]))
    with pytest.raises(NclueError, match=r"broken_1\.0_all\.deb: cannot (decompress|read).*fetch again"):
        list(iter_pdfs(broken))


def _mirror(root: Path, deb: Path, sha: str) -> str:
    pool = root / "pool/main/f/fakepkg"
    pool.mkdir(parents=True)
    (pool / deb.name).write_bytes(deb.read_bytes())
    index = root / "dists/bookworm/main/binary-all"
    index.mkdir(parents=True)
    stanza = (
        f"Package: fakepkg\nVersion: 1.0\nArchitecture: all\nDescription: test\n more text\n"
        f"Filename: pool/main/f/fakepkg/{deb.name}\nSHA256: {sha}\n\nPackage: other\nFilename: pool/x.deb\n"
    )
    (index / "Packages.xz").write_bytes(lzma.compress(stanza.encode()))
    return root.as_uri()


def test_mirror_download_extracts_and_caches(fake_deb: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mirror = _mirror(tmp_path / "mirror", fake_deb, sha256_bytes(fake_deb.read_bytes()))
    dest = tmp_path / "dest"
    summary = fetch_recipe("custom", dest, packages=["fakepkg"], mirror=mirror)
    assert summary.fetched == ["fakepkg"] and summary.n_pdfs == 3 and summary.n_symlinks == 1
    rows = [json.loads(line) for line in summary.manifest.read_text().splitlines()]
    assert [r["path"] for r in rows] == [
        "fakepkg/fakepkg/guide.pdf",
        "fakepkg/fakepkg/manual/ref.pdf",
        "fakepkg/fakepkg/ref.pdf",
    ]
    for row in rows:
        assert sha256_file(dest / row["path"]) == row["sha256"] and row["package"] == "fakepkg"
    assert rows[0]["url"] == f"{mirror}/pool/main/f/fakepkg/{fake_deb.name}#usr/share/doc/fakepkg/guide.pdf"
    assert not list(dest.rglob("README")) and not list(dest.rglob("*.deb"))

    monkeypatch.setattr(fetch, "_read_url", lambda url: (_ for _ in ()).throw(AssertionError(url)))
    again = fetch_recipe("custom", dest, packages=["fakepkg"], mirror=mirror)
    assert again.cached == ["fakepkg"] and again.fetched == []
    (dest / rows[0]["path"]).unlink()
    monkeypatch.undo()
    assert fetch_recipe("custom", dest, packages=["fakepkg"], mirror=mirror).fetched == ["fakepkg"]


def test_mirror_errors_are_clear(fake_deb: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mirror = _mirror(tmp_path / "mirror", fake_deb, "0" * 64)
    with pytest.raises(NclueError, match="SHA-256"):
        fetch_recipe("custom", tmp_path / "d1", packages=["fakepkg"], mirror=mirror)
    with pytest.raises(NclueError, match="not in the mirror"):
        fetch_recipe("custom", tmp_path / "d2", packages=["nopkg"], mirror=mirror)
    with pytest.raises(NclueError, match="no Packages index"):
        fetch_recipe("custom", tmp_path / "d3", packages=["fakepkg"], mirror=mirror, suite="sid")
    with pytest.raises(NclueError, match="unknown corpus recipe"):
        fetch_recipe("nope", tmp_path / "d4")
    monkeypatch.setattr(fetch.shutil, "which", lambda name: None)
    with pytest.raises(NclueError, match="--mirror"):
        fetch_recipe("debian-docs", tmp_path / "d5")


def test_packages_index_parser_keeps_highest_version() -> None:
    text = "Package: a\nVersion: 1.0\nFilename: a1\n\nPackage: a\nVersion: 2.0\nFilename: a2\n"
    assert parse_packages_index(text)["a"]["Filename"] == "a2"
