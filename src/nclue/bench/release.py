"""Release I/O: write a benchmark directory, hash it, and verify it (SPEC §5.5, docs/formats.md).

Layout: ``corpus.jsonl``, ``queries.jsonl``, ``qrels.jsonl``, ``qrels/test.tsv`` (BEIR),
``inventory.jsonl``, ``controls/<name>.jsonl``, optional ``judge/`` (frozen LLM answers),
``MANIFEST.json``, ``README.md`` (dataset card) and ``SHA256SUMS`` ("<sha256>  <path>" for
every other file, sorted by path). Nothing time- or machine-dependent is written, so two
builds with the same inputs and seed have identical ``SHA256SUMS``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nclue.bench.controls import nclue_score
from nclue.bench.validate import Validation, validate_release
from nclue.errors import NclueError
from nclue.io import atomic_write_text, iter_jsonl, sha256_file

SUMS = "SHA256SUMS"


def write_beir(path: Path, qrels: list[dict[str, Any]]) -> None:
    """BEIR ``qrels/test.tsv``: header ``query-id\\tcorpus-id\\tscore``, score = grade."""
    lines = ["query-id\tcorpus-id\tscore"] + [f"{r['qid']}\t{r['doc_id']}\t{r['grade']}" for r in qrels]
    atomic_write_text(path, "\n".join(lines) + "\n")


def write_sums(root: Path) -> str:
    """Write ``SHA256SUMS`` over every file except itself; return its text."""
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.name != SUMS and not p.name.startswith("."))
    text = "".join(f"{sha256_file(p)}  {p.relative_to(root).as_posix()}\n" for p in files)
    atomic_write_text(root / SUMS, text)
    return text


def check_sums(root: Path) -> list[str]:
    """Mismatched, missing or unlisted files according to ``SHA256SUMS``."""
    sums = root / SUMS
    if not sums.is_file():
        return [f"{sums}: missing; this is not a release directory (build one with `nclue build`)"]
    problems: list[str] = []
    listed: set[str] = set()
    for number, line in enumerate(sums.read_text(encoding="utf-8").splitlines(), start=1):
        digest, _, rel = line.partition("  ")
        if not rel:
            problems.append(f"{sums}:{number}: malformed line")
            continue
        listed.add(rel)
        path = root / rel
        if not path.is_file():
            problems.append(f"{rel}: listed in SHA256SUMS but missing")
        elif sha256_file(path) != digest:
            problems.append(f"{rel}: SHA-256 mismatch (file changed after the build)")
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.name != SUMS and not p.name.startswith(".")):
        rel = path.relative_to(root).as_posix()
        if rel not in listed:
            problems.append(f"{rel}: not listed in SHA256SUMS")
    return problems


def control_scores(root: Path) -> dict[str, dict[str, float]]:
    """n-Clue@10 and Gold Hit@10 of every run under ``controls/``."""
    labels: dict[str, dict[str, str]] = {}
    for _, row in iter_jsonl(root / "qrels.jsonl"):
        labels.setdefault(row["qid"], {})[row["doc_id"]] = row["label"]
    qids = [row["qid"] for _, row in iter_jsonl(root / "queries.jsonl")]
    scores = {}
    for path in sorted((root / "controls").glob("*.jsonl")):
        run = [row for _, row in iter_jsonl(path)]
        score, hit = nclue_score(run, labels, qids)
        scores[path.stem] = {"nclue@10": round(score, 4), "gold_hit@10": round(hit, 4)}
    return scores


def verify(root: str | Path) -> tuple[list[str], Validation, dict[str, dict[str, float]]]:
    """Re-check hashes, re-derive labels and the control invariants; return (problems, validation, scores)."""
    base = Path(root)
    if not base.is_dir():
        raise NclueError(f"{base}: release directory not found; build one with `nclue build COLLECTION -o {base}`")
    problems = check_sums(base)
    validation = validate_release(base)
    problems += validation.errors
    scores = control_scores(base) if (base / "controls").is_dir() else {}
    if "oracle.surface_and" in scores and scores["oracle.surface_and"]["nclue@10"] != 100.0:
        problems.append(f"controls/oracle.surface_and.jsonl scores {scores['oracle.surface_and']['nclue@10']}, not 100")
    if "oracle.single_page_and" in scores and scores["oracle.single_page_and"]["nclue@10"] != 0.0:
        problems.append(f"controls/oracle.single_page_and.jsonl scores {scores['oracle.single_page_and']['nclue@10']}, not 0")
    return problems, validation, scores
