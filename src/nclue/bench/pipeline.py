"""``nclue build``: collection → extraction gate → inventory → candidates → judged selection → validated release.

One pure pipeline over a page store. The per-source extraction gate
(:func:`nclue.corpus.info.extraction_gate`, ``docs/construction.md#extraction-gate``) runs
first: the documents of a source below it are left out of construction altogether — no
condition is mined from them, they are in no query, qrel or ``corpus.jsonl`` row, and so
no run over the release can rank them — unless the source is named in
``BuildOptions.allow_ungated``. The gate and every override are recorded in
``MANIFEST.json`` and the dataset card. The judge is ``offline`` (the mined inventory
only), ``embedding`` (offline + the MiniLM semantic gate, :mod:`nclue.bench.gate`) or
``llm`` (offline + item verification through a chat endpoint with a frozen response
cache, :mod:`nclue.bench.llm`). Outputs are deterministic for a given collection, seed and
parameters (see :mod:`nclue.bench.verify`); the release files are written through
:class:`nclue.release.Release`.
"""

from __future__ import annotations

import hashlib
import platform
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from nclue._version import __version__
from nclue.bench.card import render_card
from nclue.bench.compose import Item, generate, select, select_gated
from nclue.bench.construction_params import CONDITIONS, JUDGES, BuildOptions
from nclue.bench.controls import CONTROL_NAMES, build_controls
from nclue.bench.forms_qa import coverage_record
from nclue.bench.inventory import Inventory, mine
from nclue.bench.notices import REBUILD_FILES, write_rebuild_kit
from nclue.bench.validate import validate_release
from nclue.bench.verify import control_scores, write_sums
from nclue.corpus.fetch import fetched_files
from nclue.corpus.info import extraction_gate
from nclue.corpus.store import PageStore, collection_record, require_consistent
from nclue.engine import Engine
from nclue.errors import NclueError
from nclue.io import (
    atomic_write_text,
    dumps_canonical,
    exclusive_lock,
    sha256_bytes,
    writable_dir,
    write_jsonl,
)
from nclue.progress import Progress, quiet
from nclue.query import render_forms
from nclue.release import (
    BEIR_QRELS,
    CORPUS_FILE,
    MANIFEST_FILE,
    PARAPHRASES_FILE,
    QRELS_FILE,
    QUERIES_FILE,
    READING_FILE,
    Release,
    write_manifest,
)
from nclue.types import CorpusDoc, Judgment, Query

JUDGMENTS_FILE = "judgments.jsonl"
RELEASE_FILES = (
    CORPUS_FILE,
    QUERIES_FILE,
    QRELS_FILE,
    "inventory.jsonl",
    READING_FILE,
    JUDGMENTS_FILE,
    MANIFEST_FILE,
    "README.md",
    "SHA256SUMS",
    *REBUILD_FILES,
)


@dataclass
class BuildSummary:
    """What a build produced (printed by the CLI, recorded in MANIFEST.json)."""

    out: Path
    manifest: dict[str, Any]
    problems: list[str]


def _make_gate(
    options: BuildOptions, inventory: Inventory, store: PageStore, out: Path, engine: Engine | None = None
) -> tuple[Any, dict[str, Any]]:
    if options.judge == "offline":
        return None, {}
    if options.judge == "embedding":
        from nclue.bench.gate import EmbeddingGate

        gate = EmbeddingGate(inventory, store, threshold=options.embed_threshold, engine=engine)
        return gate, {"model": "sentence-transformers/all-MiniLM-L6-v2 (bundled)", "threshold": options.embed_threshold}
    if options.judge == "llm":
        from nclue.bench.llm import TEMPLATE, LLMGate
        from nclue.bench.prompts import template
        from nclue.llm.client import LLMConfig

        config = LLMConfig.from_env(options.llm_url, options.llm_model, options.llm_key, options.llm_api)
        asker = options_asker(
            options, config, out, store.root, "llm_cache.jsonl", (TEMPLATE, template(TEMPLATE)), "llm"
        )
        return LLMGate(inventory, store, asker), {"model": config.model or "", "cache": asker.cache.path.name}
    raise NclueError(f"unknown judge {options.judge!r}; choose one of {', '.join(JUDGES)}")


def options_asker(  # noqa: ANN201 - an nclue.llm.cache.Asker
    options: BuildOptions,
    config,  # noqa: ANN001 - an nclue.llm.client.LLMConfig
    out: Path,
    collection: Path | str,
    cache_name: str,
    template: tuple[str, str],
    judge: str,
):
    """The :class:`nclue.llm.cache.Asker` of an LLM judge of ``nclue build`` (``--judge llm|reader``):
    the cache (``--llm-cache``, else ``OUT/judge/<cache_name>``), batch mode when a batch file is
    given, pending prompts to ``OUT/judge/<judge>.requests.jsonl`` by default, imported replies with
    their provenance; ``template`` is the prompt template's name and text."""
    from nclue.llm.cache import Asker, ResponseCache

    batch = options.llm_batch_out is not None or options.llm_batch_in is not None
    return Asker(
        config,
        ResponseCache(options.llm_cache or out / "judge" / cache_name),
        *template,
        mode="batch" if batch else "online",
        batch_out=options.llm_batch_out or out / "judge" / f"{judge}.requests.jsonl",
        batch_in=options.llm_batch_in,
        answered_by=options.llm_answered_by,
        answered_on=options.llm_answered_on,
        resume=f"nclue build {collection} -o {out} --judge {judge} --llm-model {config.model} --llm-batch-in REPLIES.jsonl",
    )


def apply_gate(collection: str | Path, store: PageStore, options: BuildOptions) -> tuple[PageStore, dict[str, Any]]:
    """The page store restricted to the sources that pass the gate (or are allowed), and the gate record.

    The record holds the gate's ``threshold``, ``min_chars`` and per-source rows, each with
    ``included`` and ``reason`` (``passed``, ``allowed by --allow-ungated`` or
    ``below the gate``), plus the sorted ``excluded`` and ``allowed_ungated`` source lists.
    """
    gate = extraction_gate(store, options.gate_threshold, options.gate_min_chars)
    known = {row["source"] for row in gate["sources"]}
    unknown = sorted(set(options.allow_ungated) - known)
    if unknown:
        raise NclueError(
            f"{collection}: --allow-ungated names {', '.join(unknown)}, not a source of this collection "
            f"(sources: {', '.join(sorted(known))})"
        )
    allowed = sorted(set(options.allow_ungated))
    excluded: list[str] = []
    rows = []
    for row in gate["sources"]:
        if row["passed"]:
            reason = "passed"
        elif row["source"] in allowed:
            reason = "allowed by --allow-ungated"
        else:
            reason = "below the gate"
            excluded.append(row["source"])
        rows.append({**row, "included": reason != "below the gate", "reason": reason})
    record = {
        "threshold": gate["threshold"],
        "min_chars": gate["min_chars"],
        "sources": rows,
        "excluded": excluded,
        "allowed_ungated": allowed,
    }
    kept_docs = [r["source"] not in excluded for r in store.docs.select(["source"]).to_pylist()]
    docs = store.docs.filter(kept_docs)
    ok_ids = {r["doc_id"] for r, keep in zip(store.docs.select(["doc_id", "status"]).to_pylist(), kept_docs) if keep}
    kept_pages = [d in ok_ids for d in store.pages.column("doc_id").to_pylist()]
    gated = PageStore(root=store.root, docs=docs, pages=store.pages.filter(kept_pages))
    if gated.n_pages == 0:
        shares = ", ".join(f"{r['source']} {100 * r['usable_share']:.2f}%" for r in rows)
        raise NclueError(
            f"{collection}: no source passes the extraction gate (≥ {options.gate_threshold:.0%} of pages with "
            f"≥ {options.gate_min_chars} non-space characters; {shares}); re-ingest with `--ocr force`, or build "
            "anyway with --allow-ungated SOURCE (recorded in MANIFEST.json)"
        )
    return gated, record


def construction_record(collection: str | Path, options: BuildOptions) -> dict[str, str]:
    """What a release was built from: the page store's fingerprint, the build options and the code.

    ``code_sha256`` hashes the source of the construction (``nclue.bench``, the line rules and the
    text normalisation), so a changed rule marks every release built by the old one as stale
    (``nclue demo`` rebuilds it), even though such a release still verifies against itself.
    """
    from nclue.corpus.store import pages_fingerprint

    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for source in sorted([*(package / "bench").rglob("*.py"), *(package / "bench").rglob("*.txt")]) + [
        package / "corpus" / "lines.py",
        package / "corpus" / "normalize.py",
    ]:
        digest.update(source.relative_to(package).as_posix().encode() + b"\0" + source.read_bytes())
    settings = {k: v for k, v in asdict(options).items() if not k.startswith("llm_") or k in ("llm_model", "llm_api")}
    return {
        "pages_sha256": pages_fingerprint(collection),
        "options_sha256": sha256_bytes(dumps_canonical(json_safe_paths(settings)).encode("utf-8")),
        "code_sha256": digest.hexdigest(),
    }


def json_safe_paths(obj: Any) -> Any:
    """``Path`` values as strings, recursively (options hold optional paths)."""
    if isinstance(obj, dict):
        return {k: json_safe_paths(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [json_safe_paths(v) for v in obj]
    return str(obj) if isinstance(obj, Path) else obj


def _collection_id(store: PageStore) -> str:
    rows = sorted(store.doc_sha256.items())
    return sha256_bytes(dumps_canonical(rows).encode("utf-8"))


def _clear(out: Path) -> None:
    for name in (*RELEASE_FILES, str(BEIR_QRELS), PARAPHRASES_FILE):
        (out / name).unlink(missing_ok=True)
    for path in sorted((out / "controls").glob("*.jsonl")) if (out / "controls").is_dir() else []:
        path.unlink()


def build(
    collection: str | Path,
    out: str | Path,
    options: BuildOptions = BuildOptions(),
    tick: Progress = quiet,
    engine: Engine | None = None,
) -> BuildSummary:
    """Build a benchmark release from ``collection`` into ``out`` (see module docstring).

    With an ``engine`` (:mod:`nclue.engine`), the heavy steps — tokenising every document for
    the inventory, embedding evidence excerpts for the embedding judge — run on its workers; the
    release is byte-identical.
    """
    if options.judge not in JUDGES:
        raise NclueError(f"unknown judge {options.judge!r}; choose one of {', '.join(JUDGES)}")
    if options.judge == "reader":
        raise NclueError(
            "reader-judged releases are built by nclue.reader.build.build_read_benchmark (`nclue build --judge reader`), "
            "which reads the audit's page routes"
        )
    if options.conditions not in CONDITIONS:
        raise NclueError(f"unknown conditions {options.conditions!r}; choose one of {', '.join(CONDITIONS)}")
    require_consistent(collection)
    store = PageStore.open(collection)
    n_docs = len(store.doc_ids)
    if store.n_pages == 0 or n_docs == 0:
        raise NclueError(
            f"{collection}: the collection has no pages; ingest PDFs first with `nclue ingest PDF_DIR {collection}`"
        )
    out_dir = writable_dir(out, "benchmark release")
    with exclusive_lock(out_dir, "benchmark release"):
        return _build(collection, store, out_dir, options, tick, engine)


def _build(
    collection: str | Path,
    store: PageStore,
    out_dir: Path,
    options: BuildOptions,
    tick: Progress,
    engine: Engine | None,
) -> BuildSummary:
    """:func:`build` while holding the output folder's lock."""
    full_docs, full_pages = len(store.doc_ids), int(store.n_pages)
    store, gate_record = apply_gate(collection, store, options)
    n_docs = len(store.doc_ids)

    tick("mine", 0, n_docs)
    conditions_record: dict[str, Any] = {"kind": "lexical"}
    if options.conditions == "sections":
        from nclue.bench.sections import mine_sections

        inventory, conditions_record = mine_sections(
            store, str(collection), options.sections, options.judge, lambda n: tick("mine", n, None)
        )
    else:
        inventory = mine(store, options.mine, lambda n: tick("mine", n, None), engine)
    n_cond = len(inventory.conditions)
    if n_cond < 2:
        raise NclueError(
            f"{collection}: only {n_cond} condition(s) mined from {n_docs} documents / {store.n_pages} pages; "
            "a query needs at least 2 — relax --min-df or --max-df-frac, or add documents"
        )
    tick("compose", 0, 100)
    items = generate(inventory, options.compose, lambda n: tick("compose", n, None))
    if not items:
        raise NclueError(
            f"{collection}: no valid conjunction among {n_cond} conditions over {n_docs} documents "
            "(each needs ≥1 gold, ≥1 subset, ≤ --max-golds golds, no single-page-solvable document); "
            "relax --max-golds or --min-df, or add documents"
        )
    gate, gate_info = (
        _make_gate(options, inventory, store, out_dir, engine) if options.conditions == "lexical" else (None, {})
    )
    tick("select", 0, len(items))
    if gate is not None and hasattr(gate, "prefetch"):
        chosen, drops = select_gated(
            items, options.compose, gate, gate.known, gate.prefetch, lambda n: tick("select", n, None)
        )
    else:
        chosen, drops = select(items, options.compose, gate, lambda n: tick("select", n, None))
    if gate is not None and options.judge == "llm":
        gate.asker.finish()
        gate_info["provenance"] = gate.cache.provenance()
    if not chosen:
        raise NclueError(
            f"{collection}: all {len(items)} candidate conjunctions were dropped ({dict(drops)}); "
            "relax --max-condition-reuse / --max-gold-reuse or use --judge offline"
        )

    return write_release(
        collection,
        store,
        out_dir,
        options,
        inventory,
        chosen,
        Construction(
            gate=gate_record,
            judge_settings=gate_info,
            conditions=conditions_record,
            candidates=len(items),
            drops=dict(drops),
            documents_before_gate=full_docs,
            pages_before_gate=full_pages,
        ),
        tick,
    )


@dataclass
class Construction:
    """How a release's queries were chosen, for its manifest: the gate, the judge, the candidates, the drops.

    ``extra`` adds top-level manifest records (the reading of a reader-judged release);
    ``files`` adds JSON Lines files to the release (name → rows, covered by ``SHA256SUMS``).
    """

    gate: dict[str, Any]
    judge_settings: dict[str, Any]
    conditions: dict[str, Any]
    candidates: int
    drops: dict[str, int]
    documents_before_gate: int
    pages_before_gate: int
    extra: dict[str, Any] = field(default_factory=dict)
    files: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def qid_of(position: int) -> str:
    """The query id of the ``position``-th chosen item of a release (``nclue_0000``, …)."""
    return f"nclue_{position:04d}"


def write_release(
    collection: str | Path,
    store: PageStore,
    out_dir: Path,
    options: BuildOptions,
    inventory: Inventory,
    chosen: list[Item],
    construction: Construction,
    tick: Progress = quiet,
) -> BuildSummary:
    """Write the release of the ``chosen`` items: queries, qrels, corpus, inventory, controls, manifest, card, sums.

    The labels are the items' (derived from ``inventory``); the release is validated from scratch.
    """
    n_docs = len(store.doc_ids)
    _clear(out_dir)
    qids = [qid_of(i) for i in range(len(chosen))]
    document_level = options.compose.labels == "document"
    queries, qrels = _rows(inventory, chosen, qids, document_level)
    fetched = fetched_files(collection_record(collection).get("pdf_dir"))
    release = Release.from_records(queries, qrels, _corpus_rows(store, fetched), root=out_dir)
    release.write(out_dir)
    write_jsonl(out_dir / "inventory.jsonl", _inventory_rows(inventory))
    for name, rows in construction.files.items():
        write_jsonl(out_dir / name, rows)
    tick("controls", 0, len(CONTROL_NAMES))
    runs = build_controls(inventory, store, [(q, it.conditions) for q, it in zip(qids, chosen)], options.compose.seed)
    for name, rows in runs.items():
        write_jsonl(out_dir / "controls" / f"{name}.jsonl", rows)
        tick("controls", 1, None)

    validation = validate_release(out_dir, release, label_unit=options.compose.labels)
    scores = control_scores(out_dir, release)
    manifest = {
        "name": options.name,
        "format_version": 1,
        "nclue_version": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "seed": options.compose.seed,
        "judge": options.judge,
        "judge_settings": construction.judge_settings,
        "conditions": construction.conditions,
        "parameters": {"mine": asdict(options.mine), "compose": asdict(options.compose)},
        "construction": construction_record(collection, options),
        "collection": {
            "documents": n_docs,
            "pages": int(store.n_pages),
            "sha256_of_doc_hashes": _collection_id(store),
            "documents_before_gate": construction.documents_before_gate,
            "pages_before_gate": construction.pages_before_gate,
        },
        "gate": _gate_with_counts(construction.gate, store, queries, qrels),
        "counts": {
            **validation.counts,
            "documents": n_docs,
            "conditions_mined": len(inventory.conditions),
            "inventory_rows": sum(len(p) for p in inventory.pages),
            "candidates": construction.candidates,
        },
        "drops": dict(sorted(construction.drops.items())),
        "controls": scores,
        "query_forms": coverage_record(release.queries),
        "distributions": validation.tables,
        "validation": {"ok": validation.ok, "errors": validation.errors},
        **construction.extra,
    }
    write_manifest(out_dir, manifest)
    card_examples = examples(queries, qrels, options.compose.seed)
    card = render_card(manifest, validation.tables, card_examples)
    if options.conditions == "sections":
        from nclue.bench.sections import card_section

        card = card_section(card, construction.conditions)
    atomic_write_text(out_dir / "README.md", card)
    write_rebuild_kit(out_dir, release.corpus, options.name)
    write_sums(out_dir)
    return BuildSummary(out=out_dir, manifest=manifest, problems=list(validation.errors))


def query_sources(qrels: list[Judgment] | tuple[Judgment, ...], source_of: dict[str, str]) -> dict[str, str]:
    """``qid`` → the source of its gold documents, or ``mixed`` when its golds come from several."""
    golds: dict[str, set[str]] = {}
    for row in qrels:
        if row.label == "gold":
            golds.setdefault(row.qid, set()).add(source_of.get(row.doc_id, "unknown"))
    return {qid: next(iter(s)) if len(s) == 1 else "mixed" for qid, s in golds.items()}


def _gate_with_counts(
    record: dict[str, Any], store: PageStore, queries: list[Query], qrels: list[Judgment]
) -> dict[str, Any]:
    """The gate record plus, per source, the documents in the release and the queries whose golds it holds."""
    source_of = dict(zip(store.docs.column("doc_id").to_pylist(), store.docs.column("source").to_pylist()))
    by_query = query_sources(qrels, source_of)
    counts = {s: sum(1 for q in queries if by_query.get(q.qid) == s) for s in {*by_query.values()}}
    in_release = {s: sum(1 for d in store.doc_ids.tolist() if source_of[d] == s) for s in set(source_of.values())}
    rows = [
        {
            **row,
            "documents_in_release": in_release.get(row["source"], 0) if row["included"] else 0,
            "queries": counts.get(row["source"], 0),
        }
        for row in record["sources"]
    ]
    return {**record, "sources": rows, "mixed_source_queries": counts.get("mixed", 0)}


def _rows(
    inventory: Inventory, chosen: list[Item], qids: list[str], document_level: bool = False
) -> tuple[list[Query], list[Judgment]]:
    """Query and qrel records; document-level labels carry no evidence pages (``inventory.jsonl`` keeps them)."""
    queries, qrels = [], []
    for qid, item in zip(qids, chosen):
        names = [inventory.conditions[c].name for c in item.conditions]
        aliases = {n: tuple(inventory.conditions[c].aliases) for n, c in zip(names, item.conditions)}
        queries.append(Query(qid, tuple(names), render_forms(names), aliases))
        for d in sorted(item.docs, key=lambda d: inventory.doc_ids[d]):
            sets = item.docs[d]
            pages = {n: tuple(s) for n, s in zip(names, sets) if s}
            qrels.append(
                Judgment(qid, inventory.doc_ids[d], len(pages), item.labels[d], None if document_level else pages)  # type: ignore[arg-type]
            )
    return queries, qrels


def _corpus_rows(store: PageStore, fetched: dict[str, dict]) -> list[CorpusDoc]:
    """``corpus.jsonl`` rows; ``url``/``licence`` from the fetch record of the same bytes (path and SHA-256)."""
    rows = []
    for r in sorted(store.docs.to_pylist(), key=lambda r: r["doc_id"]):
        if r["status"] != "ok" or r["doc_id"] not in store.doc_index:
            continue
        origin = fetched.get(r["path"], {})
        if origin.get("sha256") != r["sha256"]:
            origin = {}
        rows.append(
            CorpusDoc(
                r["doc_id"],
                n_pages=int(r["n_pages"]),
                path=r["path"],
                source=r["source"],
                sha256=r["sha256"],
                n_bytes=int(r["n_bytes"]),
                url=origin.get("url"),
                licence=origin.get("licence"),
                licence_file=origin.get("licence_file"),
            )
        )
    return rows


def _inventory_rows(inventory: Inventory) -> list[dict[str, Any]]:
    rows = []
    for cond, pages in zip(inventory.conditions, inventory.pages):
        for d, p in sorted(pages.items(), key=lambda kv: inventory.doc_ids[kv[0]]):
            rows.append(
                {
                    "condition": cond.name,
                    "aliases": list(cond.aliases),
                    "doc_id": inventory.doc_ids[d],
                    "pages": list(p),
                }
            )
    return rows


def examples(queries: list[Query], qrels: list[Judgment], seed: int, k: int = 10) -> list[dict[str, Any]]:
    """``k`` seeded example queries, each with its first gold and its highest-grade subset."""
    by_q: dict[str, list[Judgment]] = {}
    for row in qrels:
        by_q.setdefault(row.qid, []).append(row)
    rng = np.random.default_rng(seed)
    picks = sorted(rng.choice(len(queries), size=min(k, len(queries)), replace=False).tolist())
    out = []
    for i in picks:
        q = queries[i]
        rows = by_q[q.qid]
        gold = next(r for r in rows if r.label == "gold")
        subset = sorted((r for r in rows if r.label == "partial"), key=lambda r: (-r.grade, r.doc_id))[0]
        out.append({"qid": q.qid, "clean_v2": q.forms["clean_v2"], "gold": gold.to_json(), "subset": subset.to_json()})
    return out
