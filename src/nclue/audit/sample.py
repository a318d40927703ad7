"""``nclue audit sample``: a stratified sample of judged query–document pairs (``docs/audit.md#sampling``).

The population is every judged (grade ≥ 1) pair of the release. Pairs are grouped by the
chosen stratification fields (``source`` of the document, ``label``, ``n`` conditions,
``grade``) and the sample size is split across strata:

* ``equal`` (default): every stratum gets the same share, capped at its size; what a capped
  stratum cannot take is shared equally among the others (water-filling), and the last few
  pairs go to the largest strata (ties by stratum name);
* ``proportional``: shares proportional to stratum size, rounded by largest remainder.

Within a stratum, pairs (sorted by ``qid``, ``doc_id``) are drawn without replacement by one
NumPy generator seeded with ``seed``, strata in sorted order, so the sample is a function of
the release and the parameters. Pair ids (``p0001`` …) follow the sorted sample; the packet
shows pairs in a seeded shuffled order under ids derived from the audit id.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from nclue._version import __version__
from nclue.audit.audit_params import ALLOCATIONS, STRATA_FIELDS, SampleParams
from nclue.audit.store import AuditDir, PairKey, qrels_version
from nclue.errors import NclueError
from nclue.io import sha256_file
from nclue.release import Release
from nclue.tables import Table, Tabular
from nclue.types import Judgment, Query


@dataclass(frozen=True)
class SampleSummary(Tabular):
    """Population and sample counts per stratum (``nclue audit sample``)."""

    audit: Path
    audit_id: str
    fields: tuple[str, ...]
    rows: tuple[tuple[tuple[str, ...], int, int, int, int], ...]
    """``(stratum values, population, sampled, sampled gold, sampled partial)``."""

    @property
    def sampled(self) -> int:
        """Total pairs in the sample."""
        return sum(r[2] for r in self.rows)

    def to_json(self) -> dict:
        return {
            "audit": str(self.audit),
            "audit_id": self.audit_id,
            "strata": list(self.fields),
            "rows": [
                {**dict(zip(self.fields, values)), "population": pop, "sampled": s, "gold": g, "partial": p}
                for values, pop, s, g, p in self.rows
            ],
            "sampled": self.sampled,
        }

    def tables(self) -> list[Table]:
        body = [(*values, str(pop), str(s), str(g), str(p)) for values, pop, s, g, p in self.rows]
        totals = [sum(r[i] for r in self.rows) for i in (1, 2, 3, 4)]
        body.append(("All", *([""] * (len(self.fields) - 1)), *map(str, totals)))
        headers = (
            *(f.capitalize() if f != "n" else "n" for f in self.fields),
            "Population",
            "Sampled",
            "Gold",
            "Partial",
        )
        return [
            Table(
                headers,
                tuple(body),
                "l" * len(self.fields) + "rrrr",
                "Stratified audit sample. Counts describe the sampled packet, not the population distribution of qrels.",
            )
        ]


def allocate(sizes: list[int], total: int, allocation: str = "equal") -> list[int]:
    """Split ``total`` draws across strata of ``sizes`` (see the module docstring); never exceeds a size."""
    if allocation not in ALLOCATIONS:
        raise NclueError(f"allocation {allocation!r} is not one of {', '.join(ALLOCATIONS)}")
    total = min(total, sum(sizes))
    if allocation == "proportional":
        exact = np.array(sizes, dtype=np.float64) * total / max(sum(sizes), 1)
        out = np.floor(exact).astype(int)
        order = sorted(range(len(sizes)), key=lambda i: (-(exact[i] - out[i]), -sizes[i], i))
        for i in order[: total - int(out.sum())]:
            out[i] += 1
        return out.tolist()
    out = [0] * len(sizes)
    left = total
    open_ = [i for i in range(len(sizes)) if sizes[i] > 0]
    while left > 0 and open_:
        share = left // len(open_)
        if share == 0:
            for i in sorted(open_, key=lambda i: (-(sizes[i] - out[i]), i))[:left]:
                out[i] += 1
            break
        for i in open_:
            take = min(share, sizes[i] - out[i])
            out[i] += take
            left -= take
        open_ = [i for i in open_ if out[i] < sizes[i]]
    return out


def stratum_of(j: Judgment, query: Query, source: str, fields: tuple[str, ...]) -> tuple[str, ...]:
    """The stratum values of one judged pair."""
    values = {"source": source, "label": j.label, "n": str(query.n), "grade": str(j.grade)}
    return tuple(values[f] for f in fields)


def pair_key(pair: str, j: Judgment, q: Query, source: str, stratum: dict[str, str], role: str) -> PairKey:
    """The administrator key row of a judged pair."""
    return PairKey(
        pair=pair,
        qid=j.qid,
        doc_id=j.doc_id,
        grade=j.grade,
        label=j.label,
        conditions=q.conditions,
        aliases={c: tuple(q.aliases.get(c, ())) or (c,) for c in q.conditions},
        need=q.text("natural"),
        source=source,
        stratum=stratum,
        pages={c: tuple(j.pages.get(c, ())) for c in q.conditions if j.pages and j.pages.get(c)},
        role=role,
    )


def release_manifest(release: Release, kind: str) -> dict:
    """The manifest fields that pin the benchmark an audit starts from."""
    qrels = release.files.get("qrels")
    if qrels is None or release.root is None:
        raise NclueError(f"{release.root}: the release has no qrels to audit; pass a release with qrels.jsonl")
    root = release.root.resolve()
    qpath = qrels.resolve()
    return {
        "kind": kind,
        "bench": str(root),
        "bench_files": release.hashes,
        "qrels": str(qpath.relative_to(root)) if qpath.is_relative_to(root) else str(qpath),
        "qrels_sha256": sha256_file(qpath),
        "qrels_version": qrels_version(qpath),
        "nclue_version": __version__,
    }


EXCLUDE_LEVELS: tuple[str, ...] = ("condition", "pair")


def seen_pairs(audits: Sequence[str | os.PathLike[str]], level: str = "condition") -> tuple[set[tuple], list[str]]:
    """What earlier audits read, and their audit ids.

    ``level="condition"``: every ``(doc_id, condition)`` of their pairs (case-folded);
    ``level="pair"``: every ``(doc_id, frozenset of conditions)`` — the same document with the same
    conditions, whatever the query id.
    """
    if level not in EXCLUDE_LEVELS:
        raise NclueError(f"exclude level {level!r}: choose one of {', '.join(EXCLUDE_LEVELS)}")
    seen: set[tuple] = set()
    ids = []
    for path in audits:
        earlier = AuditDir.open(path)
        ids.append(earlier.audit_id)
        for pair in earlier.pairs:
            if level == "pair":
                seen.add((pair.doc_id, frozenset(c.lower() for c in pair.conditions)))
            else:
                seen.update((pair.doc_id, c.lower()) for c in pair.conditions)
    return seen, ids


def _seen(j: Judgment, query: Query, seen: set[tuple], level: str) -> bool:
    if level == "pair":
        return (j.doc_id, frozenset(c.lower() for c in query.conditions)) in seen
    return any((j.doc_id, c.lower()) in seen for c in query.conditions)


def sample(
    bench: str | os.PathLike[str],
    out: str | os.PathLike[str],
    params: SampleParams = SampleParams(),
    qrels: str | os.PathLike[str] | None = None,
    exclude: Sequence[str | os.PathLike[str]] = (),
    exclude_level: str = "condition",
) -> SampleSummary:
    """Draw the stratified sample of ``bench`` into the audit directory ``out``.

    ``exclude``: earlier audit directories; a pair sharing a document and a condition with any of
    their pairs (``exclude_level="condition"``), or the same document with the same conditions
    (``"pair"``), is left out of the population, so a fresh audit does not re-read what an earlier
    one (for instance the one a rule was tuned on) has read.
    """
    unknown = [f for f in params.strata if f not in STRATA_FIELDS]
    if unknown or len(set(params.strata)) != len(params.strata):
        raise NclueError(
            f"strata {','.join(params.strata)}: use distinct fields among {', '.join(STRATA_FIELDS)} (e.g. source,label,n)"
        )
    if params.pairs < 1:
        raise NclueError(f"--pairs {params.pairs}: sample at least one pair")
    release = Release.open(bench, qrels=qrels, require_qrels=True)
    if not release.judgments:
        raise NclueError(f"{release.files['qrels']}: no judged pairs to audit")
    sources = {d.doc_id: d.source or "unknown" for d in release.corpus}
    queries = {q.qid: q for q in release.queries}
    seen, excluded = seen_pairs(exclude, exclude_level)
    everything = sorted(release.judgments, key=lambda j: (j.qid, j.doc_id))
    judged = [j for j in everything if not _seen(j, queries[j.qid], seen, exclude_level)]
    if not judged:
        raise NclueError(f"{bench}: every judged pair shares a document and a condition with an excluded audit")
    groups: dict[tuple[str, ...], list[Judgment]] = {}
    for j in judged:
        key = stratum_of(j, queries[j.qid], sources.get(j.doc_id, "unknown"), params.strata)
        groups.setdefault(key, []).append(j)
    names = sorted(groups)
    counts = allocate([len(groups[k]) for k in names], params.pairs, params.allocation)
    rng = np.random.default_rng(params.seed)
    chosen: list[tuple[Judgment, tuple[str, ...]]] = []
    for key, take in zip(names, counts):
        members = groups[key]
        picks = sorted(rng.choice(len(members), size=take, replace=False).tolist()) if take else []
        chosen += [(members[i], key) for i in picks]
    chosen.sort(key=lambda jk: (jk[0].qid, jk[0].doc_id))
    pairs = [
        pair_key(
            f"p{i:04d}",
            j,
            queries[j.qid],
            sources.get(j.doc_id, "unknown"),
            dict(zip(params.strata, key)),
            "sample",
        )
        for i, (j, key) in enumerate(chosen, start=1)
    ]
    manifest = {
        **release_manifest(release, "audit"),
        "seed": params.seed,
        "params": {**asdict(params), "strata": list(params.strata)},
        "counts": {"pairs": len(pairs), "conditions": sum(p.n for p in pairs), "population": len(judged)},
        "excluded": {"audits": excluded, "level": exclude_level, "pairs": len(everything) - len(judged)},
    }
    audit = AuditDir.create(out, manifest, pairs)
    by_stratum = Counter(key for _, key in chosen)
    gold = Counter(key for j, key in chosen if j.label == "gold")
    rows = tuple((key, len(groups[key]), by_stratum[key], gold[key], by_stratum[key] - gold[key]) for key in names)
    return SampleSummary(audit.root, audit.audit_id, params.strata, rows)
