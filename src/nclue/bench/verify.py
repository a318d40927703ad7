"""Check a built release: file hashes, independently re-derived labels, and the control invariants.

``SHA256SUMS`` lists ``"<sha256>  <path>"`` for every other file of the release, sorted by
path; :func:`write_sums` writes it and :func:`check_sums` re-checks it. Nothing time- or
machine-dependent is written into a release, so two builds with the same inputs and seed
have identical ``SHA256SUMS``. :func:`check_gate` checks that no document of a source the
extraction gate excluded (``MANIFEST.json`` ``gate``) is in ``corpus.jsonl`` or the qrels.
:func:`verify` re-derives every label
(:mod:`nclue.bench.validate`) and scores the privileged controls with the scorer
(:mod:`nclue.scoring`): ``oracle.surface_and`` (unless the release keeps single-page documents as partials,
``--single-page partial``) and ``oracle.surface_form_count`` must score 100 and
``oracle.single_page_and`` 0 (unless labels are document-level, ``--labels document``) (``docs/construction.md#controls``),
and checks that every verbatim query form contains every condition (:mod:`nclue.bench.forms_qa`).
"""

from __future__ import annotations

from pathlib import Path

from nclue.bench.forms_qa import coverage_problems
from nclue.bench.validate import Validation, validate_release
from nclue.errors import NclueError
from nclue.io import atomic_write_text, sha256_file
from nclue.release import MANIFEST_FILE, Release, read_manifest

SUMS = "SHA256SUMS"
CONTROL_DIR = "controls"


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
    for number, line in enumerate(sums.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
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


def check_gate(root: Path, release: Release) -> list[str]:
    """Problems with the extraction gate recorded in ``MANIFEST.json`` (``docs/construction.md#extraction-gate``).

    The gate must be recorded; every ``corpus.jsonl`` document must come from an included
    source, and no judged document from an excluded one.
    """
    path = root / MANIFEST_FILE
    try:
        manifest = read_manifest(root)
    except NclueError as exc:
        return [str(exc)]
    gate = manifest.get("gate")
    if not isinstance(gate, dict) or not isinstance(gate.get("sources"), list):
        return [f"{path}: no extraction gate recorded; rebuild the release with this nclue (`nclue build`)"]
    included = {row["source"] for row in gate["sources"] if row.get("included")}
    excluded = set(gate.get("excluded", []))
    problems = [
        f"corpus.jsonl: {doc.doc_id} comes from source {doc.source!r}, which the gate excluded"
        for doc in release.corpus
        if doc.source is not None and (doc.source in excluded or doc.source not in included)
    ]
    source_of = {d.doc_id: d.source for d in release.corpus}
    bad = sorted({j.doc_id for j in release.judgments if source_of.get(j.doc_id) in excluded})
    if bad:
        problems.append(f"qrels.jsonl: {len(bad)} judged document(s) from excluded sources (e.g. {bad[0]})")
    return problems


def control_scores(root: Path, release: Release | None = None) -> dict[str, dict[str, float]]:
    """n-Clue@10 and Gold Hit@10 of every run under ``controls/``, scored by :mod:`nclue.scoring`."""
    paths = sorted((root / CONTROL_DIR).glob("*.jsonl")) if (root / CONTROL_DIR).is_dir() else []
    return file_scores(root, paths, release)


def file_scores(root: Path, paths: list[Path], release: Release | None = None) -> dict[str, dict[str, float]]:
    """``{file stem: {"nclue@10", "gold_hit@10"}}`` of JSONL runs against the release at ``root``."""
    from nclue.scoring import Benchmark, load_run_matrix, score_runs, summarise

    if not paths:
        return {}
    bench = Benchmark.from_release(release or Release.open(root, require_qrels=True))
    runs = [load_run_matrix(p, bench, name=p.name.removesuffix(".jsonl")) for p in paths]
    table = summarise(score_runs(bench, runs, k=10), metrics=("n_clue_score", "gold_hit"))
    return {
        name: {"nclue@10": round(float(v["n_clue_score"]), 4), "gold_hit@10": round(float(v["gold_hit"]), 4)}
        for name, v in table.items()
    }


def verify(root: str | Path) -> tuple[list[str], Validation, dict[str, dict[str, float]]]:
    """Re-check hashes, re-derive labels and the control invariants; return (problems, validation, scores)."""
    base = Path(root)
    if not base.is_dir():
        raise NclueError(f"{base}: release directory not found; build one with `nclue build COLLECTION -o {base}`")
    problems = check_sums(base)
    try:
        release = Release.open(base, require_qrels=True)
    except NclueError as exc:
        return problems + [str(exc)], Validation(errors=[str(exc)]), {}
    validation = validate_release(base, release)
    manifest = read_manifest(base, required=False) or {}
    problems += (
        validation.errors + check_gate(base, release) + coverage_problems(release.queries, manifest.get("query_forms"))
    )
    scores = control_scores(base, release)
    surface, single = scores.get("oracle.surface_and"), scores.get("oracle.single_page_and")
    compose = manifest.get("parameters", {}).get("compose", {})
    if compose.get("single_page") == "partial":
        surface = None  # its one-page documents are partials there: 100 is not owed (oracle.surface_form_count is)
    if compose.get("labels") == "document":
        single = None  # a document holding every condition on one page is gold at document level
    if surface is not None and surface["nclue@10"] != 100.0:
        problems.append(f"controls/oracle.surface_and.jsonl scores {surface['nclue@10']}, not 100")
    count = scores.get("oracle.surface_form_count")
    if count is not None and count["nclue@10"] != 100.0:
        problems.append(f"controls/oracle.surface_form_count.jsonl scores {count['nclue@10']}, not 100")
    if single is not None and single["nclue@10"] != 0.0:
        problems.append(f"controls/oracle.single_page_and.jsonl scores {single['nclue@10']}, not 0")
    return problems, validation, scores
