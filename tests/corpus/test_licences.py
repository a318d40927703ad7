"""Licence per PDF from a package's own files: hand-written DEP-5 and TeX Live cases, and the real packages."""

from __future__ import annotations

import gzip
from pathlib import Path

from nclue.corpus.licences import licence_of, parse_dep5, parse_texlive_licenses

DEP5 = """Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: demo

Files: *
Copyright: 2020 Someone
License: GPL-2+
 This program is free software ...

Files: manual/*.pdf
 extra/*.pdf
Copyright: 2021 Other
License: CC-BY-4.0

Files: debian/*
License: public-domain
"""

TEXLIVE = """Licenses for source package texlive-extra

a0poster: lppl
texmf-dist/doc/latex/a0poster/*
texmf-dist/tex/latex/a0poster/*
abbr: pd
texmf-dist/doc/generic/abbr/*
nolicence:
texmf-dist/doc/latex/nolicence/*
"""


def test_dep5_stanzas_last_match_wins_and_continuation_globs() -> None:
    stanzas = parse_dep5(DEP5)
    assert stanzas == [
        (["*"], "GPL-2+"),
        (["manual/*.pdf", "extra/*.pdf"], "CC-BY-4.0"),
        (["debian/*"], "public-domain"),
    ]
    assert parse_dep5("This is free-form text.\nLicense: GPL-2\n") is None
    files = {"usr/share/doc/demo/copyright": DEP5.encode()}
    assert licence_of("demo", "usr/share/doc/demo/extra/x.pdf", files, "U").licence == "CC-BY-4.0"
    other = licence_of("demo", "usr/share/doc/demo/guide.pdf", files, "U")
    assert (other.licence, other.rule, other.licence_file) == ("GPL-2+", "dep5", "U#usr/share/doc/demo/copyright")


def test_texlive_blocks_map_installed_paths_to_texmf_dist() -> None:
    assert parse_texlive_licenses(TEXLIVE)[:2] == [
        ("texmf-dist/doc/latex/a0poster/*", "lppl"),
        ("texmf-dist/tex/latex/a0poster/*", "lppl"),
    ]
    files = {
        "usr/share/doc/texlive-x-doc/Licenses.gz": gzip.compress(TEXLIVE.encode()),
        "usr/share/doc/texlive-x-doc/copyright": b"Copyright information for the texlive bundle\n",
    }
    got = licence_of("texlive-x-doc", "usr/share/doc/texlive-doc/generic/abbr/abbr.pdf", files, None)
    assert (got.licence, got.rule, got.licence_file) == ("pd", "texlive-licenses", None)
    blank = licence_of("texlive-x-doc", "usr/share/doc/texlive-doc/latex/nolicence/n.pdf", files, None)
    assert blank.licence is None  # an empty licence is no answer, and the free-form file has no License: line
    free = licence_of(
        "r", "usr/share/R/doc/manual/R-FAQ.pdf", {"usr/share/doc/r/copyright": b"x\nLicense: GPL-2\n"}, "U"
    )
    assert (free.licence, free.rule) == ("GPL-2", "copyright-license-field")


def test_every_fetched_debian_pdf_has_a_url_and_a_licence(debian_pdf_dir: Path) -> None:
    from nclue.corpus.fetch import fetched_files

    rows = fetched_files(debian_pdf_dir)
    assert len(rows) > 400
    missing = [p for p, r in rows.items() if not r.get("licence") or not r.get("url") or not r.get("licence_file")]
    assert missing == []
    assert rows["r-doc-pdf/R/doc/manual/R-FAQ.pdf"]["licence"] == "GPL-2"
