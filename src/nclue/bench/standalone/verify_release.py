#!/usr/bin/env python3
"""Check an nclue benchmark release without nclue: file hashes and every published score.

Standard library only (Python >= 3.9).

    python verify_release.py [RELEASE_DIR]

1. ``SHA256SUMS``: every listed file exists with its hash, and no other file is in the release
   (hidden files and ``__pycache__`` aside).
2. Scores: each run under ``controls/`` (and ``reference/*.jsonl.gz``, when the release ships
   reference rankings, ``nclue bench reference``) is scored here from ``qrels.jsonl`` with the definitions of the n-Clue supplement,
   and compared with every place the release publishes it: ``MANIFEST.json`` (``controls``, four
   decimals), the dataset card ``README.md`` (the controls table, one decimal) and
   ``reference/scores.json``.

Definitions (k = 10; documents sorted by score, descending, equal scores in file order; a query
the run does not list, or lists nothing for, is a miss; the denominator is every query of
``queries.jsonl``):

* Gold Hit@k = 100 × share of queries with a gold document in the top k;
* n-Clue Score@k = 100 × share of queries whose top k holds a gold and no judged non-gold
  (``partial``) document ranks above the first gold.

Exit status 0 when everything matches, 1 otherwise (each mismatch listed).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import sys
from pathlib import Path

K = 10


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def jsonl(path: Path) -> list[dict]:
    rows = []
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except ValueError as exc:
                    raise ValueError(f"{path}:{number}: not JSON ({exc})") from None
    return rows


def check_sums(root: Path) -> list[str]:
    sums = root / "SHA256SUMS"
    if not sums.is_file():
        return [f"{sums}: missing"]
    problems, listed = [], set()
    for number, line in enumerate(sums.read_text(encoding="utf-8").splitlines(), start=1):
        digest, _, name = line.partition("  ")
        if len(digest) != 64 or not name:
            problems.append(f"SHA256SUMS:{number}: not '<sha256>  <path>'")
            continue
        listed.add(name)
        path = root / name
        if not path.is_file():
            problems.append(f"{name}: listed in SHA256SUMS but missing")
        elif sha256_file(path) != digest:
            problems.append(f"{name}: SHA-256 mismatch (the file changed after the release was built)")
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        hidden = any(part.startswith(".") or part == "__pycache__" for part in path.relative_to(root).parts)
        if path.is_file() and not hidden and rel != "SHA256SUMS" and rel not in listed:
            problems.append(f"{rel}: in the release but not in SHA256SUMS")
    return problems


def judgments(root: Path) -> tuple[list[str], dict[str, set[str]], dict[str, set[str]]]:
    qids = [row["qid"] for row in jsonl(root / "queries.jsonl")]
    gold: dict[str, set[str]] = {q: set() for q in qids}
    partial: dict[str, set[str]] = {q: set() for q in qids}
    for row in jsonl(root / "qrels.jsonl"):
        if row.get("qid") not in gold or int(row.get("grade", 0)) < 1:
            continue
        (gold if row.get("label") == "gold" else partial)[row["qid"]].add(row["doc_id"])
    return qids, gold, partial


def score_run(path: Path, qids: list[str], gold: dict[str, set[str]], partial: dict[str, set[str]]) -> dict[str, float]:
    """``{"nclue@10", "gold_hit@10"}`` of one JSONL run (module docstring), in points, 4 decimals."""
    rankings = {row["qid"]: row.get("docs", []) for row in jsonl(path)}
    nclue = hit = 0
    for qid in qids:
        docs = rankings.get(qid, [])
        order = sorted(range(len(docs)), key=lambda i: -float(docs[i]["score"]))
        seen_partial = False
        for i in order[:K]:
            doc = docs[i]["doc_id"]
            if doc in gold[qid]:
                hit += 1
                nclue += not seen_partial
                break
            seen_partial = seen_partial or doc in partial[qid]
    n = len(qids) or 1
    return {"nclue@10": round(100.0 * nclue / n, 4), "gold_hit@10": round(100.0 * hit / n, 4)}


def run_name(path: Path) -> str:
    """``controls/NAME.jsonl`` and ``reference/NAME.jsonl.gz`` → ``NAME``."""
    return path.name.removesuffix(".gz").removesuffix(".jsonl")


def card_scores(root: Path) -> dict[str, tuple[float, float]]:
    """The controls table of the dataset card: ``{run: (n-Clue@10, Gold Hit@10)}`` as printed."""
    card = root / "README.md"
    if not card.is_file():
        return {}
    out, inside = {}, False
    for line in card.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            inside = line.startswith("## Controls")
            continue
        match = re.match(r"^\|\s*([^|]+?)\s*\|\s*([-\d.]+)\s*\|\s*([-\d.]+)\s*\|$", line)
        if inside and match:
            out[match[1]] = (float(match[2]), float(match[3]))
    return out


def verify(root: Path) -> tuple[list[str], int]:
    """``(problems, numbers checked)``."""
    problems = check_sums(root)
    qids, gold, partial = judgments(root)
    manifest = json.loads((root / "MANIFEST.json").read_text(encoding="utf-8"))
    published = {name: dict(values) for name, values in manifest.get("controls", {}).items()}
    shown = card_scores(root)
    reference = root / "reference" / "scores.json"
    ref_scores = json.loads(reference.read_text(encoding="utf-8")) if reference.is_file() else {}
    checked = 0
    runs = sorted((root / "controls").glob("*.jsonl")) + sorted((root / "reference").glob("*.jsonl.gz"))
    names = {run_name(path) for path in runs}
    for name in sorted(set(published) | set(shown) | set(ref_scores)):
        if name not in names:
            problems.append(f"{name}: a published score without its run file")
    for path in runs:
        name = run_name(path)
        got = score_run(path, qids, gold, partial)
        for where, values, tolerance in (
            ("MANIFEST.json", published.get(name), 1e-4),
            ("reference/scores.json", ref_scores.get(name), 1e-4),
        ):
            for metric, value in (values or {}).items():
                if metric in got:
                    checked += 1
                    if abs(float(value) - got[metric]) > tolerance:
                        problems.append(f"{name}: {where} says {metric} = {value}, the run scores {got[metric]}")
        if name in shown:
            for metric, value in zip(("nclue@10", "gold_hit@10"), shown[name]):
                checked += 1
                if abs(value - round(got[metric], 1)) > 0.051:
                    problems.append(f"{name}: README.md shows {metric} = {value}, the run scores {got[metric]:.1f}")
    return problems, checked


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Check an nclue release's hashes and recompute every published score (standard library only).",
        epilog="example: python verify_release.py path/to/release",
    )
    parser.add_argument("release", nargs="?", type=Path, default=Path(__file__).resolve().parent)
    args = parser.parse_args(argv)
    if not (args.release / "queries.jsonl").is_file():
        print(f"{args.release}: not an nclue release (no queries.jsonl)")
        return 1
    try:
        problems, checked = verify(args.release)
    except (OSError, ValueError, KeyError) as exc:
        print(f"{args.release}: cannot read the release ({type(exc).__name__}: {exc})")
        return 1
    print(f"{checked} published number(s) recomputed from the runs; {len(problems)} problem(s)")
    for problem in problems:
        print(f"  {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
