"""Ray against local runs on the same machine: throughput with 1 and 2 workers, and Ray's overhead.

Run: ``.venv/bin/python benchmarks/scale_out.py [--pdfs DIR] [--collection COLL] [--bench BENCH]``
(defaults: the demo's ``nclue-demo/pdfs``, ``nclue-demo/collection``, ``nclue-demo/bench``).

Stages, each timed for ``local`` (1 and 2 spawn processes) and ``ray`` (a local Ray instance with
1 and 2 CPUs, started *before* the clock starts — its one-time start-up is reported apart):

1. **ingest** of the PDF folder (``--ocr off``) into a fresh collection; the stores must be
   byte-identical across engines (checked);
2. **lexical analysis** of every page in shards of 2,000 pages (the sharded index must equal the
   single-process one, checked);
3. **run** of ``bm25.decompose(distinct)`` over every benchmark query (run files identical, checked);
4. **dense encoding** of the first window of ``--dense-pages`` pages with the demo's encoder
   (MiniLM, ``torch-bf16``) through ``nclue.index.encoding`` — shards of 256 chunks, one thread
   per worker on both engines — (vectors bit-identical across engines, checked).

Reported: seconds, pages (or queries) per second, the ratio ``ray / local`` for the same number
of workers (the overhead; goal ≤ 1.15), and per-page costs projected to ten million pages on a
cluster of ``--nodes`` nodes of ``--cores`` cores (default 64 × 16), assuming the measured
two-worker rate scales linearly with cores: no shared-storage or network limit is modelled.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

DEMO = Path(__file__).resolve().parents[1] / "nclue-demo"


def timed(fn):  # noqa: ANN001, ANN201 - any callable
    started = time.perf_counter()
    out = fn()
    return time.perf_counter() - started, out


def ingest_stage(pdfs: Path, work: Path, engines: dict) -> dict:
    from nclue.corpus.ingest import ingest

    out, stores = {}, {}
    for label, (name, workers) in engines.items():
        coll = work / f"ingest-{label}"
        seconds, summary = timed(lambda: ingest(pdfs, coll, workers=workers, ocr="off", engine=name))  # noqa: B023
        stores[label] = (coll / "pages.parquet").read_bytes()
        out[label] = {"seconds": seconds, "pages": summary.n_pages, "per_s": summary.n_pages / seconds}
    assert len(set(stores.values())) == 1, "ingest stores differ between engines"
    return out


def lexical_stage(collection: Path, engines: dict) -> dict:
    from nclue.corpus.store import PageStore
    from nclue.engine import make_engine
    from nclue.index.lexical import Analyzer, analyse_sharded

    store = PageStore.open(collection)
    texts = store.texts
    reference = Analyzer().corpus(texts)
    out = {}
    for label, (name, workers) in engines.items():
        engine = make_engine(name, workers)
        try:
            seconds, result = timed(lambda: analyse_sharded(texts, engine, 2000))  # noqa: B023
        finally:
            engine.close()
        assert np.array_equal(result[0], reference[0]) and result[2] == reference[2], "sharded analysis differs"
        out[label] = {"seconds": seconds, "pages": len(texts), "per_s": len(texts) / seconds}
    return out


def run_stage(bench: Path, collection: Path, work: Path, engines: dict) -> dict:
    from nclue.engine import make_engine
    from nclue.runfile import run_path
    from nclue.systems.run import run_systems

    out, files = {}, {}
    for label, (name, workers) in engines.items():
        engine = make_engine(name, workers) if (name == "ray" or workers > 1) else None
        target = work / f"runs-{label}"
        try:
            seconds, report = timed(
                lambda: run_systems(bench, collection, ["bm25.decompose(distinct)"], out_dir=target, engine=engine)  # noqa: B023
            )
        finally:
            if engine is not None:
                engine.close()
        files[label] = run_path(target, "bm25.decompose(distinct)").read_bytes()
        n = len(next(iter(report.runs.values())).rankings)
        out[label] = {"seconds": seconds, "queries": n, "per_s": n / seconds}
    assert len(set(files.values())) == 1, "run files differ between engines"
    return out


def dense_stage(collection: Path, engines: dict, pages: int) -> dict:
    from nclue.corpus.store import PageStore
    from nclue.engine import make_engine
    from nclue.index.encoding import _map
    from nclue.index.options import DEFAULT_OVERLAP
    from nclue.models.chunking import chunk_pages
    from nclue.models.encoder import DEFAULT_BACKEND, DEFAULT_BATCH_SIZE, load_tokenizer, resolve_model_path

    texts = PageStore.open(collection).texts[:pages]
    model = resolve_model_path(None)
    chunks = chunk_pages(texts, load_tokenizer(model), 254, DEFAULT_OVERLAP, max_chunks=1)
    jobs = [(i, chunks.texts(texts, slice(i, min(i + 256, len(chunks))))) for i in range(0, len(chunks), 256)]
    out, vectors = {}, {}
    for label, (name, workers) in engines.items():
        engine = make_engine(name, workers)
        parts: dict[int, np.ndarray] = {}
        try:
            args = (str(model), DEFAULT_BACKEND, DEFAULT_BATCH_SIZE)

            def keep(shard: int, _n: int, result, parts=parts) -> None:  # noqa: ANN001 - ShardResult
                parts[shard] = result[0]

            seconds, _ = timed(lambda: _map(engine, jobs, args, 1, True, None, keep))  # noqa: B023
        finally:
            engine.close()
        vectors[label] = np.concatenate([parts[i] for i in sorted(parts)])
        out[label] = {"seconds": seconds, "pages": len(texts), "per_s": len(texts) / seconds}
    first = next(iter(vectors.values()))
    assert all(np.array_equal(first, v) for v in vectors.values()), "dense vectors differ between engines"
    return out


def projection(results: dict, nodes: int, cores: int, pages: float = 1e7) -> list[str]:
    """Ten million pages on ``nodes`` × ``cores``: the measured two-worker Ray rate per node, scaled by nodes."""
    lines = []
    for stage in ("ingest", "lexical", "dense"):
        if stage not in results:
            continue
        per_node = results[stage]["ray-2"]["per_s"] * cores / 2
        hours = pages / (per_node * nodes) / 3600
        core_hours = pages / results[stage]["ray-1"]["per_s"] / 3600
        lines.append(f"  {stage}: {core_hours:,.1f} core-hours; {hours * 60:,.1f} min on the cluster")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdfs", type=Path, default=DEMO / "pdfs")
    parser.add_argument("--collection", type=Path, default=DEMO / "collection")
    parser.add_argument("--bench", type=Path, default=DEMO / "bench")
    parser.add_argument("--stages", default="ingest,lexical,run,dense")
    parser.add_argument("--dense-pages", type=int, default=1500, help="pages encoded in the dense stage")
    parser.add_argument("--nodes", type=int, default=64, help="projection: cluster nodes")
    parser.add_argument("--cores", type=int, default=16, help="projection: cores per node")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    import ray

    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    print(
        f"date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    results: dict = {}
    stages = args.stages.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for workers in (1, 2):
            engines = {f"local-{workers}": ("local", workers)}
            started, _ = timed(lambda: ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False))  # noqa: B023
            results.setdefault("ray_startup_s", {})[workers] = started
            engines[f"ray-{workers}"] = ("ray", workers)
            if "ingest" in stages:
                results.setdefault("ingest", {}).update(ingest_stage(args.pdfs, work, engines))
            if "lexical" in stages:
                results.setdefault("lexical", {}).update(lexical_stage(args.collection, engines))
            if "run" in stages:
                results.setdefault("run", {}).update(run_stage(args.bench, args.collection, work, engines))
            if "dense" in stages:
                results.setdefault("dense", {}).update(dense_stage(args.collection, engines, args.dense_pages))
            ray.shutdown()
            for path in work.iterdir():
                shutil.rmtree(path, ignore_errors=True)
    for stage in ("ingest", "lexical", "run", "dense"):
        if stage not in results:
            continue
        rows = results[stage]
        unit = "queries" if stage == "run" else "pages"
        print(f"{stage}:")
        for label, row in rows.items():
            print(f"  {label:8s} {row['seconds']:7.2f} s  {row['per_s']:8.0f} {unit}/s")
        for workers in (1, 2):
            ratio = rows[f"ray-{workers}"]["seconds"] / rows[f"local-{workers}"]["seconds"]
            print(f"  ray/local with {workers} worker(s): {ratio:.2f}x (goal <= 1.15)")
    print(f"ray start-up (excluded above): {results['ray_startup_s']}")
    print(f"ten million pages on {args.nodes} nodes x {args.cores} cores (measured 2-worker rate, linear in nodes):")
    print("\n".join(projection(results, args.nodes, args.cores)))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
