"""Pre-outcome freeze (R03): hash method, code, inputs, vectors and label-free rankings
before any judgment file may be opened, and verify all of it before scoring.

``freeze`` runs inside :func:`judgment_barrier`, a process audit hook
(:func:`sys.addaudithook`, PEP 578) that makes every ``open``/``os.open`` of a file whose
name matches a judgment pattern (``*judgment*``, ``*qrels*``) raise :class:`PermissionError`
— a real barrier, not a convention. Audit hooks cannot be removed, so the hook is installed
once and is a no-op while no barrier is active.

The freeze directory holds ``vectors.npz``, ``rankings.jsonl``, ``method.json`` and
``manifest.json`` (SHA-256 of the method description, of the label-free code in
:data:`CODE_FILES`, of the task inputs and of every output). :func:`verify_freeze` recomputes
every hash and re-derives every ranking from the frozen vectors; any difference refuses.
"""

from __future__ import annotations

import fnmatch
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from nclue.errors import NclueError
from nclue.io import dumps_canonical, iter_jsonl, sha256_bytes, sha256_file, write_json, write_jsonl
from nclue.models.encoder import Encoder
from nclue.select import encode as encode_mod
from nclue.select.selectors import GATE_FACTOR, SELECTORS, run_selector
from nclue.select.tasks import DOCS_FILE, TASKS_FILE, Task, check_pool_sizes, load_docs, load_tasks

JUDGMENT_PATTERNS: tuple[str, ...] = ("*judgment*", "*qrels*")
VECTORS_FILE = "vectors.npz"
RANKINGS_FILE = "rankings.jsonl"
METHOD_FILE = "method.json"
MANIFEST_FILE = "manifest.json"
DEFAULT_K = 5
# label-free code whose behaviour the rankings depend on, relative to the nclue package
CODE_FILES: tuple[str, ...] = (
    "select/tasks.py",
    "select/objective.py",
    "select/selectors.py",
    "select/encode.py",
    "select/freeze.py",
    "models/encoder.py",
    "models/onnx_encoder.py",
    "models/onnx_export.py",
    "models/st_encoder.py",
)

_lock = threading.Lock()
_active: list[tuple[str, ...]] = []
_installed = False


def _audit(event: str, args: tuple) -> None:
    if event != "open" or not _active:
        return
    target = args[0]
    if isinstance(target, int):
        return
    name = os.path.basename(os.fsdecode(target)).lower()
    for patterns in list(_active):
        if any(fnmatch.fnmatch(name, p) for p in patterns):
            raise PermissionError(
                f"pre-outcome freeze in progress: opening judgment file {os.fsdecode(target)!r} is refused"
            )


@contextmanager
def judgment_barrier(patterns: tuple[str, ...] = JUDGMENT_PATTERNS) -> Iterator[None]:
    """Refuse, for the duration of the block, any open of a file whose lower-cased name
    matches one of ``patterns`` (shell wildcards)."""
    global _installed
    with _lock:
        if not _installed:
            sys.addaudithook(_audit)
            _installed = True
        _active.append(tuple(p.lower() for p in patterns))
    try:
        yield
    finally:
        with _lock:
            _active.remove(tuple(p.lower() for p in patterns))


def code_hashes() -> dict[str, str]:
    """SHA-256 of each existing file of :data:`CODE_FILES`."""
    root = Path(__file__).resolve().parent.parent
    return {rel: sha256_file(root / rel) for rel in CODE_FILES if (root / rel).is_file()}


def method_description(k: int, selectors: list[str], encoder_identity: dict) -> dict:
    """Everything that defines the label-free method, hashed into the manifest."""
    return {
        "k": k,
        "selectors": selectors,
        "gate_factor": GATE_FACTOR,
        "encoder": encoder_identity,
        "facets": "question then each raw requirement; weight 1/(m+1) each",
        "normaliser": "max(0, f.d) / max over the complete task pool; all-zero facet stays 0",
        "objective": "F(S) = [sum_f max_{d in S} ncos(f,d) - sum_pairs max(0,d.e)/C(k,2)] / (m+1)",
        "ties": "smaller ID (all-digit IDs numerically first)",
        "document_text": "title + newline + text",
    }


def compute_rankings(tasks: list[Task], vectors: encode_mod.FrozenVectors, k: int, selectors: list[str]) -> list[dict]:
    """``{"task_id", "method", "ranking"}`` rows for every task and selector, in task order."""
    rows = []
    for task in tasks:
        tv = vectors.task_vectors(task)
        for name in selectors:
            rows.append({"task_id": task.task_id, "method": name, "ranking": run_selector(name, tv, k)})
    return rows


def freeze(
    task_dir: str | Path,
    out_dir: str | Path,
    encoder: Encoder | None = None,
    encoder_kind: str = "onnx",
    k: int = DEFAULT_K,
    selectors: list[str] | None = None,
    on_block: Callable[[int], None] | None = None,
) -> dict:
    """Encode, rank and hash a task set while judgment files cannot be opened; returns the manifest.

    ``on_block(n)`` reports encoding progress (see :func:`nclue.select.encode.encode_task_set`).
    """
    names = list(selectors or SELECTORS)
    unknown = [s for s in names if s not in SELECTORS]
    if unknown:
        raise NclueError(f"unknown selector(s) {unknown}; choose from {', '.join(SELECTORS)}")
    if k < 2:
        raise NclueError(f"k={k}: selection needs k >= 2 (the pair penalty divides by C(k,2))")
    src, out = Path(task_dir), Path(out_dir)
    with judgment_barrier():
        tasks = load_tasks(src)
        docs = load_docs(src, tasks)
        check_pool_sizes(tasks, k)
        enc = encoder if encoder is not None else encode_mod.make_encoder(encoder_kind)
        vectors = encode_mod.encode_task_set(tasks, docs, enc, on_block)
        rankings = compute_rankings(tasks, vectors, k, names)
        method = method_description(k, names, encode_mod.encoder_identity(enc))
        out.mkdir(parents=True, exist_ok=True)
        encode_mod.save_vectors(out / VECTORS_FILE, vectors)
        write_jsonl(out / RANKINGS_FILE, rankings)
        write_json(out / METHOD_FILE, method)
        manifest = {
            "method_sha256": sha256_bytes(dumps_canonical(method).encode("utf-8")),
            "code": code_hashes(),
            "inputs": {name: sha256_file(src / name) for name in (TASKS_FILE, DOCS_FILE)},
            "outputs": {name: sha256_file(out / name) for name in (VECTORS_FILE, RANKINGS_FILE, METHOD_FILE)},
            "tasks": len(tasks),
            "documents": int(vectors.doc_ids.size),
        }
        write_json(out / MANIFEST_FILE, manifest)
    return manifest


def load_rankings(freeze_dir: str | Path) -> dict[tuple[str, str], list[str]]:
    """``(task_id, method) → ranking`` from ``rankings.jsonl``."""
    path = Path(freeze_dir) / RANKINGS_FILE
    return {(row["task_id"], row["method"]): list(row["ranking"]) for _, row in iter_jsonl(path)}


def verify_freeze(task_dir: str | Path, freeze_dir: str | Path) -> tuple[dict, dict]:
    """Check every hash of the manifest and re-derive every ranking; returns (manifest, method).

    Raises :class:`NclueError` listing each changed item — a changed freeze is refused.
    """
    import json

    src, frozen = Path(task_dir), Path(freeze_dir)
    manifest_path = frozen / MANIFEST_FILE
    if not manifest_path.is_file():
        raise NclueError(
            f"{manifest_path}: no freeze found; run `nclue coverage freeze {src} -o {frozen}` first "
            "(judgments are never opened before a freeze exists)"
        )
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    changed: list[str] = []
    for name, digest in manifest["outputs"].items():
        if not (frozen / name).is_file() or sha256_file(frozen / name) != digest:
            changed.append(f"output {name}")
    for name, digest in manifest["inputs"].items():
        if not (src / name).is_file() or sha256_file(src / name) != digest:
            changed.append(f"input {name}")
    current = code_hashes()
    for rel in sorted(set(current) | set(manifest["code"])):
        if current.get(rel) != manifest["code"].get(rel):
            changed.append(f"code {rel}")
    method = json.loads((frozen / METHOD_FILE).read_text(encoding="utf-8")) if (frozen / METHOD_FILE).is_file() else {}
    if sha256_bytes(dumps_canonical(method).encode("utf-8")) != manifest["method_sha256"]:
        changed.append("method description")
    if changed:
        raise NclueError(
            f"{frozen}: the freeze has changed ({'; '.join(changed)}); refusing to score. "
            "Restore the frozen files, or re-freeze — outcomes seen since then make a new freeze post hoc"
        )
    tasks = load_tasks(src)
    rankings = load_rankings(frozen)
    recomputed = compute_rankings(
        tasks, encode_mod.load_vectors(frozen / VECTORS_FILE), method["k"], method["selectors"]
    )
    drift = [
        f"{r['task_id']}/{r['method']}" for r in recomputed if rankings.get((r["task_id"], r["method"])) != r["ranking"]
    ]
    if drift or len(rankings) != len(recomputed):
        raise NclueError(
            f"{frozen / RANKINGS_FILE}: rankings do not re-derive from the frozen vectors "
            f"({', '.join(drift[:5]) or 'row count differs'}); refusing to score"
        )
    return manifest, method
