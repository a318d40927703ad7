"""How often what ``nclue coverage`` tells a user is right, read against a task set's labels.

Run: ``.venv/bin/python benchmarks/coverage_verdicts.py TASKS FREEZES [--selector expected]``

``TASKS`` is a task set written by ``nclue coverage adapt`` (its ``adapter.json`` names the
release, whose ``qrels.jsonl`` gives the labelled evidence pages); ``FREEZES`` a freeze of it (the
latest is used). The labels are read here, after the freeze, as in ``nclue coverage evaluate``.
A requirement is *covered* by a document when its judgment lists the requirement (the release's
evidence pages for that condition are then non-empty); the evidence says so when ``P ≥ 0.5``.

1. **Pairs** — every (task, pool document, requirement): precision and recall of ``P ≥ 0.5``.
2. **Page shown first** — where ``P ≥ 0.5`` and the labels agree, how often the best page (the
   first page ``select`` shows) is one of the release's evidence pages for that condition. On a
   reader-judged release, readers saw two pages per (document, condition) (its
   ``judgments.jsonl``), so a best page nobody read is neither right nor wrong: the rate is also
   given among best pages a reader read.
3. **Verdicts** — per task and requirement of the ``--selector`` ranking: *uncovered* said (no
   selected document has ``P ≥ 0.5``) against uncovered by the labels (no selected document
   covers it): precision and recall, and the counts; likewise *not found in the pool*. Since
   retrieved pools nearly always hold a covering document, also: for every (task, requirement)
   the pool **without the documents the labels say cover it** (a label-made diagnostic pool, on
   which the requirement is absent by construction) — how often the verdict is *not found in the
   pool* (no remaining document has ``P ≥ 0.5``). Evidence is per document, so no re-freeze is
   needed.
4. **Near-copies** — per selector, slots held by a near-copy that adds no coverage (the rule of
   ``nclue.select.redundancy``, on the freeze's own groups, or ``--near-duplicates T``'s), and
   tasks selecting two members of one group.

Prints one Markdown table per part (the figures ``docs/coverage.md`` and the closing notes quote).

``--verified FILE`` (repeatable; the ``verified.jsonl`` files of ``benchmarks/coverage_verified.py``,
for the collection's default calibration) measures the reader-verified verdicts instead, as
``nclue coverage select --verify-model`` gives them: a pair a reader read has probability 1 (its
first quoted page shown first) or 0, a pair below the verification floor keeps its evidence
probability, and the ``--selector`` ranking is re-derived from the frozen vectors on those
probabilities. Every pool pair at or above the floor must have been read (a census), or the script
stops naming the pairs left. It also prints the verified verdict's precision and recall over every
pair the release's readers read (exact).

``--adjudicated FILE`` (repeatable; ``adjudicated.jsonl`` of ``benchmarks/coverage_adjudicate.py``)
reads everything against the labels with the splits settled: a pair the label's reader and the
verifier decided differently takes the third reader's decision, its evidence pages are the pages
that reader quoted, and the pages it was shown count as read.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

import numpy as np

from nclue.index.duplicates import open_duplicates
from nclue.io import iter_jsonl
from nclue.reader.verified_coverage import VerifyOptions
from nclue.select.encode import load_vectors
from nclue.select.freeze import (
    GROUPS_FILE,
    VECTORS_FILE,
    FrozenEvidence,
    compute_rankings,
    load_evidence,
    load_groups,
    load_rankings,
    read_method,
    resolve_freeze,
)
from nclue.select.redundancy import redundant_slots
from nclue.select.tasks import JUDGMENTS_FILE, load_tasks


def ratio(a: int, b: int) -> str:
    return f"{a / b:.3f} ({a}/{b})" if b else "— (0/0)"


def merged_verdicts(files: list[Path]) -> dict[tuple[str, str], dict]:
    """(doc_id, condition) → its row in the first file that read it; otherwise its row with
    ``verified`` false (below the floor) or null (eligible, and read by none of the files)."""
    merged: dict[tuple[str, str], dict] = {}
    for path in files:
        for _, row in iter_jsonl(path):
            key = (row["doc_id"], row["condition"])
            if key not in merged or merged[key]["verified"] is None:
                merged[key] = row
    return merged


def verified_evidence(tasks: list, frozen: FrozenEvidence, verdicts: dict[tuple[str, str], dict]) -> FrozenEvidence:
    """Every pool pair's probability as verification leaves it: 1 or 0 where read (the first quoted
    page shown first), the evidence's own below the floor; stops if an eligible pair was not read."""
    floor = VerifyOptions().floor
    probs, pages, unread = {}, {}, set()
    for task in tasks:
        p = np.zeros((len(task.pool), task.m))
        best = frozen.best_page[task.task_id].copy()
        for i, doc in enumerate(task.pool):
            for r, condition in enumerate(task.requirements):
                row = verdicts.get((doc, condition), {"verified": None})
                if row["verified"] is None:
                    unread.add(f"{doc} / {condition}")
                elif row["p"] < floor:
                    p[i, r] = row["p"]
                else:
                    p[i, r] = float(row["verified"])
                    if row["first_page"] is not None:
                        best[i, r] = row["first_page"]
        probs[task.task_id], pages[task.task_id] = p, best
    if unread:
        raise SystemExit(
            f"{len(unread)} pool pairs at or above the floor were read by none of the --verified files "
            f"(e.g. {min(unread)}); read them with benchmarks/coverage_verified.py --sample all"
        )
    return FrozenEvidence(probs, pages)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tasks", type=Path)
    parser.add_argument("freezes", type=Path)
    parser.add_argument("--selector", default="expected")
    parser.add_argument(
        "--near-duplicates",
        type=float,
        default=None,
        help="count near-copies with groups at this resemblance from the collection's pairs "
        "(default: the freeze's own groups; use 0.10 for a freeze made with the rule off)",
    )
    parser.add_argument(
        "--verified",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="verified.jsonl of benchmarks/coverage_verified.py (repeatable): measure reader-verified verdicts",
    )
    parser.add_argument(
        "--adjudicated",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="adjudicated.jsonl of benchmarks/coverage_adjudicate.py (repeatable): read against the labels with "
        "the splits between the label's reader and the verifier settled by a third reader",
    )
    args = parser.parse_args()
    for flag, paths, writer in (
        ("--verified", args.verified, "benchmarks/coverage_verified.py writes WORK/verified.jsonl"),
        ("--adjudicated", args.adjudicated, "benchmarks/coverage_adjudicate.py writes WORK/adjudicated.jsonl"),
    ):
        missing = [str(path) for path in paths if not path.is_file()]
        if missing:
            parser.error(f"{flag} {missing[0]}: no such file; {writer}")
    settled = {(row["doc_id"], row["condition"]): row for path in args.adjudicated for _, row in iter_jsonl(path)}
    frozen = resolve_freeze(args.freezes)
    tasks = load_tasks(args.tasks, warn=lambda _: None)
    evidence = load_evidence(frozen, tasks)
    if evidence is None:
        raise SystemExit(f"{frozen}: no evidence was frozen")
    rankings = load_rankings(frozen)
    verdicts = merged_verdicts(args.verified) if args.verified else {}
    if verdicts:
        evidence = verified_evidence(tasks, evidence, verdicts)
    adapter = json.loads((args.tasks / "adapter.json").read_text(encoding="utf-8"))
    if args.near_duplicates is None:
        groups = load_groups(frozen / GROUPS_FILE, tasks)
    else:
        pairs = open_duplicates(adapter["collection"])
        groups = {t.task_id: pairs.groups(t.pool, args.near_duplicates) for t in tasks}
    pages: dict[tuple[str, str, str], set[int]] = {}
    for _, row in iter_jsonl(Path(adapter["release"]) / "qrels.jsonl"):
        for condition, found in (row.get("pages") or {}).items():
            pages[(row["qid"], row["doc_id"], condition)] = set(found)
    shown: dict[tuple[str, str], set[int]] = {}  # (doc, condition) → pages a reader saw (reader releases)
    read_file = Path(adapter["release"]) / "judgments.jsonl"
    if read_file.is_file():
        for _, row in iter_jsonl(read_file):
            shown[(row["doc_id"], row["condition"])] = set(row["shown"])
    for (doc, condition), row in settled.items():  # the third reader saw the union and quoted its own pages
        shown[(doc, condition)] = shown.get((doc, condition), set()) | set(row["shown"])
    if verdicts:
        rows = compute_rankings(
            tasks, load_vectors(frozen / VECTORS_FILE), read_method(frozen)["k"], [args.selector], evidence, groups
        )
        rankings = {**rankings, **{(r["task_id"], r["method"]): r["ranking"] for r in rows}}
    covers: dict[tuple[str, str], set[int]] = {}
    for _, row in iter_jsonl(args.tasks / JUDGMENTS_FILE):
        covers[(row["task_id"], row["doc_id"])] = {r - 1 for r in row["requirements"]}

    pair = Counter()
    first = Counter()
    verdict = Counter()
    pool_verdict = Counter()
    absent = Counter()
    for task in tasks:
        probs, best = evidence.probs[task.task_id], evidence.best_page[task.task_id]
        labelled = np.array(
            [
                [
                    settled[(d, c)]["adjudicated"] if (d, c) in settled else r in covers.get((task.task_id, d), set())
                    for r, c in enumerate(task.requirements)
                ]
                for d in task.pool
            ],
            dtype=bool,
        ).reshape(len(task.pool), task.m)
        for (d, c), row in settled.items():
            pages[(task.task_id, d, c)] = set(row["quoted"])
        said = probs >= 0.5
        pair[(True, True)] += int((said & labelled).sum())
        pair[(True, False)] += int((said & ~labelled).sum())
        pair[(False, True)] += int((~said & labelled).sum())
        for i, d in enumerate(task.pool):
            for r, condition in enumerate(task.requirements):
                if (
                    shown
                    and said[i, r]
                    and not labelled[i, r]
                    and int(best[i, r]) not in shown.get((d, condition), set())
                ):
                    pair["unread false"] += 1  # said covered on a page no reader saw: not known to be wrong
                if said[i, r] and labelled[i, r]:
                    page = int(best[i, r])
                    if page in pages.get((task.task_id, d, condition), set()):
                        first["evidence"] += 1
                    elif shown and page not in shown.get((d, condition), set()):
                        first["never shown"] += 1  # a reader release: nobody read that page
                    else:
                        first["not evidence"] += 1
        for r in range(task.m):  # the pool without the documents that cover r: r is absent by the labels
            rest = ~labelled[:, r]
            if rest.any() and labelled[:, r].any():
                absent[bool(said[rest, r].any())] += 1
        position = {d: i for i, d in enumerate(task.pool)}
        chosen = [position[d] for d in rankings[(task.task_id, args.selector)]]
        for r in range(task.m):
            verdict[(not said[chosen, r].any(), not labelled[chosen, r].any())] += 1
            pool_verdict[(not said[:, r].any(), not labelled[:, r].any())] += 1

    print(f"Freeze {frozen.name}, {len(tasks)} tasks, {sum(t.m for t in tasks)} requirement slots\n")
    if settled:
        print(
            f"Labels: the release's, with {len(settled)} pairs the label's reader and the verifier split on "
            f"settled by a third reader ({sum(r['adjudicated'] for r in settled.values())} covered).\n"
        )
    if verdicts:
        print(
            f"Reader-verified verdicts from {len(args.verified)} file(s); the {args.selector} rankings are "
            "re-derived on the verified probabilities.\n"
        )
        read_pairs = Counter()
        for _, row in iter_jsonl(read_file):
            key = (row["doc_id"], row["condition"])
            v = verdicts.get(key, {"verified": None})["verified"]
            read_pairs[(bool(v), settled[key]["adjudicated"] if key in settled else bool(row["established"]))] += 1
        tp, fp, fn = read_pairs[(True, True)], read_pairs[(True, False)], read_pairs[(False, True)]
        print("| Every pair the release's readers read | Value |\n| :--- | ---: |")
        print(f"| precision of the verified verdict | {ratio(tp, tp + fp)} |")
        print(f"| recall of the verified verdict | {ratio(tp, tp + fn)} |\n")
    print("| Measure | Value |\n| :--- | ---: |")
    print(f"| pairs: precision of P ≥ 0.5 | {ratio(pair[(True, True)], pair[(True, True)] + pair[(True, False)])} |")
    print(f"| pairs: recall of P ≥ 0.5 | {ratio(pair[(True, True)], pair[(True, True)] + pair[(False, True)])} |")
    if shown:
        known = pair[(True, True)] + pair[(True, False)] - pair["unread false"]
        print(
            f"| pairs: precision of P ≥ 0.5 where a reader read the best page | {ratio(pair[(True, True)], known)} "
            f"({pair['unread false']} said on a page no reader saw) |"
        )
    print(
        "| page shown first is a labelled evidence page | "
        f"{ratio(first['evidence'], first['evidence'] + first['not evidence'] + first['never shown'])} |"
    )
    if shown:
        print(
            "| the same, among first pages a reader read | "
            f"{ratio(first['evidence'], first['evidence'] + first['not evidence'])} "
            f"({first['never shown']} never shown to a reader) |"
        )
    for name, counts in ((f"{args.selector} selection", verdict), ("pool", pool_verdict)):
        tp, fp, fn = counts[(True, True)], counts[(True, False)], counts[(False, True)]
        print(f"| {name}: 'uncovered' said / uncovered by the labels | {tp + fp} / {tp + fn} |")
        print(f"| {name}: precision of 'uncovered' | {ratio(tp, tp + fp)} |")
        print(f"| {name}: recall of 'uncovered' | {ratio(tp, tp + fn)} |")
    print(
        "| pool without the covering documents: 'not found in the pool' said "
        f"| {ratio(absent[False], absent[False] + absent[True])} |"
    )

    print("\n| Selector | Near-copy slots adding no coverage | Tasks with two of one group |")
    print("| :--- | ---: | ---: |")
    for method in [args.selector] if verdicts else sorted({m for _, m in rankings}):
        slots = twice = 0
        for task in tasks:
            position = {d: i for i, d in enumerate(task.pool)}
            ranking = [position[d] for d in rankings[(task.task_id, method)]]
            g = groups[task.task_id]
            slots += redundant_slots(ranking, g, evidence.probs[task.task_id])
            twice += len(set(g[ranking].tolist())) < len(ranking)
        print(f"| {method} | {slots} | {twice} |")
    shared = sum(len(set(groups[t.task_id].tolist())) < len(t.pool) for t in tasks)
    print(f"\n{shared} of {len(tasks)} pools hold at least one near-duplicate pair (resemblance ≥ 0.10).")


if __name__ == "__main__":
    main()
