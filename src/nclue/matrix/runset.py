"""A run folder, typed: the one reader of ``RUN_DIR/matrix.json`` (as :class:`nclue.release.Release` is for releases).

``nclue run --matrix`` writes ``matrix.json`` (:mod:`nclue.matrix.runner`): the spec's cut-off
``k``, default query ``form`` and ``baselines`` layout, the declared contrasts and the spec's
``headline`` pair, and per run its system, form, block, category, spec hash, input fingerprints,
library versions, wall seconds and file hashes.
:meth:`RunSet.open` reads it once and every study, report and the demo take what they need from
the :class:`RunSet` — the default form, ``k`` and the baseline layout come from here, not retyped
where they are used. A ``matrix.json`` written before specs had ``baselines`` reads as ``apart``,
the layout its reports were frozen with (:func:`baselines_of`).

A folder without ``matrix.json`` (runs made one at a time with ``nclue run -s``) is a run set too:
every ``*.jsonl`` is a run named by :func:`nclue.runfile.run_name` (``SYSTEM@FORM`` names give the
form), standalone, category ``RET``, on the matrix defaults (baselines ranked), with no contrasts.
``SYSTEM@paraphrase`` run files next to a matrix (``nclue run --form paraphrase``) join it as
query-form runs of their system.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from nclue.errors import NclueError
from nclue.io import read_json_object
from nclue.matrix.spec import BASELINE_LAYOUTS, BASELINES_APART, DEFAULT_BASELINES, DEFAULT_K, load_matrix
from nclue.release import PARAPHRASE
from nclue.runfile import run_name, run_path
from nclue.scoring.compare import Block
from nclue.types import DEFAULT_FORM

MANIFEST = "matrix.json"
HEADLINE = "headline"
"""The ``matrix.json`` key of the spec's headline pair, ``{"base", "variant"}`` (``null``: the spec names none)."""


def read_manifest(directory: str | os.PathLike[str], damaged_ok: bool = False) -> dict[str, Any]:
    """The raw ``matrix.json`` of ``directory`` (``{"runs": {}}`` when there is none).

    A damaged file is refused naming the fix, unless ``damaged_ok`` (the runner, which rewrites it
    and redoes every run).
    """
    path = Path(directory) / MANIFEST
    if not path.is_file():
        return {"runs": {}}
    fix = "rerun `nclue run --matrix` to rewrite it"
    try:
        manifest = read_json_object(path, fix, "matrix manifest")
        if not isinstance(manifest.get("runs", {}), dict):
            raise NclueError(f"{path}: 'runs' is not an object; {fix}")
    except NclueError:
        if damaged_ok:
            return {"runs": {}}
        raise
    return manifest


@dataclass(frozen=True)
class RunEntry:
    """One run of a run folder, as ``matrix.json`` records it."""

    name: str
    system: str
    form: str
    block: str = "standalone"
    category: str = "RET"
    seconds: float = 0.0
    files: Mapping[str, str] = field(default_factory=dict)
    inputs: Mapping[str, str] = field(default_factory=dict)
    recorded: bool = False
    """Whether ``matrix.json`` records this run (a paraphrase file beside it, or a folder without one: not)."""


@dataclass(frozen=True)
class RunSet:
    """The runs of one folder: entries in the manifest's order, the matrix defaults and the declared contrasts."""

    directory: Path
    entries: Mapping[str, RunEntry]
    form: str = DEFAULT_FORM
    k: int = DEFAULT_K
    contrasts: tuple[Block, ...] = ()
    headline: tuple[str, str] | None = None
    """``(base, variant)``: the pair Table S1i decomposes (see :func:`headline_of`); ``None``: the first contrast's."""
    baselines: str = DEFAULT_BASELINES
    """Where the report puts the ``baseline.*`` controls (:data:`nclue.matrix.spec.BASELINE_LAYOUTS`)."""

    @classmethod
    def open(cls, directory: str | os.PathLike[str]) -> RunSet:
        """Read ``directory``'s ``matrix.json`` (or its run files when there is none); see the module docstring."""
        root = Path(directory)
        if not root.is_dir():
            raise NclueError(f"{root}: no such run folder; produce runs with `nclue run --matrix`")
        files = {run_name(p): p for p in sorted(root.glob("*.jsonl"))}
        if not (root / MANIFEST).is_file():
            if not files:
                raise NclueError(f"{root}: no runs (*.jsonl) and no {MANIFEST}; produce runs with `nclue run`")
            entries = {n: _standalone(n) for n in sorted(files)}
            return cls(root, entries, headline=headline_of(root, {}, entries))
        manifest = read_manifest(root)
        spec = manifest.get("spec") or {}
        entries = {}
        for name, raw in manifest.get("runs", {}).items():  # the manifest's order: tables list runs in it
            entries[name] = _entry(root, name, raw, spec.get("form", DEFAULT_FORM))
        systems = {e.system for e in entries.values()}
        for extra in sorted(n for n in files if n.endswith(f"@{PARAPHRASE}")):
            system = extra.rsplit("@", 1)[0]
            if extra not in entries and system in systems:
                entries[extra] = RunEntry(extra, system, PARAPHRASE, "query-form", "QF")
        contrasts = tuple(
            Block(str(c["name"]), str(c["base"]), tuple(str(v) for v in c["variants"]))
            for c in manifest.get("contrasts", [])
        )
        return cls(
            root,
            entries,
            form=str(spec.get("form", DEFAULT_FORM)),
            k=int(spec.get("k", DEFAULT_K)),
            contrasts=contrasts,
            headline=headline_of(root, manifest, entries),
            baselines=baselines_of(root, spec),
        )

    @property
    def names(self) -> list[str]:
        """Every run name, in the manifest's order (sorted for a folder without one)."""
        return list(self.entries)

    def path(self, name: str) -> Path:
        """The JSONL file of run ``name``."""
        return run_path(self.directory, name)

    def fair(self, names: Iterable[str] | None = None) -> list[str]:
        """The runs (of ``names``, default all) on the default query form: the ones ranked against each other."""
        chosen = self.names if names is None else list(names)
        return [n for n in chosen if self.entries[n].form == self.form]

    def by_form(self) -> dict[str, dict[str, str]]:
        """``{system: {form: run name}}``: each system's run on every rendering it ran on (a fresh copy)."""
        return {system: dict(forms) for system, forms in self._forms.items()}

    def run_of(self, system: str, form: str) -> str | None:
        """The run of ``system`` on ``form``, if the folder has one."""
        return self._forms.get(system, {}).get(form)

    @cached_property
    def _forms(self) -> dict[str, dict[str, str]]:
        out: dict[str, dict[str, str]] = {}
        for entry in self.entries.values():
            out.setdefault(entry.system, {})[entry.form] = entry.name
        return out

    def seconds(self) -> dict[str, float]:
        """Wall seconds each recorded run took when it was last produced."""
        return {n: e.seconds for n, e in self.entries.items() if e.recorded}


def headline_of(root: Path, manifest: Mapping[str, Any], runs: Iterable[str]) -> tuple[str, str] | None:
    """The ``(base, variant)`` pair Table S1i decomposes, from a run folder's manifest and its ``runs``.

    * ``matrix.json`` records the spec's ``[headline]``: that pair, or ``None`` while one of its
      runs is not recorded yet (a matrix interrupted before producing it); a malformed one is a
      damaged manifest, refused;
    * it records ``headline: null`` (the spec names none): ``None``, the first declared contrast;
    * it has no ``headline`` key (written before specs had one) or there is no ``matrix.json``:
      the package default spec's pair when both runs are here (fusion − BM25, the pair these
      folders were reported on), else ``None``.
    """
    ran = set(runs)
    if HEADLINE not in manifest:
        default = load_matrix().headline
        return default if default is not None and set(default) <= ran else None
    recorded = manifest[HEADLINE]
    if recorded is None:
        return None
    shaped = isinstance(recorded, Mapping) and set(recorded) == {"base", "variant"}
    pair = (recorded["base"], recorded["variant"]) if shaped else (None, None)
    if not all(isinstance(n, str) for n in pair) or pair[0] == pair[1]:
        raise NclueError(
            f"{root / MANIFEST}: headline {recorded!r} is not a base and a different variant run; "
            "rerun `nclue run --matrix` to rewrite the manifest"
        )
    return pair if set(pair) <= ran else None


def baselines_of(root: Path, spec: Mapping[str, Any]) -> str:
    """The baseline layout a run folder's ``matrix.json`` records in its ``spec`` record.

    A record without the key was written before specs had one, when every report listed the
    ``baseline.*`` controls apart: ``apart``, so those reports still reproduce. A value that is
    not a layout is a damaged manifest, refused.
    """
    layout = spec.get("baselines", BASELINES_APART)
    if layout not in BASELINE_LAYOUTS:
        raise NclueError(
            f"{root / MANIFEST}: spec baselines {layout!r} is not one of {', '.join(BASELINE_LAYOUTS)}; "
            "rerun `nclue run --matrix` to rewrite the manifest"
        )
    return layout


def _standalone(name: str) -> RunEntry:
    parts = name.split("@")
    return RunEntry(name, parts[0], parts[1] if len(parts) > 1 else DEFAULT_FORM)


def _entry(root: Path, name: str, raw: object, default_form: str) -> RunEntry:
    """One ``runs`` record of ``matrix.json``, checked."""
    if not isinstance(raw, dict) or not isinstance(raw.get("system"), str):
        raise NclueError(
            f"{root / MANIFEST}: run {name!r} has no system; rerun `nclue run --matrix` to rewrite the manifest"
        )
    return RunEntry(
        name=name,
        system=raw["system"],
        form=str(raw.get("form", default_form)),
        block=str(raw.get("block", "standalone")),
        category=str(raw.get("category", "RET")),
        seconds=float(raw.get("seconds") or 0.0),
        files=dict(raw.get("files") or {}),
        inputs=dict(raw.get("inputs") or {}),
        recorded=True,
    )
