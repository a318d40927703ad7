"""The audit directory: manifest, administrator key, packets and their pools (``docs/audit.md#files``).

::

    AUDIT/
      audit.json                  kind (audit | challenge), ids, the benchmark's path and file hashes, parameters
      key.jsonl                   administrator key: one row per pair (qid, doc_id, grade, label, pages, stratum, role)
      packets/<id>.json           exactly what a packet shows an evaluator (its HTML embeds this, nothing more)
      packets/<id>.admin.json     per item: the pair, and per condition the candidate pages with routes and ranks
      repair.json, decisions.json, qrels.vN.jsonl, qrels.vN.tsv   written by repair and adjudicate

Nothing an evaluator sees carries a query id, document id, grade, label, route or rank: those
live only in ``key.jsonl`` and the ``*.admin.json`` files.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from nclue.audit.audit_params import FORMAT_VERSION, KINDS
from nclue.errors import NclueError, where
from nclue.io import dumps_canonical, iter_jsonl, read_json_object, sha256_bytes, sha256_file, write_json, write_jsonl
from nclue.release import Release

MANIFEST = "audit.json"
KEY = "key.jsonl"
PACKETS = "packets"
AUDIT_FORMAT = "nclue-audit"
_VERSION = re.compile(r"\.v(\d+)$")
RESTORE = (
    "restore it from a backup of the audit directory, or re-create the audit with `nclue audit sample` and the "
    "same options"
)
REBUILD_PACKET = (
    "restore it from a backup of the audit directory, or rebuild the packet with the command and options that "
    "built it (`nclue audit packet` with the same options rebuilds the same blind packet)"
)


@dataclass(frozen=True)
class PairKey:
    """One audited query–document pair, as the administrator knows it.

    ``pages`` are the construction evidence pages per condition (the qrels' ``pages``);
    ``stratum`` maps each stratification field to this pair's value; ``role`` is ``sample``
    (stratified audit), ``target`` or ``control`` (targeted challenge).
    """

    pair: str
    qid: str
    doc_id: str
    grade: int
    label: str
    conditions: tuple[str, ...]
    aliases: Mapping[str, tuple[str, ...]]
    need: str
    source: str
    stratum: Mapping[str, str] = field(default_factory=dict)
    pages: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    role: str = "sample"

    @property
    def n(self) -> int:
        """Number of conditions of the query."""
        return len(self.conditions)

    def to_json(self) -> dict:
        """The ``key.jsonl`` row."""
        return {
            "pair": self.pair,
            "qid": self.qid,
            "doc_id": self.doc_id,
            "grade": self.grade,
            "label": self.label,
            "conditions": list(self.conditions),
            "aliases": {c: list(a) for c, a in self.aliases.items()},
            "need": self.need,
            "source": self.source,
            "stratum": dict(self.stratum),
            "pages": {c: list(p) for c, p in self.pages.items()},
            "role": self.role,
        }

    @classmethod
    def from_json(cls, row: dict, loc: str) -> PairKey:
        """Read a ``key.jsonl`` row; an error names the line."""
        try:
            return cls(
                pair=str(row["pair"]),
                qid=str(row["qid"]),
                doc_id=str(row["doc_id"]),
                grade=int(row["grade"]),
                label=str(row["label"]),
                conditions=tuple(row["conditions"]),
                aliases={c: tuple(a) for c, a in row["aliases"].items()},
                need=str(row["need"]),
                source=str(row["source"]),
                stratum=dict(row["stratum"]),
                pages={c: tuple(int(p) for p in v) for c, v in row["pages"].items()},
                role=str(row["role"]),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise NclueError(f"{loc}: damaged key row ({exc!r}); rebuild the audit with `nclue audit sample`") from None


def _listed(names: list[str], noun: str, shown: int = 5) -> str:
    """``item a, b, c`` / ``items a, …, e and 7 more``: the first ``shown`` names of a list, counted."""
    head = ", ".join(names[:shown])
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return f"{noun}{'s' if len(names) > 1 else ''} {head}{more}"


def qrels_version(path: Path) -> int:
    """The version number of a qrels file: ``N`` for ``qrels.vN.jsonl``, else 1 (a release's own qrels)."""
    match = _VERSION.search(Path(path).name.removesuffix(".jsonl").removesuffix(".tsv"))
    return int(match.group(1)) if match else 1


@dataclass
class AuditDir:
    """An audit directory (see the module docstring)."""

    root: Path
    manifest: dict[str, Any]
    pairs: tuple[PairKey, ...]

    @property
    def kind(self) -> str:
        """``audit`` (stratified sample) or ``challenge`` (targeted)."""
        return str(self.manifest["kind"])

    @property
    def audit_id(self) -> str:
        """Stable id of the audit (hash of its benchmark files, parameters and pairs)."""
        return str(self.manifest["audit_id"])

    @cached_property
    def by_pair(self) -> dict[str, PairKey]:
        """``pair`` id → key row."""
        return {p.pair: p for p in self.pairs}

    @classmethod
    def create(cls, root: str | os.PathLike[str], manifest: dict[str, Any], pairs: Iterable[PairKey]) -> AuditDir:
        """Write ``audit.json`` and ``key.jsonl`` (refusing to overwrite another audit's answers)."""
        base = Path(root)
        rows = tuple(pairs)
        audit_id = sha256_bytes(dumps_canonical({"m": manifest, "pairs": [p.to_json() for p in rows]}).encode())[:16]
        full = {"format": AUDIT_FORMAT, "format_version": FORMAT_VERSION, **manifest, "audit_id": audit_id}
        if (base / MANIFEST).is_file():
            old = read_json_object(base / MANIFEST, "choose a new audit directory")
            if old.get("audit_id") != audit_id and any((base / PACKETS).glob("*.json")):
                raise NclueError(
                    f"{base}: holds another audit ({old.get('audit_id')}) with packets; choose a new directory "
                    "— its packets would no longer match their exports"
                )
        base.mkdir(parents=True, exist_ok=True)
        write_jsonl(base / KEY, (p.to_json() for p in rows))
        write_json(base / MANIFEST, full)
        return cls(base, full, rows)

    @classmethod
    def open(cls, root: str | os.PathLike[str]) -> AuditDir:
        """Open an audit directory written by ``nclue audit sample`` or ``nclue audit challenge``."""
        base = Path(root)
        path = base / MANIFEST
        if not path.is_file():
            raise NclueError(
                f"{base}: not an audit directory (no {MANIFEST}); create one with `nclue audit sample BENCH -o {base}`"
            )
        manifest = read_json_object(path, RESTORE)
        if manifest.get("format") != AUDIT_FORMAT or manifest.get("kind") not in KINDS:
            raise NclueError(f"{path}: not an nclue audit manifest")
        pairs = tuple(PairKey.from_json(row, where(base / KEY, line)) for line, row in iter_jsonl(base / KEY))
        return cls(base, manifest, pairs)

    # --- the benchmark ------------------------------------------------------------------------

    def release(self, bench: str | os.PathLike[str] | None = None) -> Release:
        """The audited benchmark with the qrels the audit started from; refuses if they changed."""
        root = Path(bench) if bench is not None else Path(self.manifest["bench"])
        qrels = Path(self.manifest["qrels"])
        if not qrels.is_absolute():
            qrels = root / qrels
        if not qrels.is_file():
            raise NclueError(
                f"{qrels}: the qrels this audit started from are gone; pass --bench with the release directory"
            )
        if sha256_file(qrels) != self.manifest["qrels_sha256"]:
            raise NclueError(
                f"{qrels}: changed since the audit was sampled (SHA-256 differs); audit the new qrels with a new "
                "`nclue audit sample`"
            )
        return Release.open(root, qrels=qrels)

    @property
    def base_version(self) -> int:
        """Version number of the qrels the audit started from."""
        return int(self.manifest["qrels_version"])

    # --- packets ------------------------------------------------------------------------------

    def packet_paths(self, packet_id: str) -> tuple[Path, Path]:
        """``(visible payload, administrator file)`` of a packet."""
        return self.root / PACKETS / f"{packet_id}.json", self.root / PACKETS / f"{packet_id}.admin.json"

    def save_packet(self, payload: dict[str, Any], admin: dict[str, Any]) -> None:
        """Store a packet's payload and its administrator file (pools, routes, ranks, pairs)."""
        visible, private = self.packet_paths(payload["packet_id"])
        write_json(visible, payload)
        write_json(private, admin)

    def packet_ids(self) -> list[str]:
        """Ids of every packet built for this audit, sorted."""
        folder = self.root / PACKETS
        if not folder.is_dir():
            return []
        return sorted(p.name.removesuffix(".json") for p in folder.glob("*.json") if not p.name.endswith(".admin.json"))

    def load_packet(self, packet_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """The stored payload and administrator file of ``packet_id``, checked against each other and
        against ``key.jsonl`` (every item of the payload has its pair in both)."""
        visible, private = self.packet_paths(packet_id)
        if not visible.is_file():
            known = ", ".join(self.packet_ids()) or "none"
            raise NclueError(
                f"{self.root}: no packet {packet_id!r} in this audit (packets: {known}); the export belongs to "
                "another audit or packet"
            )
        if not private.is_file():
            raise NclueError(
                f"{private}: the administrator file of packet {packet_id} is missing, so its items cannot be "
                f"matched to their query-document pairs and the packet cannot be scored; {REBUILD_PACKET}"
            )
        payload, admin = read_json_object(visible, REBUILD_PACKET), read_json_object(private, REBUILD_PACKET)
        self._check_packet(packet_id, payload, admin)
        return payload, admin

    def _check_packet(self, packet_id: str, payload: dict[str, Any], admin: dict[str, Any]) -> None:
        """Refuse a packet whose administrator file or key rows lost items (returns nothing when whole)."""
        visible, private = self.packet_paths(packet_id)
        items, rows = payload.get("items"), admin.get("items")
        if not isinstance(items, list):
            raise NclueError(f"{visible}: damaged (no 'items' list); {REBUILD_PACKET}")
        if not isinstance(rows, dict):
            raise NclueError(f"{private}: damaged (no 'items' table); {REBUILD_PACKET}")
        shown = [str(item.get("id")) if isinstance(item, dict) else "?" for item in items]
        unmapped = [
            iid for iid in shown if not isinstance(rows.get(iid), dict) or not isinstance(rows[iid].get("pair"), str)
        ]
        if unmapped:
            raise NclueError(
                f"{private}: no pair for {_listed(unmapped, 'item')} of packet {packet_id}; the packet cannot be "
                f"scored — {REBUILD_PACKET}"
            )
        lost = [f"{iid} (pair {rows[iid]['pair']})" for iid in shown if rows[iid]["pair"] not in self.by_pair]
        if lost:
            raise NclueError(
                f"{self.root / KEY}: rows lost — {_listed(lost, 'item')} of packet {packet_id} "
                f"{'has' if len(lost) == 1 else 'have'} no key row, so the packet cannot be scored; {RESTORE}"
            )

    def packets_of_kind(self, *kinds: str) -> list[str]:
        """Ids of the stored packets of the given kinds."""
        out = []
        for pid in self.packet_ids():
            payload, _ = self.load_packet(pid)
            if payload.get("kind") in kinds:
                out.append(pid)
        return out
