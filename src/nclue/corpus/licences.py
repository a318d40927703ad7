"""The licence of each PDF of a Debian documentation package, read from the package's own files.

A release names, per document, the licence under which its bytes were distributed and the file
that says so, so that a user can decide whether to rebuild it. Three rules, tried in order
(the first that answers wins; the rule's name is recorded with the answer):

1. ``texlive-licenses`` — TeX Live doc packages ship ``usr/share/doc/<pkg>/Licenses.gz``:
   blocks ``<tex package>: <licence>`` followed by ``texmf-dist/...`` glob lines. A PDF
   installed at ``usr/share/doc/texlive-doc/<rest>`` is the source file
   ``texmf-dist/doc/<rest>``; the block of the first matching glob gives its licence
   (``lppl1.3c``, ``gpl``, ``pd`` ...; an empty licence counts as no answer).
2. ``dep5`` — a machine-readable ``usr/share/doc/<pkg>/copyright`` (``Format:`` header, Debian
   copyright-format 1.0): the *last* ``Files:`` stanza whose glob matches the PDF's path below
   ``usr/share/doc/<pkg>/`` or its installed path, else the ``Files: *`` stanza; its ``License:``
   short name.
3. ``copyright-license-field`` — a free-form ``copyright`` with a ``License:`` line (``r-doc-pdf``:
   ``License: GPL-2``): that line's value, for every PDF of the package.

No answer leaves ``licence`` empty; ``licence_file`` always points at the package's copyright
file (``<deb URL>#usr/share/doc/<pkg>/copyright``), the authority a reader should check.
"""

from __future__ import annotations

import fnmatch
import gzip
import re
from dataclasses import dataclass
from functools import lru_cache

COPYRIGHT = "usr/share/doc/{package}/copyright"
TEXLIVE_LICENSES = "usr/share/doc/{package}/Licenses.gz"
TEXLIVE_DOC = "usr/share/doc/texlive-doc/"
_BLOCK = re.compile(r"^(?P<name>[^\s:][^:]*):\s*(?P<licence>\S*)\s*$")


@dataclass(frozen=True)
class Licence:
    """``licence`` (a short name or ``None``), the ``rule`` that found it, and the file to check."""

    licence: str | None
    rule: str | None
    licence_file: str | None


def package_files(package: str) -> list[str]:
    """The package files :func:`licence_of` reads (paths inside the ``.deb``)."""
    return [COPYRIGHT.format(package=package), TEXLIVE_LICENSES.format(package=package)]


def parse_texlive_licenses(text: str) -> list[tuple[str, str]]:
    """``[(glob, licence)]`` of a TeX Live ``Licenses`` file, in file order."""
    out: list[tuple[str, str]] = []
    licence = ""
    for line in text.splitlines():
        if line.startswith("texmf-dist/"):
            out.append((line.strip(), licence))
            continue
        match = _BLOCK.match(line)
        if match and not line.startswith("Licenses for"):
            licence = match["licence"]
    return out


def parse_dep5(text: str) -> list[tuple[list[str], str]] | None:
    """``[(globs, licence)]`` of each ``Files:`` stanza of a DEP-5 file (the ``License:`` first line is
    the licence expression); ``None`` when not DEP-5."""
    stanzas = [s for s in re.split(r"\n\s*\n", text.strip()) if s.strip()]
    if not stanzas or not re.match(r"(?i)^format:", stanzas[0]):
        return None
    out = []
    for stanza in stanzas[1:]:
        fields: dict[str, list[str]] = {}
        key = None
        for line in stanza.splitlines():
            if line[:1] in (" ", "\t") and key:
                fields[key].append(line.strip())
            elif ":" in line:
                key, _, value = line.partition(":")
                key = key.strip().lower()
                fields[key] = [value.strip()]
        licence = fields.get("license", [""])[0]
        if "files" in fields and licence:
            out.append((" ".join(fields["files"]).split(), licence))
    return out


@lru_cache(maxsize=8)
def _texlive_rules(blob: bytes) -> list[tuple[str, str]]:
    """:func:`parse_texlive_licenses` of a gzipped ``Licenses`` file, parsed once per package
    (a package has hundreds of PDFs; the bytes object's hash is cached, so a repeat is a lookup)."""
    return parse_texlive_licenses(gzip.decompress(blob).decode("utf-8", "replace"))


@lru_cache(maxsize=8)
def _copyright(blob: bytes) -> tuple[str, list[tuple[list[str], str]] | None]:
    """The decoded ``copyright`` file and its :func:`parse_dep5` stanzas, parsed once per package."""
    text = blob.decode("utf-8", "replace")
    return text, parse_dep5(text)


def licence_of(package: str, member_path: str, files: dict[str, bytes], deb_url: str | None) -> Licence:
    """The licence of the PDF at ``member_path`` (installed path) of ``package``; see the module docstring."""
    copyright_path = COPYRIGHT.format(package=package)
    pointer = f"{deb_url}#{copyright_path}" if deb_url and copyright_path in files else None
    licenses = files.get(TEXLIVE_LICENSES.format(package=package))
    if licenses is not None and member_path.startswith(TEXLIVE_DOC):
        source = "texmf-dist/doc/" + member_path[len(TEXLIVE_DOC) :]
        for glob, licence in _texlive_rules(licenses):
            if fnmatch.fnmatchcase(source, glob):
                if licence:
                    return Licence(licence, "texlive-licenses", pointer)
                break
    text, stanzas = _copyright(files.get(copyright_path, b""))
    if stanzas is not None:
        below = member_path.removeprefix(f"usr/share/doc/{package}/")
        chosen = None
        for globs, licence in stanzas:
            if any(fnmatch.fnmatchcase(p, g) for g in globs for p in (below, member_path)):
                chosen = licence
        default = next((lic for globs, lic in stanzas if globs == ["*"]), None)
        if chosen or default:
            return Licence(chosen or default, "dep5", pointer)
    field = re.search(r"(?im)^License:\s*(\S+)", text)
    if field:
        return Licence(field.group(1), "copyright-license-field", pointer)
    return Licence(None, None, pointer)
