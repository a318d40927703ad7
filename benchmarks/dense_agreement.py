"""Ranking agreement of two dense indexes of one collection on the development benchmark.

Run: ``.venv/bin/python benchmarks/dense_agreement.py COLLECTION [BENCH] [--fast torch-bf16] [--reference onnx]``

``COLLECTION`` holds two dense indexes of the same model and chunking, told apart by backend
(``dense:VARIANT``, e.g. the default ``torch-bf16`` and the exact fp32 ``onnx``). Every dense
system of the default matrix (``nclue/matrix/default.toml``: ``dense.joint(max)``,
``dense.joint(ptop3)`` on each of its query forms, ``dense.decompose(min|product|hmean|distinct)``)
is run on both, over every query of ``BENCH`` (default ``nclue-demo/bench``). Reported per
system: mean top-10 overlap |top10(fast) ∩ top10(reference)| / 10 (both rankings hold ≥ 10 documents;
the denominator is the larger list when one is shorter) and the n-Clue Score and
Gold Hit of each. This is the "top-10 agreement with exact fp32 on the development benchmark"
that decides the default encoder path (goal ≥ 0.99); its speed is ``benchmarks/encode.py``.
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collection")
    parser.add_argument("bench", nargs="?", default="nclue-demo/bench")
    parser.add_argument("--fast", default="torch-bf16", help="dense:VARIANT of the index under test")
    parser.add_argument("--reference", default="onnx", help="dense:VARIANT of the exact fp32 index")
    args = parser.parse_args()

    from nclue.api import evaluate
    from nclue.matrix.spec import load_matrix
    from nclue.release import Release
    from nclue.systems.registry import Workspace
    from nclue.systems.run import map_documents, run_system

    release = Release.open(args.bench, with_qrels=False)
    workspace = Workspace(args.collection)
    mapping = map_documents(release, workspace)
    runs = [r for r in load_matrix().runs if r.system.startswith("dense.")]
    print(f"load average at the start {os.getloadavg()}", flush=True)
    print(f"\n{len(release.queries)} queries; fast = dense:{args.fast}, reference = dense:{args.reference}\n")
    print("| system | form | top-10 overlap | n-Clue fast | n-Clue reference | Gold Hit fast | Gold Hit reference |")
    print("|---|---|---:|---:|---:|---:|---:|")
    overlaps = []
    for run in runs:
        produced = {}
        for variant in (args.fast, args.reference):
            name = run.system.replace("dense.", f"dense:{variant}.", 1)
            produced[variant], _ = run_system(workspace.system(name), release.queries, run.form, mapping, name)
        fast, ref = produced[args.fast], produced[args.reference]
        values = []
        for query in release.queries:
            a = {d.doc_id for d in fast.rankings[query.qid][:10]}
            b = {d.doc_id for d in ref.rankings[query.qid][:10]}
            values.append(len(a & b) / max(len(a), len(b)) if (a or b) else 1.0)
        agreement = sum(values) / len(values)
        overlaps.append(agreement)
        card = evaluate(args.bench, [fast, ref], ci="none")
        f, r = card.runs[fast.name], card.runs[ref.name]
        print(
            f"| `{run.system}` | {run.form} | {agreement:.4f} | {f.n_clue_score:.1f} | {r.n_clue_score:.1f} | "
            f"{f.gold_hit:.1f} | {r.gold_hit:.1f} |",
            flush=True,
        )
    print(f"\nmean top-10 overlap over the {len(runs)} dense runs: {sum(overlaps) / len(overlaps):.4f}")
    print(f"load average at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
