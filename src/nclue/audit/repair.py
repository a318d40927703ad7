"""``nclue audit repair``: the evidence-asymmetric policy and the expanded-page poll (``docs/audit.md#repair-policy``).

Presence and absence do not weigh the same: valid quotes from independent evaluators can
establish that a condition holds, while failing to find a quote on three pages cannot establish
that a document lacks it. The policy is fixed here, before any response is read
(:data:`POLICY`). Per pair completed by every evaluator of the initial packet, each condition is

* **locked** when every evaluator marks it established (their quotes passed validation);
* a **split** when evaluators disagree;
* a **consensus negative** when every evaluator marks it not established — a *decrease*
  when the benchmark had evidence for it.

A pair with neither a split nor a decrease is resolved at once: its grade becomes the
number of locked conditions (a *consensus increase* when that exceeds the old grade), with the
evaluators' pages as evidence; whether it is gold is decided later by the distinct-page rule.
Every other pair — any split, any consensus decrease — goes to the expanded-page poll, where
every condition that is not locked is asked again on a pool of 6–9 pages
(:func:`nclue.audit.pool.pool`: the three initial pages, the pages evaluators selected, then the
automatic routes round-robin). Routes, ranks, the prior qrel and earlier votes stay hidden.

Held-out recall: for every locked condition of a queued pair, a pool built from the automatic
routes alone (without the initial pages and evaluator selections) is checked for the pages the
evaluators selected: some selected page by rank 6 and by rank 9, and every selected page by
rank 9. It measures recall for known positives, not document-wide recall for unknown negatives.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nclue.audit.audit_params import ROUTES, PoolParams
from nclue.audit.export import Export, read_exports
from nclue.audit.packet import PacketSummary, Shown, build_payload, write_packet
from nclue.audit.pool import RouteFinder, pool, pool_entries, round_robin
from nclue.audit.rubric import load_overrides
from nclue.audit.store import AuditDir
from nclue.corpus.store import PageStore
from nclue.errors import NclueError
from nclue.io import read_json_object, write_json
from nclue.progress import Progress, quiet
from nclue.tables import Table, Tabular

REPAIR_FILE = "repair.json"
POLICY = (
    "1. Accept consensus increases supported by valid quotes; gold additionally needs a distinct-page assignment. "
    "2. Send every split (any condition on which evaluators disagree) to expanded-page adjudication. "
    "3. Send every consensus decrease (a condition with benchmark evidence that every evaluator marks not "
    "established) to expanded-page adjudication rather than privileging the old qrel or treating three-page "
    "absence as final."
)
"""The evidence-asymmetric repair policy, fixed before any response is read (written into repair.json)."""


@dataclass(frozen=True)
class RepairReport(Tabular):
    """What the policy decided and the poll it built (``nclue audit repair``)."""

    evaluators: tuple[str, ...]
    completed: int
    pending: int
    increases: int
    retained: int
    splits: int
    decreases: int
    unresolved_split: int
    unresolved_negative: int
    locked_in_queue: int
    poll: PacketSummary | None
    notes: tuple[str, ...] = ()

    @property
    def queued(self) -> int:
        """Pairs sent to the expanded-page poll."""
        return self.splits + self.decreases

    def to_json(self) -> dict:
        return {
            "policy": POLICY,
            "evaluators": list(self.evaluators),
            "completed_pairs": self.completed,
            "pending_pairs": self.pending,
            "consensus_increases": self.increases,
            "consensus_retained": self.retained,
            "split_pairs": self.splits,
            "decrease_pairs": self.decreases,
            "queue": {
                "pairs": self.queued,
                "unresolved_conditions": self.unresolved_split + self.unresolved_negative,
                "split_conditions": self.unresolved_split,
                "negative_conditions": self.unresolved_negative,
                "locked_conditions": self.locked_in_queue,
            },
            "poll": self.poll.to_json() if self.poll else None,
            "notes": list(self.notes),
        }

    def tables(self) -> list[Table]:
        rows = (
            ("Pairs completed by every evaluator", str(self.completed)),
            ("Pairs not completed (left unchanged)", str(self.pending)),
            ("Consensus increases accepted", str(self.increases)),
            ("Consensus confirmations (no change)", str(self.retained)),
            ("Split pairs → expanded-page poll", str(self.splits)),
            ("Consensus decreases → expanded-page poll", str(self.decreases)),
            (
                "Queue: pairs / unresolved conditions",
                f"{self.queued} / {self.unresolved_split + self.unresolved_negative}",
            ),
            ("Unresolved: splits / every evaluator negative", f"{self.unresolved_split} / {self.unresolved_negative}"),
            ("Locked (supported) conditions within queued pairs", str(self.locked_in_queue)),
        )
        out = [
            Table(("Repair policy outcome", "Count"), rows, "lr", "Evidence-asymmetric repair (policy fixed in code).")
        ]
        if self.poll is not None:
            out += self.poll.tables()
        return out


def classify(exports: tuple[Export, ...], item: str, names: Mapping[str, str], construction: Mapping[str, Any]) -> dict:
    """The policy's view of one pair: per condition its votes, state and locked evidence; the pair's category."""
    conditions = {}
    for cid, name in names.items():
        votes = {e.evaluator: e.items[item][cid] for e in exports}
        answers = {v.answer for v in votes.values()}
        had = bool(construction.get(name))
        if answers == {True}:
            state = "locked"
        elif answers == {False}:
            state = "decrease" if had else "negative"
        else:
            state = "split"
        evidence: dict[int, list[str]] = {}
        for r in votes.values():
            for page, quote in r.evidence:
                evidence.setdefault(page, []).append(quote)
        conditions[name] = {
            "cid": cid,
            "votes": {ev: v.answer for ev, v in votes.items()},
            "state": state,
            "pages": sorted(evidence),
            "quotes": {str(p): q for p, q in sorted(evidence.items())},
        }
    states = {c["state"] for c in conditions.values()}
    if "split" in states:
        category = "split"
    elif "decrease" in states:
        category = "decrease"
    else:
        locked = sum(c["state"] == "locked" for c in conditions.values())
        category = "increase" if locked > sum(bool(v) for v in construction.values()) else "retained"
    return {"category": category, "conditions": conditions}


def repair(
    audit_dir: str | os.PathLike[str],
    exports: list[str | os.PathLike[str]],
    collection: str | os.PathLike[str],
    out: str | os.PathLike[str],
    params: PoolParams = PoolParams(),
    rubric_file: str | os.PathLike[str] | None = None,
    pdf_dir: str | os.PathLike[str] | None = None,
    tick: Progress = quiet,
) -> RepairReport:
    """Apply the policy to the initial exports and write the expanded-page poll to ``out``."""
    audit = AuditDir.open(audit_dir)
    if audit.kind != "audit":
        raise NclueError(
            f"{audit.root}: a {audit.kind} has no initial blind pass to repair; run `nclue audit adjudicate` on its exports"
        )
    batch = read_exports(exports, audit)
    if batch.kind != "audit":
        raise NclueError(
            f"{exports[0]}: answers a {batch.kind} packet; repair reads the exports of the initial blind packet"
        )
    if len(batch.exports) < 2:
        raise NclueError(
            f"the policy needs two or more independent response streams; got {len(batch.exports)} "
            + ("(after collapsing identical streams)" if batch.collapsed else "")
        )
    payload, admin = audit.load_packet(batch.packet_id)
    pairs: dict[str, dict] = {}
    pending = []
    for item in payload["items"]:
        iid = item["id"]
        key = audit.by_pair[admin["items"][iid]["pair"]]
        names = {c["id"]: c["name"] for c in item["conditions"]}
        if not all(iid in e.items for e in batch.exports):
            pending.append(key.pair)
            continue
        pairs[key.pair] = {
            "item": iid,
            **classify(batch.exports, iid, names, key.pages),
            "original": {c["name"]: [p["page"] for p in c["pages"]] for c in item["conditions"]},
        }
    counts = {k: sum(p["category"] == k for p in pairs.values()) for k in ("increase", "retained", "split", "decrease")}
    queued = [k for k, p in pairs.items() if p["category"] in ("split", "decrease")]
    states = [c["state"] for k in queued for c in pairs[k]["conditions"].values()]
    record = {
        "policy": POLICY,
        "initial_packet": batch.packet_id,
        "evaluators": list(batch.evaluators),
        "collapsed": [str(e.path) for e in batch.collapsed],
        "pairs": pairs,
        "pending": pending,
        "queue": queued,
        "poll_packet": None,
    }
    poll = None
    if queued:
        poll = _poll(audit, pairs, queued, collection, out, params, rubric_file, pdf_dir, tick)
        record["poll_packet"] = poll.packet_id
    write_json(audit.root / REPAIR_FILE, record)
    return RepairReport(
        evaluators=batch.evaluators,
        completed=len(pairs),
        pending=len(pending),
        increases=counts["increase"],
        retained=counts["retained"],
        splits=counts["split"],
        decreases=counts["decrease"],
        unresolved_split=states.count("split"),
        unresolved_negative=states.count("negative") + states.count("decrease"),
        locked_in_queue=states.count("locked"),
        poll=poll,
        notes=batch.notes + ((f"{len(pending)} pairs were not completed by every evaluator",) if pending else ()),
    )


def _poll(
    audit: AuditDir,
    pairs: Mapping[str, dict],
    queued: list[str],
    collection: str | os.PathLike[str],
    out: str | os.PathLike[str],
    params: PoolParams,
    rubric_file: str | os.PathLike[str] | None,
    pdf_dir: str | os.PathLike[str] | None,
    tick: Progress,
) -> PacketSummary:
    """The expanded-page adjudication packet of the queued pairs, with the held-out recall check."""
    store = PageStore.open(collection)
    finder = RouteFinder(store, str(collection), params)
    entries = []
    recall = {"locked": 0, "rank6": 0, "rank9": 0, "all9": 0}
    tick("pools", 0, len(queued))
    for pair_id in sorted(queued, key=lambda k: audit.by_pair[k].doc_id):
        key = audit.by_pair[pair_id]
        shown = []
        for index, name in enumerate(key.conditions, start=1):
            cond = pairs[pair_id]["conditions"][name]
            routes = finder.routes(key.doc_id, name, tuple(key.aliases.get(name, ())), key.pages.get(name, ()))
            if cond["state"] == "locked":
                auto = round_robin([routes.ranked[r] for r in ROUTES], params.expanded_max)
                selected = set(cond["pages"])
                recall["locked"] += 1
                recall["rank6"] += bool(selected & set(auto[:6]))
                recall["rank9"] += bool(selected & set(auto[:9]))
                recall["all9"] += selected <= set(auto[:9])
                continue
            first = {"original": pairs[pair_id]["original"][name], "evaluator": cond["pages"]}
            pages = pool(routes, params.expanded_max, list(first.values()), minimum=params.expanded_min)
            shown.append(Shown(index, name, tuple(pages), tuple(pool_entries(routes, pages, first))))
        entries.append((key, shown))
        tick("pools", 1, None)
    entries.sort(key=lambda e: e[0].pair)
    payload, admin = build_payload(audit, "adjudication", entries, store, params, load_overrides(rubric_file))
    return write_packet(audit, payload, admin, store, out, None, pdf_dir, tick=tick, recall=recall)


def load_repair(audit: AuditDir) -> dict:
    """The policy record written by ``nclue audit repair``."""
    path = Path(audit.root) / REPAIR_FILE
    if not path.is_file():
        raise NclueError(
            f"{audit.root}: no {REPAIR_FILE}; apply the repair policy first with "
            f"`nclue audit repair {audit.root} EXPORT_A EXPORT_B COLLECTION -o poll.html`"
        )
    return read_json_object(path, f"apply the repair policy again with `nclue audit repair {audit.root} ...`")
