"""``nclue audit adjudicate``: poll decisions, the distinct-page rule, and a new qrels version (``docs/audit.md#adjudication``).

Polled conditions are the unresolved conditions of the repair queue (a stratified audit) or
every condition of a targeted challenge. Each is decided by a strict majority of the unique
response streams that answered it, over every poll packet of the audit (the expanded-page
poll or the challenge packet, then any tie-break rounds); identical streams count once. A
tie, or a condition nobody answered, is unresolved: a **tie-break packet** with the same
pages goes to a fresh evaluator, and no qrels are written until every condition is decided.

An optional overrides file records administrative decisions that depart from the raw
majority (each with a reason, and for a positive a page and a quote that must be valid on
that page as displayed); they are reported apart and are not votes.

Final labels: a pair's grade is its number of established conditions, with the pages the
deciding evaluators selected as evidence (locked conditions keep the initial evaluators'
pages). Gold needs every condition, a distinct-page assignment and no single page holding
every condition (``nclue.bench.matching.label``) — so a majority gold whose evidence sits on
one page stays partial. A pair whose grade falls to 0 leaves the qrels. The new version,
``qrels.vN.jsonl`` (and BEIR ``qrels.vN.tsv``), keeps every other row of the qrels the audit
started from and loads with ``nclue evaluate BENCH RUNS --qrels AUDIT/qrels.vN.jsonl``.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nclue.audit.export import ExportSet, load_json, read_exports
from nclue.audit.packet import PacketSummary, assemble, write_packet
from nclue.audit.quote_match import quote_problem
from nclue.audit.repair import load_repair
from nclue.audit.score import AgreementReport, score_exports
from nclue.audit.store import AuditDir
from nclue.bench.matching import label as gold_label
from nclue.errors import NclueError
from nclue.io import read_json, sha256_file, write_json
from nclue.progress import Progress, quiet
from nclue.release import Release, write_beir_qrels, write_judgments
from nclue.tables import Table, Tabular
from nclue.types import Judgment

DECISIONS_FILE = "decisions.json"
Key = tuple[str, str]
"""``(pair id, condition name)``."""


@dataclass(frozen=True)
class Transition:
    """One audited pair's change of grade and label."""

    pair: str
    qid: str
    doc_id: str
    role: str
    stratum: Mapping[str, str]
    old: tuple[int, str]
    new: tuple[int, str | None]

    @property
    def changed(self) -> bool:
        """Whether grade or label changed."""
        return self.old != self.new


@dataclass(frozen=True)
class AdjudicationReport(Tabular):
    """Poll agreement, decisions, transitions and the new qrels version (``nclue audit adjudicate``)."""

    kind: str
    polls: tuple[AgreementReport, ...]
    polled: int
    unanimous: int
    majority: int
    overrides: tuple[dict, ...]
    unresolved: int
    transitions: tuple[Transition, ...] = ()
    qrels: Path | None = None
    qrels_counts: Mapping[str, int] = field(default_factory=dict)
    tiebreak: PacketSummary | None = None
    warnings: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {
            "kind": self.kind,
            "polls": [p.to_json() for p in self.polls],
            "decisions": {
                "polled": self.polled,
                "unanimous": self.unanimous,
                "majority": self.majority,
                "overrides": list(self.overrides),
                "unresolved": self.unresolved,
            },
            "transitions": transition_counts(self.transitions),
            "changed": sum(t.changed for t in self.transitions),
            "reviewed": len(self.transitions),
            "qrels": str(self.qrels) if self.qrels else None,
            "qrels_counts": dict(self.qrels_counts),
            "tiebreak": self.tiebreak.to_json() if self.tiebreak else None,
            "warnings": list(self.warnings),
        }

    def tables(self) -> list[Table]:
        out: list[Table] = []
        for poll in self.polls:
            out += [t for t in poll.tables() if not t.caption.startswith("Agreement by stratum")]
        rows = [
            ("Polled conditions", str(self.polled)),
            ("Decided unanimously", str(self.unanimous)),
            ("Decided by majority (not unanimous)", str(self.majority)),
            ("Administrative decisions departing from the majority", str(len(self.overrides))),
            ("Unresolved (tie or no vote) → tie-break packet", str(self.unresolved)),
        ]
        out.append(
            Table(("Decision", "Conditions"), tuple(rows), "lr", "Poll decisions (strict majority of unique streams).")
        )
        if self.overrides:
            out.append(
                Table(
                    ("Query", "Document", "Condition", "Majority", "Final", "Reason"),
                    tuple(
                        (o["qid"], o["doc_id"], o["condition"], _yes(o["majority"]), _yes(o["decision"]), o["reason"])
                        for o in self.overrides
                    ),
                    "llllll",
                    "Administrative decisions (not votes, not in κ).",
                )
            )
        if self.transitions:
            out.append(transition_table(self.transitions))
            out.append(stratum_table(self.transitions))
            if {t.role for t in self.transitions} - {"sample"}:
                out.append(role_table(self.transitions))
        if self.qrels is not None:
            c = self.qrels_counts
            rows = [
                ("File", str(self.qrels)),
                ("Queries / with a gold", f"{c['queries']} / {c['queries_with_gold']}"),
                ("Nonzero qrels (gold / partial)", f"{c['rows']} ({c['gold']} / {c['partial']})"),
                ("Rows removed (grade 0)", str(c["removed"])),
            ]
            out.append(Table(("New qrels version", "Value"), tuple(rows), "ll", "The repaired qrels."))
        if self.tiebreak is not None:
            out += self.tiebreak.tables()
        return out


def _yes(value: object) -> str:
    return "–" if value is None else ("established" if value else "not established")


def transition_counts(transitions: Sequence[Transition]) -> list[dict]:
    """``[{"from", "to", "count", "labels": {"partial→gold": n, ...}}]`` for every grade transition."""
    groups: dict[tuple[int, int], Counter] = {}
    for t in transitions:
        groups.setdefault((t.old[0], t.new[0]), Counter())[f"{t.old[1]}→{t.new[1] or 'removed'}"] += 1
    return [
        {"from": a, "to": b, "count": sum(c.values()), "labels": dict(sorted(c.items()))}
        for (a, b), c in sorted(groups.items())
    ]


def transition_table(transitions: Sequence[Transition]) -> Table:
    """Exact grade transitions with the label changes behind each."""
    rows = []
    for row in transition_counts(transitions):
        parts = []
        for change, n in row["labels"].items():
            old, new = change.split("→")
            if new == "removed":
                parts.append(f"{n} removed (grade 0)")
            elif old == new:
                parts.append(f"{n} {'remains' if n == 1 else 'remain'} {new}")
            else:
                parts.append(f"{n} {old} to {new}")
        rows.append((f"{row['from']}→{row['to']}", str(row["count"]), "; ".join(parts)))
    changed = [t for t in transitions if t.changed]
    net = sum(t.new[1] == "gold" for t in changed) - sum(t.old[1] == "gold" for t in changed)
    rows.append(("All changes", f"{len(changed)}/{len(transitions)}", f"net {net:+d} gold"))
    return Table(
        ("Grade transition", "Count", "Labels"),
        tuple(rows),
        "lrl",
        "Final grade transitions of the reviewed pairs (unchanged grades included).",
    )


def stratum_table(transitions: Sequence[Transition]) -> Table:
    """Reviewed and corrected pairs by stratum (rates within the sample, never population estimates)."""
    fields = sorted({f for t in transitions for f in t.stratum})
    rows = []
    for fld in fields:
        groups: dict[str, list[Transition]] = {}
        for t in transitions:
            groups.setdefault(t.stratum.get(fld, "–"), []).append(t)
        for value in sorted(groups):
            rows.append((fld, value, str(len(groups[value])), str(sum(t.changed for t in groups[value]))))
    rows.append(("All", "", str(len(transitions)), str(sum(t.changed for t in transitions))))
    return Table(
        ("Stratum", "Value", "Reviewed", "Corrected"),
        tuple(rows),
        "llrr",
        "Corrections by stratum. These rates must not be reweighted into a population error estimate.",
    )


def role_table(transitions: Sequence[Transition]) -> Table:
    """Targets and controls of a challenge: changed, promoted to gold, retained."""
    rows = []
    for role in sorted({t.role for t in transitions}):
        ts = [t for t in transitions if t.role == role]
        rows.append(
            (
                role,
                str(len(ts)),
                str(sum(t.old[0] != t.new[0] for t in ts)),
                str(sum(t.new[1] == "gold" and t.old[1] != "gold" for t in ts)),
                str(sum(t.old == t.new for t in ts)),
            )
        )
    return Table(
        ("Role", "Pairs", "Grade changed", "To gold", "Retained"),
        tuple(rows),
        "lrrrr",
        "Challenge targets and interleaved neutral controls.",
    )


def _read_overrides(path: str | os.PathLike[str] | None) -> list[dict]:
    if path is None:
        return []
    p = Path(path)
    data = read_json(p, 'write {"overrides": [{"item": ID, "decision": ...}]} or a JSON list of them', "overrides file")
    rows = data.get("overrides") if isinstance(data, dict) else data
    if not isinstance(rows, list):
        raise NclueError(f'{p}: give a list of overrides (or {{"overrides": [...]}})')
    for i, row in enumerate(rows, start=1):
        ok = isinstance(row, dict) and all(
            isinstance(row.get(k), str) for k in ("qid", "doc_id", "condition", "reason")
        )
        if not ok or not isinstance(row.get("decision"), bool) or not row["reason"].strip():
            raise NclueError(
                f"{p}: override #{i} needs qid, doc_id, condition, decision (true/false) and a non-empty reason"
            )
    return rows


def _polls(audit: AuditDir) -> tuple[list[str], dict[Key, None]]:
    """Packets whose exports vote, and the polled conditions (in a stable order)."""
    if audit.kind == "audit":
        record = load_repair(audit)
        polled = {
            (pair, name): None
            for pair in record["queue"]
            for name, cond in record["pairs"][pair]["conditions"].items()
            if cond["state"] != "locked"
        }
        first = [record["poll_packet"]] if record["poll_packet"] else []
    else:
        first = audit.packets_of_kind("challenge")
        polled = {(p.pair, name): None for p in audit.pairs for name in p.conditions}
    return first + audit.packets_of_kind("tiebreak"), polled


def adjudicate(
    audit_dir: str | os.PathLike[str],
    exports: Sequence[str | os.PathLike[str]] = (),
    overrides: str | os.PathLike[str] | None = None,
    tiebreak_out: str | os.PathLike[str] | None = None,
    bench: str | os.PathLike[str] | None = None,
    tick: Progress = quiet,
) -> AdjudicationReport:
    """Decide every polled condition and write the new qrels version (or a tie-break packet)."""
    audit = AuditDir.open(audit_dir)
    packets, polled = _polls(audit)
    groups: dict[str, list[str | os.PathLike[str]]] = {}
    for path in exports:
        pid = _packet_of(path)
        if pid not in packets:
            raise NclueError(
                f"{path}: answers packet {pid}, which is not a poll of this {audit.kind} "
                f"(polls: {', '.join(packets) or 'none'}); adjudicate reads the exports of the "
                + ("expanded-page poll and tie-breaks" if audit.kind == "audit" else "challenge packet and tie-breaks")
            )
        groups.setdefault(pid, []).append(path)
    if polled and not exports:
        raise NclueError(
            f"{audit.root}: {len(polled)} conditions wait for poll answers; give the exports of packet "
            f"{packets[0] if packets else '?'}"
        )
    sets = {pid: read_exports(paths, audit, pid) for pid, paths in groups.items()}
    votes, shown = _votes(audit, packets, sets)
    decisions: dict[Key, bool | None] = {}
    for key in polled:
        answers = [v["answer"] for v in votes.get(key, [])]
        yes, no = answers.count(True), answers.count(False)
        decisions[key] = True if yes > no else (False if no > yes else None)
    unanimous = sum(1 for k in polled if votes.get(k) and len({v["answer"] for v in votes[k]}) == 1)
    decided_by = {k: decisions[k] for k in polled}
    applied = _apply_overrides(audit, _read_overrides(overrides), polled, decisions, shown)
    polls = tuple(score_exports(audit, sets[pid]) for pid in packets if pid in sets)
    unresolved = [k for k in polled if decisions[k] is None]
    common = dict(
        kind=audit.kind,
        polls=polls,
        polled=len(polled),
        unanimous=unanimous,
        majority=sum(1 for k in polled if decided_by[k] is not None) - unanimous,
        overrides=tuple(applied),
        unresolved=len(unresolved),
    )
    if unresolved:
        rounds = 1 + sum(1 for pid in sets if audit.load_packet(pid)[0]["kind"] == "tiebreak")
        target = Path(tiebreak_out) if tiebreak_out else audit.root / f"tiebreak-{rounds}.html"
        summary = _tiebreak(audit, unresolved, shown, rounds, target)
        return AdjudicationReport(**common, tiebreak=summary)  # type: ignore[arg-type]
    final = _final_pages(audit, polled, decisions, votes, applied)
    return _write_version(audit, final, common, bench, votes, decisions)


def _packet_of(path: str | os.PathLike[str]) -> str:
    return str(load_json(Path(path)).get("packet_id"))


def _votes(
    audit: AuditDir, packets: Sequence[str], sets: Mapping[str, ExportSet]
) -> tuple[dict[Key, list[dict]], dict[Key, tuple[dict, dict]]]:
    """Votes per polled condition and, per condition, how its first poll showed it (payload, admin rows)."""
    votes: dict[Key, list[dict]] = {}
    shown: dict[Key, tuple[dict, dict]] = {}
    for pid in packets:
        payload, admin = audit.load_packet(pid)
        for item in payload["items"]:
            pair = admin["items"][item["id"]]["pair"]
            for cond in item["conditions"]:
                key = (pair, cond["name"])
                if key not in shown:
                    shown[key] = (cond, admin["items"][item["id"]]["conditions"][cond["id"]])
        if pid not in sets:
            continue
        for export in sets[pid].exports:
            for iid, conds in export.items.items():
                pair = admin["items"][iid]["pair"]
                for cid, response in conds.items():
                    name = admin["items"][iid]["conditions"][cid]["condition"]
                    votes.setdefault((pair, name), []).append(
                        {
                            "evaluator": export.evaluator,
                            "packet": pid,
                            "answer": response.answer,
                            "evidence": [list(e) for e in response.evidence],
                        }
                    )
    return votes, shown


def _apply_overrides(
    audit: AuditDir,
    rows: list[dict],
    polled: Mapping[Key, None],
    decisions: dict[Key, bool | None],
    shown: Mapping[Key, tuple[dict, dict]],
) -> list[dict]:
    by_pair = {(p.qid, p.doc_id): p.pair for p in audit.pairs}
    applied = []
    for i, row in enumerate(rows, start=1):
        pair = by_pair.get((row["qid"], row["doc_id"]))
        key = (pair or "", row["condition"])
        if key not in polled:
            raise NclueError(
                f"override #{i}: ({row['qid']}, {row['doc_id']}, {row['condition']!r}) is not a polled condition of "
                "this audit; overrides apply only to conditions the poll decided"
            )
        evidence: list[list] = []
        if row["decision"]:
            pages = {p["page"]: p["text"] for p in shown[key][0]["pages"]}
            page, quote = row.get("page"), row.get("quote", "")
            if page not in pages:
                raise NclueError(
                    f"override #{i}: a positive decision needs a 'page' among the displayed pages {sorted(pages)}"
                )
            problem = quote_problem(str(quote), pages[page])
            if problem:
                raise NclueError(f"override #{i}: page {page}: {problem}")
            evidence = [[page, quote]]
        applied.append({**row, "pair": pair, "majority": decisions[key], "evidence": evidence})
        decisions[key] = row["decision"]
    return applied


def _tiebreak(
    audit: AuditDir, unresolved: Sequence[Key], shown: Mapping[Key, tuple[dict, dict]], rounds: int, out: Path
) -> PacketSummary:
    """A poll of the unresolved conditions on the pages they were shown with."""
    by_pair: dict[str, list[dict]] = {}
    params: dict[str, Any] = {}
    for pair, name in unresolved:
        cond, admin_cond = shown[(pair, name)]
        by_pair.setdefault(pair, []).append(
            {
                "index": admin_cond["index"],
                "name": name,
                "aliases": cond["aliases"],
                "rubric": cond["rubric"],
                "pages": cond["pages"],
                "pool": admin_cond["pool"],
            }
        )
    entries = [(audit.by_pair[p], sorted(c, key=lambda c: c["index"])) for p, c in sorted(by_pair.items())]
    payload, admin = assemble(audit, "tiebreak", f"tiebreak{rounds}", entries, params)
    return write_packet(audit, payload, admin, None, out)


def _final_pages(
    audit: AuditDir,
    polled: Mapping[Key, None],
    decisions: Mapping[Key, bool | None],
    votes: Mapping[Key, list[dict]],
    applied: list[dict],
) -> dict[str, list[frozenset[int]]]:
    """Per reviewed pair, the final evidence page set of every condition (empty = not established)."""
    extra = {(o["pair"], o["condition"]): {int(p) for p, _ in o["evidence"]} for o in applied}

    def decided(key: Key) -> frozenset[int]:
        if not decisions[key]:
            return frozenset()
        pages = {int(p) for v in votes.get(key, []) if v["answer"] for p, _ in v["evidence"]}
        return frozenset(pages | extra.get(key, set()))

    final: dict[str, list[frozenset[int]]] = {}
    if audit.kind == "audit":
        record = load_repair(audit)
        for pair, row in record["pairs"].items():
            sets = []
            for name in audit.by_pair[pair].conditions:
                cond = row["conditions"][name]
                if cond["state"] == "locked":
                    sets.append(frozenset(cond["pages"]))
                elif (pair, name) in polled:
                    sets.append(decided((pair, name)))
                else:
                    sets.append(frozenset())
            final[pair] = sets
    else:
        for p in audit.pairs:
            final[p.pair] = [decided((p.pair, name)) for name in p.conditions]
    return final


def _write_version(
    audit: AuditDir,
    final: Mapping[str, list[frozenset[int]]],
    common: dict,
    bench: str | os.PathLike[str] | None,
    votes: Mapping[Key, list[dict]],
    decisions: Mapping[Key, bool | None],
) -> AdjudicationReport:
    release = audit.release(bench)
    replaced: dict[tuple[str, str], Judgment | None] = {}
    transitions = []
    for pair_id, sets in sorted(final.items()):
        key = audit.by_pair[pair_id]
        new_label = gold_label(sets)
        grade = sum(1 for s in sets if s)
        pages = {c: tuple(sorted(s)) for c, s in zip(key.conditions, sets) if s}
        replaced[(key.qid, key.doc_id)] = (
            Judgment(key.qid, key.doc_id, grade, new_label, pages) if new_label else None  # type: ignore[arg-type]
        )
        transitions.append(
            Transition(
                pair_id,
                key.qid,
                key.doc_id,
                key.role,
                dict(key.stratum),
                (key.grade, key.label),
                (grade, new_label),
            )
        )
    rows = []
    for j in release.judgments:
        if (j.qid, j.doc_id) in replaced:
            new = replaced[(j.qid, j.doc_id)]
            if new is not None:
                rows.append(new)
        else:
            rows.append(j)
    version = audit.base_version + 1
    path = audit.root / f"qrels.v{version}.jsonl"
    write_judgments(path, rows)
    write_beir_qrels(audit.root / f"qrels.v{version}.tsv", rows)
    reopened = Release.open(release.root, qrels=path)  # the new version must load as any qrels file does
    problems = reopened.problems()
    gold_queries = {j.qid for j in reopened.judgments if j.label == "gold"}
    counts = {
        "queries": len(reopened.queries),
        "queries_with_gold": len(gold_queries),
        "rows": len(reopened.judgments),
        "gold": sum(j.label == "gold" for j in reopened.judgments),
        "partial": sum(j.label == "partial" for j in reopened.judgments),
        "removed": sum(v is None for v in replaced.values()),
    }
    write_json(
        audit.root / DECISIONS_FILE,
        {
            "qrels": path.name,
            "qrels_sha256": sha256_file(path),
            "base_version": audit.base_version,
            "version": version,
            "decisions": [
                {"pair": k[0], "condition": k[1], "decision": decisions[k], "votes": votes.get(k, [])}
                for k in sorted(decisions)
            ],
            "overrides": list(common["overrides"]),
            "transitions": [
                {"pair": t.pair, "qid": t.qid, "doc_id": t.doc_id, "from": list(t.old), "to": list(t.new)}
                for t in transitions
            ],
        },
    )
    return AdjudicationReport(
        **common,
        transitions=tuple(transitions),
        qrels=path,
        qrels_counts=counts,
        warnings=tuple(problems),
    )
