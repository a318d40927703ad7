"""``nclue audit score``: agreement and integrity of the exports of one packet (``docs/audit.md#agreement``).

For every pair of evaluators, over the items both accepted:

* **derived grade** of a pair = the number of its conditions an evaluator marks established;
  exact grade agreement with a Wilson 95% interval, the linearly weighted Cohen's κ over grades
  ``0..n_max``, and the grade confusion matrix (shown only where a packet shows every condition);
* **condition agreement** on the binary decisions, with a Wilson interval, and Cohen's κ;
* **exact page-set agreement**: among conditions both mark established, the share where they
  selected exactly the same pages;
* the same agreement rates by stratum (``n``, ``source`` and the sample's strata).

Across all evaluators (two or more): conditions every evaluator decided, unanimous decisions,
Fleiss' κ and pairwise agreement.

**The labels against the evaluators** (the audit's question): per evaluator, agreement of its
decisions with the labels under audit (a condition is labelled established when the pair's
qrels row carries evidence pages for it) with a Wilson interval and Cohen's κ, the share of
labelled-established conditions it confirms, the share of labelled-absent ones it leaves absent,
and agreement by source; and **gold-pair precision** — the gold pairs for which the evaluator
(and, across evaluators, every evaluator) confirms every condition. Integrity per evaluator: positives, negatives, selected pages
and quotes — every quote of an accepted item passed the normalised check when it was read
(:mod:`nclue.audit.export`); *verbatim* counts those that also match character for character.
The statistics are the array functions of :mod:`nclue.audit.agreement`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np

from nclue.audit.agreement import (
    category_counts,
    cohen_kappa,
    confusion_matrix,
    fleiss_kappa,
    pairwise_agreement,
    unanimous,
    wilson_interval,
)
from nclue.audit.export import ExportSet, read_exports
from nclue.audit.quote_match import verbatim
from nclue.audit.store import AuditDir, PairKey
from nclue.io import json_safe
from nclue.tables import Table, Tabular


@dataclass(frozen=True)
class Rate:
    """``hits`` of ``n`` with its Wilson 95% interval (0..1)."""

    hits: int
    n: int

    @property
    def share(self) -> float | None:
        """``hits / n`` (``None`` when ``n = 0``)."""
        return self.hits / self.n if self.n else None

    @property
    def ci(self) -> tuple[float, float] | None:
        """The Wilson interval, ``None`` when ``n = 0``."""
        if not self.n:
            return None
        lo, hi = wilson_interval(self.hits, self.n)
        return float(lo), float(hi)

    def to_json(self) -> dict:
        return json_safe({"hits": self.hits, "n": self.n, "share": self.share, "wilson95": self.ci})

    def text(self, ci: bool = True) -> str:
        """``254/300 (84.7%) [80.2, 88.3]``."""
        if not self.n:
            return "–"
        out = f"{self.hits}/{self.n} ({100 * self.hits / self.n:.1f}%)"
        if ci:
            lo, hi = self.ci  # type: ignore[misc]
            out += f" [{100 * lo:.1f}, {100 * hi:.1f}]"
        return out


@dataclass(frozen=True)
class PairAgreement:
    """Agreement of two evaluators over the items both accepted."""

    a: str
    b: str
    items: int
    conditions: Rate
    condition_kappa: float
    page_sets: Rate
    grades: Rate | None = None
    grade_kappa: float | None = None
    confusion: tuple[tuple[int, ...], ...] | None = None
    strata: Mapping[str, Mapping[str, tuple[Rate | None, Rate]]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """``A–E``."""
        return f"{self.a}–{self.b}"

    def to_json(self) -> dict:
        out: dict[str, Any] = {
            "evaluators": [self.a, self.b],
            "items": self.items,
            "condition_agreement": self.conditions.to_json(),
            "condition_kappa": self.condition_kappa,
            "page_set_agreement": self.page_sets.to_json(),
        }
        if self.grades is not None:
            out["grade_agreement"] = self.grades.to_json()
            out["grade_kappa_linear"] = self.grade_kappa
            out["grade_confusion"] = [list(r) for r in self.confusion or ()]
        out["strata"] = {
            f: {v: {"grade": g.to_json() if g else None, "condition": c.to_json()} for v, (g, c) in cells.items()}
            for f, cells in self.strata.items()
        }
        return json_safe(out)


@dataclass(frozen=True)
class LabelAgreement:
    """One evaluator's decisions against the audited labels (``evaluator = "all"``: every evaluator agrees)."""

    evaluator: str
    conditions: Rate
    kappa: float | None
    confirmed: Rate
    absent: Rate
    gold_pairs: Rate
    by_source: Mapping[str, Rate] = field(default_factory=dict)

    def to_json(self) -> dict:
        return json_safe(
            {
                "evaluator": self.evaluator,
                "condition_agreement": self.conditions.to_json(),
                "kappa": self.kappa,
                "labelled_established_confirmed": self.confirmed.to_json(),
                "labelled_absent_confirmed": self.absent.to_json(),
                "gold_pairs_all_confirmed": self.gold_pairs.to_json(),
                "by_source": {k: v.to_json() for k, v in self.by_source.items()},
            }
        )


@dataclass(frozen=True)
class Integrity:
    """One evaluator's stream: completed items, decisions, selected pages and quote checks."""

    evaluator: str
    completed: int
    positive: int
    negative: int
    pages: int
    quotes_valid: int
    quotes_verbatim: int

    def to_json(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class AgreementReport(Tabular):
    """Agreement and integrity of the exports of one packet (``nclue audit score``)."""

    packet_id: str
    kind: str
    items: int
    conditions: int
    evaluators: tuple[str, ...]
    pairs: tuple[PairAgreement, ...]
    integrity: tuple[Integrity, ...]
    all_conditions: int = 0
    all_unanimous: int = 0
    fleiss: float | None = None
    all_pairwise: Mapping[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    labels: tuple[LabelAgreement, ...] = ()

    def to_json(self) -> dict:
        return json_safe(
            {
                "labels": [x.to_json() for x in self.labels],
                "packet_id": self.packet_id,
                "kind": self.kind,
                "items": self.items,
                "conditions": self.conditions,
                "evaluators": list(self.evaluators),
                "pairs": [p.to_json() for p in self.pairs],
                "integrity": [i.to_json() for i in self.integrity],
                "all_raters": {
                    "conditions": self.all_conditions,
                    "unanimous": self.all_unanimous,
                    "fleiss_kappa": self.fleiss,
                    "pairwise_agreement": dict(self.all_pairwise),
                },
                "notes": list(self.notes),
            }
        )

    def tables(self) -> list[Table]:
        out = []
        if self.labels:
            out.append(labels_table(self))
        if self.pairs:
            out.append(summary_table(self))
        if len(self.evaluators) >= 2:
            out.append(raters_table(self))
        out.append(integrity_table(self))
        for pair in self.pairs:
            if pair.confusion is not None:
                out.append(confusion_table(pair))
        if any(p.strata for p in self.pairs):
            out.append(strata_table(self))
        return out


def _kappa(value: float | None) -> str:
    return "–" if value is None or np.isnan(value) else f"{value:.3f}"


def summary_table(report: AgreementReport) -> Table:
    """Agreement statistics, one column per evaluator pair."""
    grades = any(p.grades is not None for p in report.pairs)
    rows = [
        ("Completed pairs / conditions", *(f"{p.items} / {p.conditions.n}" for p in report.pairs)),
    ]
    if grades:
        rows += [
            (
                "Exact derived-grade agreement [Wilson 95%]",
                *(p.grades.text() if p.grades else "–" for p in report.pairs),
            ),
            ("Linearly weighted grade κ", *(_kappa(p.grade_kappa) for p in report.pairs)),
        ]
    rows += [
        ("Condition agreement [Wilson 95%]", *(p.conditions.text() for p in report.pairs)),
        ("Condition Cohen's κ", *(_kappa(p.condition_kappa) for p in report.pairs)),
        ("Exact page-set agreement (both established)", *(p.page_sets.text(ci=False) for p in report.pairs)),
    ]
    return Table(
        ("Statistic", *(p.name for p in report.pairs)),
        tuple(rows),
        "l" + "r" * len(report.pairs),
        f"Agreement on packet {report.packet_id} ({report.kind}).",
    )


def labels_table(report: AgreementReport) -> Table:
    """The audited labels against each evaluator (and against every evaluator at once)."""
    sources = sorted({s for x in report.labels for s in x.by_source})
    rows = [
        ("Condition agreement with the labels [Wilson 95%]", *(x.conditions.text() for x in report.labels)),
        ("Cohen's κ (labels vs evaluator)", *(_kappa(x.kappa) for x in report.labels)),
        ("Labelled established, confirmed", *(x.confirmed.text(ci=False) for x in report.labels)),
        ("Labelled absent, confirmed", *(x.absent.text(ci=False) for x in report.labels)),
        ("Gold pairs with every condition confirmed", *(x.gold_pairs.text() for x in report.labels)),
        *(
            (f"Condition agreement, {src}", *(x.by_source.get(src, Rate(0, 0)).text(ci=False) for x in report.labels))
            for src in sources
        ),
    ]
    return Table(
        ("Labels vs", *(x.evaluator for x in report.labels)),
        tuple(rows),
        "l" + "r" * len(report.labels),
        f"The audited labels against the evaluators of packet {report.packet_id} "
        "(all: a condition counts as agreeing when every evaluator agrees with its label).",
    )


def raters_table(report: AgreementReport) -> Table:
    """All evaluators together: unanimity, Fleiss' κ, pairwise condition agreement."""
    rows = [
        ("Evaluators", ", ".join(report.evaluators)),
        ("Conditions decided by every evaluator", str(report.all_conditions)),
        ("Unanimous decisions", Rate(report.all_unanimous, report.all_conditions).text(ci=False)),
        ("Fleiss' κ", _kappa(report.fleiss)),
        *(
            (f"Pairwise condition agreement {name}", Rate(hits, report.all_conditions).text(ci=False))
            for name, hits in report.all_pairwise.items()
        ),
    ]
    return Table(("Statistic", "Value"), tuple(rows), "lr", "Agreement across all evaluators.")


def integrity_table(report: AgreementReport) -> Table:
    """Per evaluator: decisions, selected pages, and quotes passing the checks."""
    rows = [
        (
            i.evaluator,
            str(i.completed),
            str(i.positive),
            str(i.negative),
            str(i.pages),
            f"{i.quotes_valid}/{i.pages}",
            f"{i.quotes_verbatim}/{i.pages}",
        )
        for i in report.integrity
    ]
    totals = [sum(getattr(i, f) for i in report.integrity) for f in ("completed", "positive", "negative", "pages")]
    valid = sum(i.quotes_valid for i in report.integrity)
    exact = sum(i.quotes_verbatim for i in report.integrity)
    rows.append(("All", *map(str, totals), f"{valid}/{totals[3]}", f"{exact}/{totals[3]}"))
    return Table(
        ("Evaluator", "Completed", "Established", "Not established", "Pages", "Quotes valid", "Quotes verbatim"),
        tuple(rows),
        "lrrrrrr",
        "Response integrity. Valid: the normalised quote is on its selected page (every accepted quote); verbatim: "
        "also character for character. Timing is not recorded and not used.",
    )


def confusion_table(pair: PairAgreement) -> Table:
    """The derived-grade confusion matrix of one evaluator pair."""
    k = len(pair.confusion or ())
    rows = tuple((str(g), *map(str, row)) for g, row in enumerate(pair.confusion or ()))
    return Table(
        (f"{pair.a} \\ {pair.b}", *(str(g) for g in range(k))),
        rows,
        "l" + "r" * k,
        f"Derived-grade confusion matrix: rows are {pair.a}'s grades, columns {pair.b}'s.",
    )


def strata_table(report: AgreementReport) -> Table:
    """Exact grade and condition agreement by stratum, for every evaluator pair."""
    rows = []
    for pair in report.pairs:
        for fld, cells in pair.strata.items():
            for value, (grade, cond) in cells.items():
                rows.append(
                    (
                        pair.name,
                        fld,
                        value,
                        str(cond.n if grade is None else grade.n),
                        grade.text(ci=False) if grade else "–",
                        cond.text(ci=False),
                    )
                )
    return Table(
        ("Evaluators", "Stratum", "Value", "Pairs", "Exact grade agreement", "Condition agreement"),
        tuple(rows),
        "lllrrr",
        "Agreement by stratum (rates within the sample; not population estimates).",
    )


@dataclass(frozen=True)
class Shown:
    """The packet's items as the scorer needs them: per item its pair and the condition ids shown."""

    pairs: Mapping[str, PairKey]
    conditions: Mapping[str, tuple[str, ...]]
    texts: Mapping[tuple[str, int], str]
    full: bool
    names: Mapping[str, str] = field(default_factory=dict)


def shown_items(audit: AuditDir, packet_id: str) -> Shown:
    """Items, their pairs, shown conditions and page texts of a stored packet."""
    payload, admin = audit.load_packet(packet_id)
    pairs = {iid: audit.by_pair[row["pair"]] for iid, row in admin["items"].items()}
    conditions = {item["id"]: tuple(c["id"] for c in item["conditions"]) for item in payload["items"]}
    texts = {
        (c["id"], p["page"]): p["text"] for item in payload["items"] for c in item["conditions"] for p in c["pages"]
    }
    full = all(len(conditions[iid]) == pairs[iid].n for iid in conditions)
    names = {cid: row["condition"] for item in admin["items"].values() for cid, row in item["conditions"].items()}
    return Shown(pairs, conditions, texts, full, names)


def label_agreement(exports: ExportSet, shown: Shown, evaluators: Sequence[str]) -> LabelAgreement | None:
    """``evaluators``' decisions against the labels, over the items all of them accepted (``None``: no item)."""
    by = {e.evaluator: e for e in exports.exports}
    items = [i for i in shown.conditions if all(i in by[ev].items for ev in evaluators)]
    if not items:
        return None
    label, agree, source, gold_ok, gold = [], [], [], 0, 0
    for i in items:
        pair = shown.pairs[i]
        every = True
        for c in shown.conditions[i]:
            lab = bool(pair.pages.get(shown.names.get(c, ""), ()))
            answers = [bool(by[ev].items[i][c].answer) for ev in evaluators]
            label.append(lab)
            agree.append(all(a == lab for a in answers))
            source.append(pair.source)
            every &= all(answers)
        if pair.label == "gold":
            gold += 1
            gold_ok += every
    lab_arr, agree_arr = np.array(label), np.array(agree)
    read = np.where(agree_arr, lab_arr, ~lab_arr)
    kappa = (
        cohen_kappa(confusion_matrix(lab_arr.astype(np.int64), read.astype(np.int64), 2))
        if len(evaluators) == 1
        else None
    )
    return LabelAgreement(
        evaluator=evaluators[0] if len(evaluators) == 1 else "all",
        conditions=Rate(int(agree_arr.sum()), len(agree_arr)),
        kappa=kappa,
        confirmed=Rate(int((agree_arr & lab_arr).sum()), int(lab_arr.sum())),
        absent=Rate(int((agree_arr & ~lab_arr).sum()), int((~lab_arr).sum())),
        gold_pairs=Rate(gold_ok, gold),
        by_source={
            src: Rate(int(agree_arr[np.array(source) == src].sum()), int((np.array(source) == src).sum()))
            for src in sorted(set(source))
        },
    )


def _decisions(exports: ExportSet, shown: Shown, evaluators: Sequence[str], items: Sequence[str]) -> np.ndarray:
    """``(evaluators, conditions)`` 0/1 decisions over the shown conditions of ``items``."""
    by = {e.evaluator: e for e in exports.exports}
    return np.array(
        [[int(by[ev].items[i][c].answer) for i in items for c in shown.conditions[i]] for ev in evaluators],
        dtype=np.int64,
    ).reshape(len(evaluators), -1)


def score_exports(audit: AuditDir, exports: ExportSet) -> AgreementReport:
    """Agreement and integrity of an export set against its stored packet."""
    shown = shown_items(audit, exports.packet_id)
    order = list(shown.conditions)
    by = {e.evaluator: e for e in exports.exports}
    n_max = max((p.n for p in shown.pairs.values()), default=2)
    pairs = []
    for a, b in combinations(exports.evaluators, 2):
        both = [i for i in order if i in by[a].items and i in by[b].items]
        dec = _decisions(exports, shown, [a, b], both)
        cond_table = confusion_matrix(dec[0], dec[1], 2)
        same_pages = [
            by[a].items[i][c].pages == by[b].items[i][c].pages
            for i in both
            for c in shown.conditions[i]
            if by[a].items[i][c].answer and by[b].items[i][c].answer
        ]
        grades = confusion = kappa = None
        if shown.full:
            ga = np.array([sum(r.answer for r in by[a].items[i].values()) for i in both], dtype=np.int64)
            gb = np.array([sum(r.answer for r in by[b].items[i].values()) for i in both], dtype=np.int64)
            table = confusion_matrix(ga, gb, n_max + 1)
            grades = Rate(int((ga == gb).sum()), len(both))
            kappa = cohen_kappa(table, "linear")
            confusion = tuple(tuple(int(x) for x in row) for row in table)
        pairs.append(
            PairAgreement(
                a=a,
                b=b,
                items=len(both),
                conditions=Rate(int((dec[0] == dec[1]).sum()), dec.shape[1]),
                condition_kappa=cohen_kappa(cond_table),
                page_sets=Rate(int(sum(same_pages)), len(same_pages)),
                grades=grades,
                grade_kappa=kappa,
                confusion=confusion,
                strata=_strata(by[a], by[b], both, shown, audit),
            )
        )
    everyone = [i for i in order if all(i in e.items for e in exports.exports)]
    fleiss = None
    all_conditions = unanimous_count = 0
    pairwise: dict[str, int] = {}
    if len(exports.exports) >= 2 and everyone:
        dec = _decisions(exports, shown, exports.evaluators, everyone)
        all_conditions = dec.shape[1]
        unanimous_count = unanimous(dec)
        fleiss = fleiss_kappa(category_counts(dec, 2))
        names = exports.evaluators
        pairwise = {f"{names[r]}–{names[t]}": hits for (r, t), (hits, _) in pairwise_agreement(dec).items()}
    integrity = tuple(_integrity(e, shown) for e in exports.exports)
    incomplete = [
        f"evaluator {e.evaluator}: {len(e.incomplete)} of {len(order)} items not accepted" for e in exports.exports
    ]
    groups = [[ev] for ev in exports.evaluators] + ([list(exports.evaluators)] if len(exports.evaluators) > 1 else [])
    labels = tuple(x for g in groups if (x := label_agreement(exports, shown, g)) is not None)
    return AgreementReport(
        labels=labels if exports.kind == "audit" else (),
        packet_id=exports.packet_id,
        kind=exports.kind,
        items=len(order),
        conditions=sum(len(v) for v in shown.conditions.values()),
        evaluators=exports.evaluators,
        pairs=tuple(pairs),
        integrity=integrity,
        all_conditions=all_conditions,
        all_unanimous=unanimous_count,
        fleiss=fleiss,
        all_pairwise=pairwise,
        notes=tuple(exports.notes) + tuple(n for n, e in zip(incomplete, exports.exports) if e.incomplete),
    )


def _strata(a, b, items: Sequence[str], shown: Shown, audit: AuditDir) -> dict:  # noqa: ANN001 - Export pair
    fields = [
        "n",
        "source",
        *[f for f in audit.manifest.get("params", {}).get("strata", []) if f not in ("n", "source")],
    ]
    out: dict[str, dict[str, tuple[Rate | None, Rate]]] = {}
    for fld in fields:
        groups: dict[str, list[str]] = {}
        for i in items:
            pair = shown.pairs[i]
            value = {
                "n": str(pair.n),
                "source": pair.source,
                "label": pair.label,
                "grade": str(pair.grade),
                **pair.stratum,
            }[fld]
            groups.setdefault(value, []).append(i)
        cells = {}
        for value in sorted(groups):
            members = groups[value]
            agree = [a.items[i][c].answer == b.items[i][c].answer for i in members for c in shown.conditions[i]]
            grade = None
            if shown.full:
                same = [
                    sum(r.answer for r in a.items[i].values()) == sum(r.answer for r in b.items[i].values())
                    for i in members
                ]
                grade = Rate(int(sum(same)), len(members))
            cells[value] = (grade, Rate(int(sum(agree)), len(agree)))
        out[fld] = cells
    return out


def _integrity(export, shown: Shown) -> Integrity:  # noqa: ANN001 - an Export
    responses = [r for item in export.items.values() for r in item.values()]
    pages = [(cid, p, q) for item in export.items.values() for cid, r in item.items() for p, q in r.evidence]
    return Integrity(
        evaluator=export.evaluator,
        completed=len(export.items),
        positive=sum(r.answer for r in responses),
        negative=sum(not r.answer for r in responses),
        pages=len(pages),
        quotes_valid=len(pages),
        quotes_verbatim=sum(verbatim(q, shown.texts[(cid, p)]) for cid, p, q in pages),
    )


def score(audit_dir: str | os.PathLike[str], exports: Sequence[str | os.PathLike[str]]) -> AgreementReport:
    """Read, validate and score the exports of one packet of the audit at ``audit_dir``."""
    audit = AuditDir.open(audit_dir)
    return score_exports(audit, read_exports(exports, audit))
