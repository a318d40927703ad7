"""Reader-verified coverage evidence against a reader-judged benchmark's labels.

Run (after ``make demo-full``):

    .venv/bin/python benchmarks/coverage_verified.py nclue-demo/bench-reader nclue-demo/collection \
        --replies data/debian-docs/coverage-verify/replies.jsonl --work nclue-demo/coverage-verify
    .venv/bin/python benchmarks/coverage_verified.py nclue-demo/bench-shift-reader nclue-demo/shift-collection \
        --replies data/debian-docs-shift/coverage-verify/replies.jsonl --work nclue-demo/coverage-verify-shift --sample 80

The population is every (condition, document) pair the benchmark's blind readers read
(``judgments.jsonl``); the label is theirs. The evidence is the collection's default calibration
(fitted on the *other* corpus's readings, :func:`nclue.evidence.model.for_sources`), as
``nclue coverage select`` applies it. Verification (:mod:`nclue.reader.verified_coverage`) reads the pairs with
``P ≥ floor``; reading all of them with people or helpers is costly, so a simple random sample of
``--sample`` of them (seeded, declared before reading) is read, and the population's counts are
estimated from it with weight ``N_eligible / n``. Pairs below the floor are never read: verified,
they are not covered. Intervals: percentile bootstrap over the sample (the below-floor part is a
census, not resampled).

Printed: pair precision and recall of ``P ≥ 0.5`` on the whole population (exact) and on the
sample, and of the verified verdict (estimated), and how often a verified covering pair's first
page is a page the benchmark's reader quoted, among the pairs where that reader was shown it.

Where the replies file is missing or lacks replies, the requests still to answer are written to
``WORK/requests.jsonl`` as batch rows and ``WORK/prompts.jsonl`` as ``{custom_id, prompt}`` lines (the
form blind readers were given), and the script stops with exit code 3. Otherwise every reply is
imported through the product's batch path (the same parser and verbatim-quote check as an
endpoint's) into the frozen cache ``WORK/cache.jsonl``.

``--sample all`` reads every eligible pair the ``--exclude`` chain leaves (a census: exact figures).
Each run writes ``WORK/verified.jsonl``, every judged pair's verified verdict (``null`` where the
pair is eligible but another sample reads it); ``benchmarks/coverage_verdicts.py --verified`` merges
such files into whole-task verdicts.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from nclue.errors import NclueError
from nclue.evidence.model import Calibration
from nclue.evidence.signals import EvidenceSource
from nclue.io import iter_jsonl, read_json, write_jsonl
from nclue.llm.cache import BatchPending
from nclue.reader.reading import read_from_files
from nclue.reader.verified_coverage import VerifyOptions, apply_readings, verification_requests
from nclue.select.coverage_evidence import COVER_THRESHOLD, EvidenceModel
from nclue.systems.registry import Workspace

MODEL = "blind-reader"
# Every judged pair: doc_id, condition, p, verified (null where eligible but not read here), first_page;
# benchmarks/coverage_verdicts.py --verified merges these files.
VERIFIED_FILE = "verified.jsonl"


def judged_pairs(bench: Path) -> list[dict]:
    """Every read pair of ``judgments.jsonl``: condition, doc_id, shown pages, quoted pages."""
    return [row for _, row in iter_jsonl(bench / "judgments.jsonl")]


def sample_spec(text: str) -> tuple[int, int]:
    """``SEED:N`` of ``--exclude`` as two integers, or an argparse error that shows the form."""
    seed, _, size = text.partition(":")
    if not (seed.strip().isdigit() and size.strip().isdigit()):
        raise argparse.ArgumentTypeError(f"{text!r}: give the earlier sample as SEED:N, e.g. 23:160")
    return int(seed), int(size)


def sample_size(text: str) -> int | None:
    """``--sample`` as a positive count, or ``None`` for ``all`` (a census of the drawable pairs)."""
    if text.strip().lower() == "all":
        return None
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give a number of pairs, e.g. 160, or 'all' for a census")
    return int(text)


def floor_list(text: str) -> list[float]:
    """``--floors`` as numbers in (0, 1], or an argparse error naming the bad one."""
    out = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        try:
            value = float(part)
        except ValueError:
            value = -1.0
        if not 0 < value <= 1:
            raise argparse.ArgumentTypeError(f"{part!r}: a floor is a probability in (0, 1], e.g. --floors 0.05,0.1")
        out.append(value)
    return out


def rates(tp: float, fp: float, fn: float) -> tuple[float, float]:
    """``(precision, recall)``; 0 where undefined."""
    return (tp / (tp + fp) if tp + fp else 0.0, tp / (tp + fn) if tp + fn else 0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bench", type=Path)
    parser.add_argument("collection", type=Path)
    parser.add_argument("--replies", type=Path, required=True, help="replies file ({custom_id, reply} lines)")
    parser.add_argument("--work", type=Path, required=True, help="folder of the frozen cache and pending requests")
    parser.add_argument(
        "--sample",
        type=sample_size,
        default=160,
        help="pairs to read (default 160), or 'all' for a census of every eligible pair not left out",
    )
    parser.add_argument("--seed", type=int, default=23)
    parser.add_argument(
        "--exclude",
        default=[],
        action="append",
        type=sample_spec,
        metavar="SEED:N",
        help="leave out the pairs of an earlier sample (its seed and size) before drawing, so this sample is fresh; "
        "repeat it for a chain of samples, each drawn after leaving out those before it",
    )
    parser.add_argument(
        "--floors",
        default=[],
        type=floor_list,
        help="comma-separated higher floors also estimated from the same replies (pairs below one count as not covered)",
    )
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--answered-by", default=None, help="default: provenance.json beside the replies")
    parser.add_argument("--answered-on", default=None, help="default: provenance.json beside the replies")
    args = parser.parse_args()
    provenance = args.replies.parent / "provenance.json"
    known = read_json(provenance, "restore it from git") if provenance.is_file() else {}
    answered_by = args.answered_by or known.get("answered_by", "")
    answered_on = args.answered_on or known.get("date")
    options = VerifyOptions()

    workspace = Workspace(args.collection)
    source = EvidenceSource.from_workspace(workspace)
    calibration = Calibration.load(None, source.describe["sources"])
    model = EvidenceModel(source, calibration)
    pairs = judged_pairs(args.bench)
    by_doc: dict[str, list[int]] = defaultdict(list)
    for i, row in enumerate(pairs):
        by_doc[row["doc_id"]].append(i)
    prob = np.zeros(len(pairs))
    for doc, members in by_doc.items():
        ev = model.evidence([pairs[i]["condition"] for i in members], [doc])
        prob[members] = ev.probs[0]
    label = np.array([bool(row["established"]) for row in pairs])
    eligible = np.nonzero(prob >= options.floor)[0]
    drawable = eligible
    for seed, size in args.exclude:
        earlier = np.random.default_rng(seed).choice(drawable, size=min(size, len(drawable)), replace=False)
        drawable = np.setdiff1d(drawable, earlier)
    if args.sample is None:
        sample = drawable
    else:
        rng = np.random.default_rng(args.seed)
        sample = np.sort(rng.choice(drawable, size=min(args.sample, len(drawable)), replace=False))

    sampled_by_doc: dict[str, list[int]] = defaultdict(list)
    for i in sample.tolist():
        sampled_by_doc[pairs[i]["doc_id"]].append(i)
    requests, evidences = [], {}
    for doc, members in sorted(sampled_by_doc.items()):
        ev = model.evidence([pairs[i]["condition"] for i in members], [doc])
        evidences[doc] = (ev, members)
        requests += verification_requests(model, ev, workspace.store.page_text, options)

    try:
        readings = read_from_files(requests, args.work, args.replies, MODEL, answered_by, answered_on)
    except BatchPending as pending:
        print(f"{pending.pending} of {len(requests)} prompts wait: {pending.path} and {args.work / 'prompts.jsonl'}")
        sys.exit(3)

    verified = np.zeros(len(pairs), dtype=bool)
    first_page: dict[int, int] = {}
    for ev, members in evidences.values():
        v = apply_readings(ev, readings)
        for j, i in enumerate(members):
            verified[i] = bool(v.established[0, j])
            if v.established[0, j]:
                first_page[i] = v.evidence.pages[0][j][0]
    read = np.zeros(len(pairs), dtype=bool)
    read[sample] = True
    write_jsonl(
        args.work / VERIFIED_FILE,
        [
            {
                "doc_id": row["doc_id"],
                "condition": row["condition"],
                "p": round(float(prob[i]), 6),
                "verified": bool(verified[i]) if read[i] else (False if prob[i] < options.floor else None),
                "first_page": first_page.get(i),
            }
            for i, row in enumerate(pairs)
        ],
    )
    below = prob < options.floor
    if not len(sample):
        sys.exit(f"no read pair of {args.bench} has P ≥ {options.floor}: nothing to verify")
    weight = len(drawable) / len(sample)
    left_out = np.setdiff1d(eligible, drawable)  # an earlier sample's pairs: counted by their own replies elsewhere

    def estimate(idx: np.ndarray, floor: float = options.floor) -> tuple[float, float]:
        """Precision and recall over the drawable pairs (sample weight ``weight``) and the census below the
        verification floor; a pair under ``floor`` counts as not covered."""
        kept = idx[prob[idx] >= floor]
        dropped = idx[prob[idx] < floor]
        tp = weight * np.sum(verified[kept] & label[kept])
        fp = weight * np.sum(verified[kept] & ~label[kept])
        fn = weight * (np.sum(~verified[kept] & label[kept]) + np.sum(label[dropped])) + np.sum(label[below])
        return rates(tp, fp, fn)

    def interval(floor: float) -> tuple[tuple[float, float], np.ndarray, np.ndarray]:
        if args.sample is None:  # a census: the figures are exact, there is no sampling error to show
            exact = np.array(estimate(sample, floor))
            return tuple(exact), exact, exact
        boot_rng = np.random.default_rng(args.seed + 1)
        draws = np.array(
            [estimate(boot_rng.choice(sample, size=len(sample), replace=True), floor) for _ in range(args.draws)]
        )
        low, high = np.percentile(draws, [2.5, 97.5], axis=0)
        return estimate(sample, floor), low, high

    point, lo, hi = interval(options.floor)
    floors = args.floors

    said = prob >= COVER_THRESHOLD
    whole = rates(np.sum(said & label), np.sum(said & ~label), np.sum(~said & label))
    s = sample
    on_sample_evidence = rates(np.sum(said[s] & label[s]), np.sum(said[s] & ~label[s]), np.sum(~said[s] & label[s]))
    on_sample_verified = rates(
        np.sum(verified[s] & label[s]), np.sum(verified[s] & ~label[s]), np.sum(~verified[s] & label[s])
    )
    checked = [i for i in first_page if first_page[i] in pairs[i]["shown"]]
    agree = sum(first_page[i] in pairs[i]["established"] for i in checked)
    confirmed_seen = sum(bool(label[i]) for i in checked)

    print(f"{args.bench}: {len(pairs)} read pairs, {int(label.sum())} established by the benchmark's readers")
    print(
        f"calibration {calibration.provenance.get('release')} ({calibration.sha256[:12]}); floor {options.floor}: "
        f"{len(eligible)} pairs eligible ({int(label[eligible].sum())} established), {int(below.sum())} below "
        f"({int(label[below].sum())} established); {'census' if args.sample is None else 'sample'} {len(sample)}"
        f"{'' if args.sample is None else f' (seed {args.seed})'}, "
        f"{len(requests)} prompts, {readings.malformed} malformed replies, {readings.rejected} rejected answers, "
        f"{int(sum(1 for i in sample if (pairs[i]['doc_id'], pairs[i]['condition']) in readings.pages))} pairs read"
    )
    print()
    print("| verdict | on | pairs | precision | recall |")
    print("| :--- | :--- | ---: | ---: | ---: |")
    print(f"| evidence `P ≥ 0.5` | every read pair (exact) | {len(pairs)} | {whole[0]:.3f} | {whole[1]:.3f} |")
    print(f"| evidence `P ≥ 0.5` | the sample | {len(s)} | {on_sample_evidence[0]:.3f} | {on_sample_evidence[1]:.3f} |")
    print(f"| reader-verified | the sample | {len(s)} | {on_sample_verified[0]:.3f} | {on_sample_verified[1]:.3f} |")
    population = len(pairs) - len(left_out)
    how = "census" if args.sample is None else "estimated"
    where = (
        f"every read pair ({how})"
        if not len(left_out)
        else f"every read pair but the earlier samples' {len(left_out)} ({how})"
    )
    print(
        f"| reader-verified | {where} | {population} | {point[0]:.3f} [{lo[0]:.3f}, {hi[0]:.3f}] "
        f"| {point[1]:.3f} [{lo[1]:.3f}, {hi[1]:.3f}] |"
    )
    for floor in floors:
        at, low, high = interval(floor)
        print(
            f"| reader-verified, floor {floor} ({int(np.sum(prob >= floor))} of the pairs would be read) | {where} | {population} | {at[0]:.3f} [{low[0]:.3f}, {high[0]:.3f}] "
            f"| {at[1]:.3f} [{low[1]:.3f}, {high[1]:.3f}] |"
        )
    print()
    print(
        f"Verified covering pairs whose first page the benchmark's reader was shown: {len(checked)} of "
        f"{len(first_page)}; that reader quoted it in {agree} ({agree / max(len(checked), 1):.3f})."
    )
    print(
        f"Precision of the verified verdict among those {len(checked)} pairs (the benchmark's reader read the page "
        f"the verifier quoted first): {confirmed_seen / max(len(checked), 1):.3f} ({confirmed_seen}/{len(checked)})."
    )
    changed = {
        "evidence said covered, reader rejected": int(np.sum(said[s] & ~verified[s])),
        "evidence said not covered, reader confirmed": int(np.sum(~said[s] & verified[s])),
    }
    print("On the sample: " + "; ".join(f"{k}: {v}" for k, v in changed.items()) + ".")


if __name__ == "__main__":
    try:
        main()
    except NclueError as exc:  # a damaged input file: its line and the fix, without a traceback
        sys.exit(f"error: {exc}")
