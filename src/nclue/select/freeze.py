"""Pre-outcome freeze (``docs/coverage.md#freeze``): hash method, code, inputs, vectors, evidence and label-free rankings
before any judgment file may be opened, and verify all of it before scoring.

``docs/coverage.md#pre-outcome-freeze``. ``freeze`` works behind the barrier of
:mod:`nclue.select.barrier`: by default in a child process that the kernel (Landlock) forbids
to read the judgment and outcome files, and always inside the audit hook that refuses them by
name or inode. An encoder object given by the caller cannot cross into a child, so such a freeze
runs in this process behind the hook alone, and its manifest says so.

Every freeze goes to a new folder ``OUT/<UTC time>`` (``YYYYmmddTHHMMSSZ``, a ``-2``… suffix
within one second), written under a hidden name and renamed when complete, so no freeze is ever
overwritten; :func:`resolve_freeze` picks the latest complete one unless told which. A freeze
folder holds ``vectors.npz``, ``evidence.npz`` (when an evidence selector is frozen),
``near_duplicates.json``, ``rankings.jsonl``, ``method.json`` and ``manifest.json`` (SHA-256 of
the method description, of the label-free code in :data:`CODE_FILES`, of the task inputs and of
every output; the adapter's pool rule with the judgments' SHA-256 it recorded; warnings; the
barrier). :func:`verify_freeze` recomputes every hash and re-derives every ranking from the
frozen vectors and evidence; any difference refuses.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from nclue.errors import NclueError
from nclue.evidence.model import Calibration
from nclue.evidence.signals import EvidenceSource
from nclue.index.duplicates import SHINGLE, DuplicatePairs, open_duplicates, text_duplicates
from nclue.io import (
    dumps_canonical,
    iter_jsonl,
    read_json_object,
    sha256_bytes,
    sha256_file,
    write_json,
    write_jsonl,
)
from nclue.models.encoder import Encoder
from nclue.progress import Advance
from nclue.release import BEIR_QRELS, QRELS_FILE, QUERIES_FILE
from nclue.select import encode as encode_mod
from nclue.select.barrier import barrier_kind, judgment_barrier, landlock_abi, pattern_files, run_sealed
from nclue.select.coverage_evidence import EvidenceModel, docs_source
from nclue.select.diversify import EVIDENCE_SELECTORS, EXACT_MAX_SUBSETS, LAMBDA
from nclue.select.selection_defaults import BARRIER_PATTERNS, SelectOptions
from nclue.select.selectors import GATE_FACTOR, SELECTORS, check_selectors, run_selector
from nclue.select.tasks import DOCS_FILE, JUDGMENTS_FILE, TASKS_FILE, Task, check_pool_sizes, load_docs, load_tasks

ADAPTER_FILE = "adapter.json"
VECTORS_FILE = "vectors.npz"
EVIDENCE_FILE = "evidence.npz"
RANKINGS_FILE = "rankings.jsonl"
GROUPS_FILE = "near_duplicates.json"
METHOD_FILE = "method.json"
MANIFEST_FILE = "manifest.json"
REFREEZE = "the freeze is damaged: restore its folder from a backup or re-run `nclue coverage freeze`"
DEFAULT_K = 5
NEAR_DUPLICATES = SelectOptions.near_duplicates
# label-free code whose behaviour the rankings and the frozen evidence depend on, relative to the nclue package
CODE_FILES: tuple[str, ...] = (
    "select/tasks.py",
    "select/inputs.py",
    "select/objective.py",
    "select/oracle.py",
    "select/selectors.py",
    "select/diversify.py",
    "select/coverage_evidence.py",
    "select/encode.py",
    "select/freeze.py",
    "select/redundancy.py",
    "index/duplicates.py",
    "models/encoder.py",
    "models/onnx_encoder.py",
    "models/onnx_export.py",
    "models/st_encoder.py",
    "systems/lexical.py",
    "systems/dense.py",
    "systems/operations.py",
    "index/lexical.py",
    "index/dense.py",
)


def code_hashes() -> dict[str, str]:
    """SHA-256 of each existing file of :data:`CODE_FILES`."""
    root = Path(__file__).resolve().parent.parent
    return {rel: sha256_file(root / rel) for rel in CODE_FILES if (root / rel).is_file()}


SCORING_CODE: tuple[str, ...] = (
    "select/evaluate.py",
    "select/metrics.py",
    "select/oracle.py",
    "select/results.py",
    "select/tasks.py",
)
"""The modules that turn a freeze and judgments into scores (hashed into the manifest and every ledger row)."""


def scoring_code_sha256() -> str:
    """SHA-256 over ``(name, SHA-256)`` of the scoring modules (:data:`SCORING_CODE`)."""
    root = Path(__file__).resolve().parent.parent
    return sha256_bytes("\n".join(f"{n}\t{sha256_file(root / n)}" for n in SCORING_CODE).encode())


def judgments_fingerprint(path: Path, adapter: dict) -> dict | None:
    """The judgments file's fingerprint, taken without opening it: its SHA-256 as ``nclue coverage
    adapt`` recorded it in ``adapter.json`` (when it wrote the task set), and its size and
    modification time (``os.stat``); ``None`` when there is no judgments file."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return {"sha256": adapter.get("judgments_sha256"), "bytes": info.st_size, "mtime_ns": info.st_mtime_ns}


def judgments_as_frozen(manifest: dict, judgments: str | Path, sha256: str | None = None) -> bool | None:
    """Whether ``judgments`` (whose SHA-256 the caller may pass) is the file the freeze
    fingerprinted (SHA-256 when recorded, else size and modification time); ``None`` when the
    freeze recorded none."""
    frozen = manifest.get("judgments")
    if not frozen:
        return None
    if frozen.get("sha256"):
        return (sha256 or sha256_file(judgments)) == frozen["sha256"]
    info = os.stat(judgments)
    return info.st_size == frozen["bytes"] and info.st_mtime_ns == frozen["mtime_ns"]


def method_description(
    k: int,
    selectors: list[str],
    encoder_identity: dict,
    calibration: Calibration | None = None,
    crossfit: bool = False,
    evidence_source: dict | None = None,
    near_duplicates: float = NEAR_DUPLICATES,
) -> dict:
    """Everything that defines the label-free method, hashed into the manifest."""
    method = {
        "near_duplicates": {
            "resemblance": near_duplicates,
            "shingle": SHINGLE,
            "rule": "walking a ranking, a near-copy of a document above it is excluded and the selector re-run "
            "unless it covers (P >= 0.5) a requirement nothing above it covers",
        },
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
    if calibration is not None:
        method["evidence"] = {
            "signals": list(calibration.signals),
            "calibration_sha256": calibration.sha256,
            "calibration_fitted_on": calibration.provenance.get("release"),
            "crossfit": crossfit,
            "source": evidence_source or {},
            "combination": "P(d covers r) = sigmoid(a + c * max_{p in d} (b + sum_s w_s x_s(r, p)))",
            "lambda": LAMBDA,
            "exact_max_subsets": EXACT_MAX_SUBSETS,
        }
    return method


@dataclass(frozen=True)
class FrozenEvidence:
    """Per task: ``P[d, r]`` (pool order × requirements) and the best page of each pair."""

    probs: dict[str, np.ndarray]
    best_page: dict[str, np.ndarray]

    def arrays(self, tasks: list[Task]) -> dict[str, np.ndarray]:
        """Flat arrays for ``evidence.npz`` (task order, pool order, requirement order)."""
        task, doc, req, prob, page = [], [], [], [], []
        for t in tasks:
            p, b = self.probs[t.task_id], self.best_page[t.task_id]
            for i, d in enumerate(t.pool):
                for r in range(t.m):
                    task.append(t.task_id)
                    doc.append(d)
                    req.append(r)
                    prob.append(float(p[i, r]))
                    page.append(int(b[i, r]))
        return {
            "task": np.array(task, dtype=str),
            "doc": np.array(doc, dtype=str),
            "req": np.array(req, dtype=np.int32),
            "prob": np.array(prob, dtype=np.float64),
            "best_page": np.array(page, dtype=np.int32),
        }

    @classmethod
    def load(cls, path: Path, tasks: list[Task]) -> FrozenEvidence:
        """Read ``evidence.npz`` back into per-task matrices (pool order as in ``tasks``)."""
        with np.load(path, allow_pickle=False) as data:
            task, prob, page = data["task"], data["prob"], data["best_page"]
        probs, pages, at = {}, {}, 0
        for t in tasks:
            size = len(t.pool) * t.m
            if at + size > len(task) or not np.all(task[at : at + size] == t.task_id):
                raise NclueError(f"{path}: no evidence for task {t.task_id!r}; re-run `nclue coverage freeze`")
            probs[t.task_id] = prob[at : at + size].reshape(len(t.pool), t.m)
            pages[t.task_id] = page[at : at + size].reshape(len(t.pool), t.m)
            at += size
        return cls(probs, pages)


def task_evidence(tasks: list[Task], model: EvidenceModel, on_task: Advance | None = None) -> FrozenEvidence:
    """Evidence of every task's pool for its requirements."""
    model.prepare([r for t in tasks for r in t.requirements])
    probs, pages = {}, {}
    for task in tasks:
        ev = model.evidence(task.requirements, task.pool)
        probs[task.task_id], pages[task.task_id] = ev.probs, ev.best_page
        if on_task is not None:
            on_task(1)
    return FrozenEvidence(probs, pages)


def compute_rankings(
    tasks: list[Task],
    vectors: encode_mod.FrozenVectors,
    k: int,
    selectors: list[str],
    evidence: FrozenEvidence | None = None,
    groups: dict[str, np.ndarray] | None = None,
) -> list[dict]:
    """``{"task_id", "method", "ranking"}`` rows for every task and selector, in task order
    (``groups``: each task's near-duplicate groups in pool order; none = every document alone)."""
    rows = []
    for task in tasks:
        tv = vectors.task_vectors(task, None if evidence is None else evidence.probs[task.task_id])
        if groups is not None:
            tv = dataclasses.replace(tv, groups=groups[task.task_id])
        for name in selectors:
            rows.append({"task_id": task.task_id, "method": name, "ranking": run_selector(name, tv, k)})
    return rows


def task_groups(tasks: list[Task], pairs: DuplicatePairs, threshold: float) -> dict[str, np.ndarray]:
    """Each task's near-duplicate groups (pool order) from the stored resemblance pairs."""
    return {t.task_id: pairs.groups(t.pool, threshold) for t in tasks}


def save_groups(path: Path, tasks: list[Task], groups: dict[str, np.ndarray]) -> None:
    """``near_duplicates.json``: per task, ``doc_id → group`` (the group's first pool document) for
    every document that has a near-copy in its pool; documents alone are left out."""
    out = {}
    for t in tasks:
        g = groups[t.task_id]
        sizes = np.bincount(g, minlength=len(t.pool))
        shared = {t.pool[i]: t.pool[int(g[i])] for i in range(len(t.pool)) if sizes[g[i]] > 1}
        if shared:
            out[t.task_id] = shared
    write_json(path, out)


def load_groups(path: Path, tasks: list[Task]) -> dict[str, np.ndarray]:
    """Read ``near_duplicates.json`` back into per-task group arrays (pool order)."""
    saved = read_json_object(path, REFREEZE) if path.is_file() else {}
    out = {}
    for t in tasks:
        position = {d: i for i, d in enumerate(t.pool)}
        shared = saved.get(t.task_id, {})
        out[t.task_id] = np.array([position[shared.get(d, d)] for d in t.pool], dtype=np.int64)
    return out


def default_selectors(tasks: list[Task]) -> list[str]:
    """Every selector whose inputs the task set has (``retriever`` needs ``pool_scores`` on every task,
    ``typed`` needs ``typed_scores``)."""
    names = list(SELECTORS)
    if any(t.pool_scores is None for t in tasks):
        names.remove("retriever")
    if any(t.typed_scores is None for t in tasks):
        names.remove("typed")
    return names


def refuse_own_release(calibration: Calibration, adapter: dict) -> None:
    """Refuse a calibration fitted on the labels of the release this task set was adapted from
    (same ``queries.jsonl``), unless each requirement gets its held-out fold (``--crossfit``):
    its probabilities would come from a model that saw the labels the freeze is scored on."""
    release = adapter.get("release")
    fitted = calibration.provenance.get("queries_sha256")
    if not release or not fitted or not (Path(release) / QUERIES_FILE).is_file():
        return
    if sha256_file(Path(release) / QUERIES_FILE) == fitted:
        raise NclueError(
            f"the evidence calibration was fitted on the labels of {release}, the release this task set was "
            "adapted from; freeze with --crossfit (each requirement scored by the fold fitted without it), or use "
            "a calibration fitted on another corpus (the default)"
        )


def read_adapter(task_dir: Path) -> dict:
    """``adapter.json`` of a task set written by ``nclue coverage adapt`` (empty when absent)."""
    path = task_dir / ADAPTER_FILE
    if not path.is_file():
        return {}
    return read_json_object(path, "re-run `nclue coverage adapt` to write it again")


def _stamp_dir(root: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    target, n = root / stamp, 1
    while target.exists() or (root / f".{target.name}.partial").exists():
        n += 1
        target = root / f"{stamp}-{n}"
    return target


@dataclass(frozen=True)
class FreezeResult:
    """Where a freeze was written, its manifest, and the warnings raised while reading the inputs."""

    path: Path
    manifest: dict
    warnings: tuple[str, ...] = ()


def freeze(
    task_dir: str | Path,
    out_dir: str | Path,
    encoder: Encoder | None = None,
    encoder_kind: str = "onnx",
    k: int = DEFAULT_K,
    selectors: list[str] | None = None,
    on_block: Advance | None = None,
    collection: str | Path | None = None,
    calibration: Calibration | str | Path | None = None,
    crossfit: bool = False,
    patterns: Sequence[str] = BARRIER_PATTERNS,
    protect: Sequence[str | Path] = (),
    near_duplicates: float = NEAR_DUPLICATES,
    sealed: bool | None = None,
) -> FreezeResult:
    """Encode, compute evidence, rank and hash a task set while judgment files cannot be opened.

    The freeze goes to a new folder under ``out_dir`` (module docstring). ``collection`` is the
    page store the evidence reads (default: the one recorded in ``adapter.json``; none → one
    page per ``docs.jsonl`` document); ``calibration`` a :class:`Calibration` or its file
    (default: the packaged one); ``crossfit`` applies each requirement's held-out fold model;
    ``near_duplicates`` the resemblance at which pool documents are near-copies (the collection's
    stored pairs, or the ``docs.jsonl`` texts' when there is no collection). ``sealed``: run in a
    child process sealed by Landlock (default: whenever the kernel has Landlock and no
    ``encoder`` object is given; ``True`` refuses where it cannot). ``on_block(n)`` reports
    encoding progress (:func:`nclue.select.encode.encode_task_set`).
    """
    if selectors is not None:
        check_selectors(selectors)
    if k < 2:
        raise NclueError(f"k={k}: selection needs k >= 2 (the pair penalty divides by C(k,2))")
    src, root = Path(task_dir), Path(out_dir)
    adapter = read_adapter(src)
    guarded = [src / JUDGMENTS_FILE, *protect]
    scanned = [src, src.parent]
    if adapter.get("release"):
        release = Path(adapter["release"])
        guarded += [release / QRELS_FILE, release / BEIR_QRELS]
        scanned.append(release)
    cal = calibration if isinstance(calibration, Calibration) or calibration is None else Calibration.load(calibration)
    if cal is not None and not crossfit:
        refuse_own_release(cal, adapter)
    coll = collection if collection is not None else adapter.get("collection")
    if coll and (selectors is None or any(n in EVIDENCE_SELECTORS for n in selectors)):
        from nclue.systems.preflight import require_indexes

        require_indexes(coll, ["bm25.joint", "dense.joint"], "the coverage freeze's page evidence")
        open_duplicates(coll)  # the near-copy pairs, checked (built when missing) before the encoder runs
    kernel = landlock_abi() > 0
    if sealed and (not kernel or encoder is not None):
        raise NclueError(
            "a sealed freeze needs Landlock (Linux 5.13 or later) and the encoder by name (--encoder), not an object"
        )
    seal = kernel and encoder is None if sealed is None else sealed
    protected = sorted({str(p) for p in [*guarded, *pattern_files(scanned, patterns)] if Path(p).is_file()})
    kwargs = {
        "src": src,
        "adapter": adapter,
        "root": root,
        "encoder_kind": encoder_kind,
        "k": k,
        "selectors": selectors,
        "collection": collection,
        "calibration": cal,
        "crossfit": crossfit,
        "patterns": tuple(patterns),
        "guarded": guarded,
        "near_duplicates": near_duplicates,
        "barrier": {
            "kind": barrier_kind() if seal else "audit hook only (this process)",
            "patterns": [p.lower() for p in patterns],
            "protected": [str(p) for p in guarded if Path(p).exists()],
            "sealed_files": protected if seal else [],
        },
    }
    if seal:
        root.mkdir(parents=True, exist_ok=True)
        return run_sealed(freeze_behind_barrier, kwargs, protected, root, on_block)
    return freeze_behind_barrier(**kwargs, encoder=encoder, on_block=on_block)


def _require_task_scores(src: Path, tasks: list, names: list[str]) -> None:
    """Refuse the ``typed`` and ``retriever`` selectors on a task set that lacks the scores they read."""
    if "typed" in names and any(t.typed_scores is None for t in tasks):
        raise NclueError(
            f"{src / TASKS_FILE}: selector 'typed' needs 'typed_scores' on every task; "
            "adapt on a collection with a structure index (`nclue index COLL --all`) or leave it out"
        )
    if "retriever" in names and any(t.pool_scores is None for t in tasks):
        raise NclueError(
            f"{src / TASKS_FILE}: selector 'retriever' needs 'pool_scores' on every task; "
            "adapt with `nclue coverage adapt --pool SYSTEM` or leave it out"
        )


def _freeze_evidence(tasks, docs, vectors, enc, coll, cal, crossfit: bool):  # noqa: ANN001, ANN202
    """``(evidence, calibration, source description)`` of every task's pool: page evidence from the
    collection when there is one, else from the task set's own document texts and vectors; the
    packaged calibration when none was given."""
    with tempfile.TemporaryDirectory(prefix="nclue-evidence-") as scratch:
        if coll:
            from nclue.systems.registry import Workspace

            source = EvidenceSource.from_workspace(Workspace(coll))
        else:
            ids = vectors.doc_ids.tolist()
            texts = {d: docs[d].encode_text for d in ids}
            source = docs_source(texts, vectors.doc_vectors, enc.encode, Path(scratch))
        cal = cal if cal is not None else Calibration.load(None, source.describe.get("sources", ()))
        evidence = task_evidence(tasks, EvidenceModel(source, cal, crossfit))
        return evidence, cal, source.describe


def freeze_behind_barrier(
    src: Path,
    adapter: dict,
    root: Path,
    encoder_kind: str,
    k: int,
    selectors: list[str] | None,
    collection: str | Path | None,
    calibration: Calibration | None,
    crossfit: bool,
    patterns: tuple[str, ...],
    guarded: list[str | Path],
    near_duplicates: float,
    barrier: dict,
    encoder: Encoder | None = None,
    on_block: Advance | None = None,
) -> FreezeResult:
    """The freeze itself, inside :func:`~nclue.select.barrier.judgment_barrier` (in a sealed child
    when :func:`freeze` chose one); ``adapter`` is the task set's ``adapter.json``, read by :func:`freeze`."""
    warnings: list[str] = []
    cal = calibration
    with judgment_barrier(patterns, guarded):
        tasks = load_tasks(src, warn=warnings.append)
        names = list(selectors) if selectors is not None else default_selectors(tasks)
        _require_task_scores(src, tasks, names)
        docs = load_docs(src, tasks)
        check_pool_sizes(tasks, k)
        enc = encoder if encoder is not None else encode_mod.make_encoder(encoder_kind)
        vectors = encode_mod.encode_task_set(tasks, docs, enc, on_block)
        evidence, source_info = None, None
        coll = collection if collection is not None else adapter.get("collection")
        if coll:
            pairs = open_duplicates(coll)
        else:
            pairs = text_duplicates({d: docs[d].encode_text for d in sorted(docs)})
        groups = task_groups(tasks, pairs, near_duplicates)
        if any(n in EVIDENCE_SELECTORS for n in names):
            evidence, cal, source_info = _freeze_evidence(tasks, docs, vectors, enc, coll, cal, crossfit)
        rankings = compute_rankings(tasks, vectors, k, names, evidence, groups)
        method = method_description(
            k,
            names,
            encode_mod.encoder_identity(enc),
            cal if evidence is not None else None,
            crossfit,
            source_info,
            near_duplicates,
        )
        root.mkdir(parents=True, exist_ok=True)
        final = _stamp_dir(root)
        out = root / f".{final.name}.partial"
        out.mkdir()
        encode_mod.save_vectors(out / VECTORS_FILE, vectors)
        save_groups(out / GROUPS_FILE, tasks, groups)
        outputs = [VECTORS_FILE, RANKINGS_FILE, METHOD_FILE, GROUPS_FILE]
        if evidence is not None:
            encode_mod.save_arrays(out / EVIDENCE_FILE, evidence.arrays(tasks))
            outputs.append(EVIDENCE_FILE)
        write_jsonl(out / RANKINGS_FILE, rankings)
        write_json(out / METHOD_FILE, method)
        inputs = [TASKS_FILE, DOCS_FILE] + ([ADAPTER_FILE] if (src / ADAPTER_FILE).is_file() else [])
        manifest = {
            "method_sha256": sha256_bytes(dumps_canonical(method).encode("utf-8")),
            "code": code_hashes(),
            "inputs": {name: sha256_file(src / name) for name in inputs},
            "outputs": {name: sha256_file(out / name) for name in sorted(outputs)},
            "tasks": len(tasks),
            "documents": int(vectors.doc_ids.size),
            "pool": adapter.get("pool", {"kind": "given", "rule": f"the pools written in {TASKS_FILE}"}),
            "judgments": judgments_fingerprint(src / JUDGMENTS_FILE, adapter),
            "scoring_code_sha256": scoring_code_sha256(),
            "warnings": warnings,
            "barrier": barrier,
        }
        write_json(out / MANIFEST_FILE, manifest)
        os.replace(out, final)
    return FreezeResult(final, manifest, tuple(warnings))


def resolve_freeze(freeze_dir: str | Path, freeze_id: str | None = None) -> Path:
    """The freeze folder to use: ``freeze_dir`` itself when it holds a manifest, else its
    subfolder ``freeze_id``, else its latest complete freeze (the greatest time-stamped name)."""
    root = Path(freeze_dir)
    if freeze_id is None and (root / MANIFEST_FILE).is_file():
        return root
    found = (
        sorted(
            d.name
            for d in root.iterdir()
            if d.is_dir() and not d.name.startswith(".") and (d / MANIFEST_FILE).is_file()
        )
        if root.is_dir()
        else []
    )
    if freeze_id is not None:
        if freeze_id not in found:
            listed = ", ".join(found[-5:]) or "none"
            raise NclueError(f"{root}: no freeze {freeze_id!r} (freezes here: {listed})")
        return root / freeze_id
    if not found:
        raise NclueError(
            f"{root}: no freeze found; run `nclue coverage freeze TASKS -o {root}` first "
            "(judgments are never opened before a freeze exists)"
        )
    return root / found[-1]


def load_rankings(freeze_dir: str | Path) -> dict[tuple[str, str], list[str]]:
    """``(task_id, method) → ranking`` from ``rankings.jsonl``."""
    path = Path(freeze_dir) / RANKINGS_FILE
    return {(row["task_id"], row["method"]): list(row["ranking"]) for _, row in iter_jsonl(path)}


def load_evidence(frozen: Path, tasks: list[Task]) -> FrozenEvidence | None:
    """The frozen evidence of a freeze folder (``None`` when it froze no evidence selector)."""
    path = frozen / EVIDENCE_FILE
    return FrozenEvidence.load(path, tasks) if path.is_file() else None


def read_method(frozen: Path) -> dict:
    """``method.json`` of a freeze folder, or ``{}`` when it is gone (the manifest's hash then
    refuses it). A damaged file — not a JSON object, or without ``k`` and ``selectors`` — is one
    error line naming it."""
    path = frozen / METHOD_FILE
    if not path.is_file():
        return {}
    method = read_json_object(path, REFREEZE)
    if not isinstance(method.get("k"), int) or not isinstance(method.get("selectors"), list):
        raise NclueError(f"{path}: damaged (no integer 'k' or no 'selectors' list); {REFREEZE}")
    return method


def verify_freeze(task_dir: str | Path, freeze_dir: str | Path, freeze_id: str | None = None) -> tuple[dict, dict]:
    """Check every hash of the manifest and re-derive every ranking; returns (manifest, method).

    ``freeze_dir`` is a freeze folder or a folder of freezes (the latest, or ``freeze_id``, is
    used). Raises :class:`NclueError` listing each changed item — a changed freeze is refused.
    """
    src = Path(task_dir)
    frozen = resolve_freeze(freeze_dir, freeze_id)
    manifest = read_json_object(frozen / MANIFEST_FILE, REFREEZE)
    lacking = [name for name in ("outputs", "inputs", "code") if not isinstance(manifest.get(name), dict)]
    if lacking:
        raise NclueError(f"{frozen / MANIFEST_FILE}: damaged (no {' or '.join(lacking)} table); {REFREEZE}")
    outputs, inputs, code = manifest["outputs"], manifest["inputs"], manifest["code"]
    changed: list[str] = []
    for name, digest in outputs.items():
        if not (frozen / name).is_file() or sha256_file(frozen / name) != digest:
            changed.append(f"output {name}")
    for name, digest in inputs.items():
        if not (src / name).is_file() or sha256_file(src / name) != digest:
            changed.append(f"input {name}")
    current = code_hashes()
    for rel in sorted(set(current) | set(code)):
        if current.get(rel) != code.get(rel):
            changed.append(f"code {rel}")
    method = read_method(frozen)
    if sha256_bytes(dumps_canonical(method).encode("utf-8")) != manifest.get("method_sha256"):
        changed.append("method description")
    if changed:
        raise NclueError(
            f"{frozen}: the freeze has changed ({'; '.join(changed)}); refusing to score. "
            "Restore the frozen files, or re-freeze — outcomes seen since then make a new freeze post hoc"
        )
    tasks = load_tasks(src, warn=lambda _: None)
    rankings = load_rankings(frozen)
    evidence = load_evidence(frozen, tasks)
    groups = load_groups(frozen / GROUPS_FILE, tasks) if (frozen / GROUPS_FILE).is_file() else None
    recomputed = compute_rankings(
        tasks, encode_mod.load_vectors(frozen / VECTORS_FILE), method["k"], method["selectors"], evidence, groups
    )
    drift = [
        f"{r['task_id']}/{r['method']}" for r in recomputed if rankings.get((r["task_id"], r["method"])) != r["ranking"]
    ]
    if drift or len(rankings) != len(recomputed):
        raise NclueError(
            f"{frozen / RANKINGS_FILE}: rankings do not re-derive from the frozen vectors "
            f"({', '.join(drift[:5]) or 'row count differs'}); refusing to score"
        )
    return {**manifest, "freeze": str(frozen)}, method
