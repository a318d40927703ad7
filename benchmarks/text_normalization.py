"""Benchmark: what page-text normalisation removes, on a PDF folder (``nclue.corpus.normalize``).

For every distinct PDF of the folder, PDFium's raw text layer (``extract_pdf(normalize=False)``,
the string a bare pypdfium2 loop gets) is compared with the normalised text ``nclue ingest``
stores: soft hyphens (U+FFFE, U+00AD), C0 control characters (tab and newline aside) and
carriage returns, counted as characters and as pages that hold at least one, before and
after; plus how many control codes became ligature letters and how many became U+FFFD. The
normalisation time is reported against the extraction time of the same documents.

Usage: .venv/bin/python benchmarks/text_normalization.py [--pdf-dir DIR] [--label NAME]
(default corpus: debian-docs, fetched into $NCLUE_CACHE/debian-docs or ~/.cache/nclue). Run it
on a corpus the rules were not tuned on too, e.g. the debian-docs-shift recipe.
"""

from __future__ import annotations

import argparse
import os
import time
from collections import Counter
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdf-dir", type=Path, default=None, help="PDF folder (default: the debian-docs corpus)")
    parser.add_argument("--label", default=None, help="Name of the corpus in the output")
    args = parser.parse_args()
    from nclue.corpus.fetch import fetch_recipe
    from nclue.corpus.ingest import scan_pdf_dir
    from nclue.corpus.normalize import REPLACEMENT, normalize_document, text_defects
    from nclue.corpus.pdftext import extract_pdf

    pdf_dir = args.pdf_dir
    if pdf_dir is None:
        cache = Path(os.environ.get("NCLUE_CACHE") or Path.home() / ".cache" / "nclue")
        pdf_dir = fetch_recipe("debian-docs", cache / "debian-docs").dest
    seen: set[str] = set()
    files = [f.abspath for f in scan_pdf_dir(pdf_dir) if f.sha256 and not (f.sha256 in seen or seen.add(f.sha256))]
    before, after, pages_before, pages_after = Counter(), Counter(), Counter(), Counter()
    n_pages = replaced = 0
    extract_s = normalize_s = 0.0
    for path in files:
        start = time.perf_counter()
        raw = extract_pdf(path, ocr="off", normalize=False)
        extract_s += time.perf_counter() - start
        if raw.status != "ok":
            continue
        start = time.perf_counter()
        clean = normalize_document(raw.texts)
        normalize_s += time.perf_counter() - start
        n_pages += len(clean)
        for old, new in zip(raw.texts, clean):
            a, b = text_defects(old), text_defects(new)
            before.update(a)
            after.update(b)
            pages_before.update(k for k, v in a.items() if v)
            pages_after.update(k for k, v in b.items() if v)
            replaced += new.count(REPLACEMENT) - old.count(REPLACEMENT)
    label = args.label or pdf_dir.name
    print(f"# Page-text normalisation on {label}: {len(files)} PDFs, {n_pages} pages\n")
    print("| defect | characters before | after | pages before | after |")
    print("|---|---:|---:|---:|---:|")
    for key, name in (
        ("soft_hyphen", "soft hyphens (U+FFFE, U+00AD)"),
        ("control", "C0 controls"),
        ("cr", "carriage returns"),
    ):
        print(f"| {name} | {before[key]:,} | {after[key]:,} | {pages_before[key]:,} | {pages_after[key]:,} |")
    print(
        f"\nGlyph codes replaced by U+FFFD (no letter the evidence supports; a carriage return inside a line "
        f"counts): {replaced:,}; the other {max(before['control'] - replaced, 0):,} C0 codes became ligature letters."
    )
    print(
        f"Normalisation {normalize_s:.2f} s against extraction {extract_s:.2f} s of the same documents "
        f"({100 * normalize_s / max(extract_s, 1e-9):.1f}%)."
    )


if __name__ == "__main__":
    main()
