"""Adjudication of the pairs that two blind readers decided differently: the label's reader and the verifier.

Run (after ``make demo-full`` and the verification readings of ``benchmarks/coverage_verified.py``):

    .venv/bin/python benchmarks/coverage_adjudicate.py nclue-demo/bench-reader nclue-demo/collection \\
        --verified nclue-demo/coverage-verify/verified.jsonl \\
        --verified nclue-demo/coverage-verify-fresh/verified.jsonl \\
        --verified nclue-demo/coverage-verify-census/verified.jsonl \\
        --replies data/debian-docs/coverage-adjudicate/replies.jsonl --work nclue-demo/coverage-adjudicate

A reader-judged benchmark's label for a (condition, document) pair is one blind reader's decision
on two route pages (``judgments.jsonl``). Reader verification (``nclue coverage select
--verify-model``) is a second blind reader's decision on the evidence's two best pages. Where both
read a pair and disagree, neither is the truth: the label's reader may not have been shown the page
that settles it, and the verifier may be wrong. As the audit does with splits (SPEC §7,
expanded-page adjudication), a **third** blind reader is shown the union of the pages the two were
shown, in page order, under the same rubric, prompt and verbatim-quote check, grouped by document
(at most four conditions per prompt; prompt ids start with ``a``). Its decision settles the pair.

The contested pairs are every disagreement in both directions (the verifier accepting a pair the
label rejects, and rejecting one it accepts), so the adjudication favours neither reader. Pairs on
which the two agree, and pairs the verifier never read (below the verification floor), keep their
label: the adjudicated labels are the benchmark's labels with the splits settled.

Writes ``WORK/adjudicated.jsonl`` (one row per contested pair: ``doc_id``, ``condition``, ``label``,
``verified``, ``adjudicated``, ``shown``, ``quoted``), which ``benchmarks/coverage_verdicts.py
--adjudicated`` reads, and prints, per direction, how often the third reader sided with each, and
the pair precision and recall of the verified verdict and of ``P ≥ 0.5`` against both label sets.
The second comparison is not neutral between the two verdicts: only the verifier's disagreements
were adjudicated, so read the evidence's row against the original labels.

``--control SEED:NEG:POS`` reads a control instead, with the same construction: a seeded random
sample of NEG pairs both readers rejected and POS pairs both accepted (``WORK/control.jsonl``). How
often the third reader accepts an agreed negative says how lenient it is, or how many true
positives both earlier readers missed; an agreed positive it rejects says how strict.

Batch flow as in ``benchmarks/coverage_verified.py``: prompts that no reply answers are written to
``WORK/requests.jsonl`` and ``WORK/prompts.jsonl``, and the script stops with exit code 3; replies
are imported through the product's batch path (parser and quote check) into ``WORK/cache.jsonl``.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from nclue.errors import NclueError
from nclue.evidence.model import Calibration
from nclue.evidence.signals import EvidenceSource
from nclue.io import iter_jsonl, read_json, write_jsonl
from nclue.llm.cache import BatchPending
from nclue.reader.reading import read_from_files
from nclue.reader.verified_coverage import VerifyOptions, reading_request
from nclue.select.coverage_evidence import COVER_THRESHOLD, EvidenceModel
from nclue.systems.registry import Workspace

MODEL = "blind-reader"
ADJUDICATED_FILE = "adjudicated.jsonl"
CONTROL_FILE = "control.jsonl"


def merged_verified(files: list[Path]) -> dict[tuple[str, str], bool]:
    """``(doc_id, condition) → verified`` over the pairs some file read (``verified`` true or false with
    ``P`` at or above the floor); a pair read twice with different answers is an error."""
    out: dict[tuple[str, str], bool] = {}
    floor = VerifyOptions().floor
    for path in files:
        for line, row in iter_jsonl(path):
            if row["verified"] is None or row["p"] < floor:
                continue
            key = (row["doc_id"], row["condition"])
            if key in out and out[key] != row["verified"]:
                raise SystemExit(f"{path}:{line}: {key} was read twice with different answers")
            out[key] = bool(row["verified"])
    return out


def control_spec(text: str) -> tuple[int, int, int]:
    """``--control SEED:NEG:POS`` as three integers, or an argparse error that shows the form."""
    parts = text.split(":")
    if len(parts) != 3 or not all(p.strip().isdigit() for p in parts):
        raise argparse.ArgumentTypeError(f"{text!r}: give SEED:NEG:POS, e.g. 31:80:40")
    seed, negatives, positives = (int(p) for p in parts)
    return seed, negatives, positives


def control_sample(
    pairs: list[dict], verified: dict[tuple[str, str], bool], seed: int, negatives: int, positives: int
) -> list[dict]:
    """A seeded simple random sample of ``negatives`` pairs both readers rejected and ``positives`` pairs
    both accepted (judgment order kept)."""
    rng = np.random.default_rng(seed)
    chosen = []
    for decision, size in ((False, negatives), (True, positives)):
        agreed = [
            i
            for i, row in enumerate(pairs)
            if verified.get((row["doc_id"], row["condition"])) is decision and bool(row["established"]) is decision
        ]
        chosen += rng.choice(agreed, size=min(size, len(agreed)), replace=False).tolist()
    return [pairs[i] for i in sorted(chosen)]


def rates(said: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    """``(precision, recall)`` of ``said`` against ``truth``; 0 where undefined."""
    tp = float(np.sum(said & truth))
    return (tp / max(float(np.sum(said)), 1.0), tp / max(float(np.sum(truth)), 1.0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bench", type=Path)
    parser.add_argument("collection", type=Path)
    parser.add_argument("--verified", type=Path, action="append", required=True, metavar="FILE")
    parser.add_argument("--replies", type=Path, required=True, help="replies file ({custom_id, reply} lines)")
    parser.add_argument("--work", type=Path, required=True, help="folder of the frozen cache and pending requests")
    parser.add_argument("--answered-by", default=None, help="default: provenance.json beside the replies")
    parser.add_argument("--answered-on", default=None, help="default: provenance.json beside the replies")
    parser.add_argument(
        "--control",
        type=control_spec,
        default=None,
        metavar="SEED:NEG:POS",
        help="read a control instead of the splits: a seeded random sample of NEG pairs both readers rejected "
        "and POS pairs both accepted, shown the same union of pages",
    )
    args = parser.parse_args()
    missing = [str(p) for p in args.verified if not p.is_file()]
    if missing:
        parser.error(
            f"--verified {missing[0]}: no such file; benchmarks/coverage_verified.py writes WORK/verified.jsonl"
        )
    provenance = args.replies.parent / "provenance.json"
    known = read_json(provenance, "restore it from git") if provenance.is_file() else {}
    options = VerifyOptions()

    workspace = Workspace(args.collection)
    source = EvidenceSource.from_workspace(workspace)
    model = EvidenceModel(source, Calibration.load(None, source.describe["sources"]))
    pairs = [row for _, row in iter_jsonl(args.bench / "judgments.jsonl")]
    verified = merged_verified(args.verified)
    split = [
        row
        for row in pairs
        if (key := (row["doc_id"], row["condition"])) in verified and verified[key] != bool(row["established"])
    ]
    contested = split if args.control is None else control_sample(pairs, verified, *args.control)
    by_doc: dict[str, list[dict]] = defaultdict(list)
    for row in contested:
        by_doc[row["doc_id"]].append(row)
    requests, shown = [], {}
    for doc, rows in sorted(by_doc.items()):
        named = []
        for row in rows:
            pages = sorted(set(row["shown"]) | set(model.ranked_pages(row["condition"], doc, options.pages)))
            shown[(doc, row["condition"])] = pages
            named.append((row["condition"], pages))
        for start in range(0, len(named), options.per_prompt):
            requests.append(
                reading_request(doc, named[start : start + options.per_prompt], workspace.store.page_text, "a")
            )

    try:
        readings = read_from_files(
            requests,
            args.work,
            args.replies,
            MODEL,
            args.answered_by or known.get("answered_by", ""),
            args.answered_on or known.get("date"),
        )
    except BatchPending as pending:
        print(
            f"{len(contested)} contested pairs in {len(requests)} prompts; {pending.pending} wait: "
            f"{pending.path} and {args.work / 'prompts.jsonl'}"
        )
        sys.exit(3)

    unread = [(r["doc_id"], r["condition"]) for r in contested if not readings.read(r["doc_id"], r["condition"])]
    if unread:
        sys.exit(f"{len(unread)} contested pairs have no valid reply (first: {unread[0]}); answer them and run again")
    out, tally = [], Counter()
    for row in contested:
        key = (row["doc_id"], row["condition"])
        quoted = sorted(readings.pages.get(key, ()))
        decision = bool(quoted)
        tally[(verified[key], decision)] += 1
        out.append(
            {
                "doc_id": key[0],
                "condition": key[1],
                "label": bool(row["established"]),
                "verified": verified[key],
                "adjudicated": decision,
                "shown": shown[key],
                "quoted": quoted,
            }
        )
    if args.control is not None:
        write_jsonl(args.work / CONTROL_FILE, out)
        print(
            f"{args.bench}: control of {len(contested)} pairs both readers agreed on, {len(requests)} prompts "
            f"({readings.malformed} malformed replies, {readings.rejected} rejected answers)\n"
        )
        print("| both readers | pairs | third reader: covered | third reader: not covered |")
        print("| :--- | ---: | ---: | ---: |")
        for decision, name in ((False, "not covered"), (True, "covered")):
            print(
                f"| {name} | {sum(tally[(decision, x)] for x in (True, False))} | {tally[(decision, True)]} | {tally[(decision, False)]} |"
            )
        return
    write_jsonl(args.work / ADJUDICATED_FILE, out)

    settled = {(r["doc_id"], r["condition"]): r["adjudicated"] for r in out}
    label = np.array([bool(r["established"]) for r in pairs])
    adjudicated = np.array([settled.get((r["doc_id"], r["condition"]), bool(r["established"])) for r in pairs])
    by_pair = defaultdict(list)
    for i, r in enumerate(pairs):
        by_pair[r["doc_id"]].append(i)
    prob = np.zeros(len(pairs))
    for doc, members in by_pair.items():
        prob[members] = model.evidence([pairs[i]["condition"] for i in members], [doc]).probs[0]
    said_verified = np.array(
        [
            verified.get((r["doc_id"], r["condition"]), False) if prob[i] >= options.floor else False
            for i, r in enumerate(pairs)
        ]
    )
    unknown = [
        r for i, r in enumerate(pairs) if prob[i] >= options.floor and (r["doc_id"], r["condition"]) not in verified
    ]
    said_evidence = prob >= COVER_THRESHOLD

    accepted, rejected = tally[(True, True)] + tally[(True, False)], tally[(False, True)] + tally[(False, False)]
    print(
        f"{args.bench}: {len(pairs)} read pairs, {len(verified)} verified; {len(contested)} contested in "
        f"{len(requests)} prompts ({readings.malformed} malformed replies, {readings.rejected} rejected answers)"
    )
    print()
    print("| the two readers | pairs | third reader: covered | third reader: not covered |")
    print("| :--- | ---: | ---: | ---: |")
    print(f"| verifier covered, label not | {accepted} | {tally[(True, True)]} | {tally[(True, False)]} |")
    print(f"| label covered, verifier not | {rejected} | {tally[(False, True)]} | {tally[(False, False)]} |")
    print()
    if unknown:
        print(
            f"({len(unknown)} eligible pairs were not verified by the given files: the verified rows count them as not covered)\n"
        )
    print("| verdict | against | precision | recall |")
    print("| :--- | :--- | ---: | ---: |")
    for name, said in (("reader-verified", said_verified), ("evidence `P ≥ 0.5`", said_evidence)):
        for against, truth in (("the benchmark's labels", label), ("the adjudicated labels", adjudicated)):
            precision, recall = rates(said, truth)
            print(f"| {name} | {against} | {precision:.3f} | {recall:.3f} |")


if __name__ == "__main__":
    try:
        main()
    except NclueError as exc:  # a damaged input file: its line and the fix, without a traceback
        sys.exit(f"error: {exc}")
