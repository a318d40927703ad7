"""The matrix spec: which systems run, on which query forms, and which contrasts to test.

A spec is a TOML file (the default ships as ``nclue/matrix/default.toml``)::

    depth = 100                 # documents per ranking
    k = 10                      # metric cut-off
    form = "raw"                # default query rendering: the ranked one (omitted: clean_v2)
    baselines = "ranked"        # baseline.* controls in Table S1 ("ranked") or in S1d ("apart")

    [headline]                  # optional: the pair Table S1i decomposes
    base = "bm25.and"
    variant = "rrf(bm25.and, dense.joint(ptop3))"

    [[run]]
    system = "bm25.decompose(distinct)"
    block = "decomposition"     # standalone | decomposition | fusion | reranking | baseline
    forms = ["raw", "clean_v2", "natural"]   # optional: query-form controls

    [[contrast]]                # a displayed base→variant pair (docs/statistics.md#blockwise-max-t)
    name = "Lexical composition"
    base = "bm25.joint"
    variants = ["bm25.decompose(min)", "bm25.decompose(distinct)"]

Every tried variant of a contrast forms one max-|T| block; the displayed variant is the
block's best n-Clue Score endpoint, so its p-value pays for the selection.

``[headline]`` is the one pair the report follows through Table S1i (connected components, on
this benchmark and on SourceShift): ``variant`` against ``base``, both runs of the matrix. It is
a decomposition, not a test, so it need not be a ``[[contrast]]`` and adds nothing to the
max-|T| family; without it the first contrast's base and displayed variant are used.

Run names are the system name for the default form and ``system@form`` otherwise; they are
also the run file stems, the table rows and the CLI strings. The shipped specs run on ``raw``, the
rendering of the paper's CrossPage matrix; a spec without ``form`` runs on
:data:`nclue.types.DEFAULT_FORM`, the rendering of a single ``nclue run``.

``baselines`` places the query-blind controls ``baseline.random`` and ``baseline.frequency_prior``
in the report: ``ranked`` (the default, the paper's Tables S1a–S1c) ranks them in Table S1 with the
fair systems, category BL; ``apart`` lists them unranked in Table S1d with the construction-fact
oracles (SPEC §5.6). Either way they are never a contrast, a headline or a study's system.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from nclue.errors import NclueError
from nclue.types import DEFAULT_FORM, FORMS

DEFAULT_DEPTH = 100
"""Ranking depth of every run when the spec names none."""
DEFAULT_K = 10
"""Metric cut-off when the spec names none."""
BASELINES_RANKED = "ranked"
"""Layout: the ``baseline.*`` controls ranked in Table S1 with the fair systems (the paper's Tables S1a–S1c)."""
BASELINES_APART = "apart"
"""Layout: the ``baseline.*`` controls unranked in Table S1d with the oracles (SPEC §5.6)."""
BASELINE_LAYOUTS = (BASELINES_RANKED, BASELINES_APART)
DEFAULT_BASELINES = BASELINES_RANKED
"""The baseline layout when the spec names none."""

BLOCKS: dict[str, str] = {
    "standalone": "RET",
    "decomposition": "DEC",
    "fusion": "FUS",
    "reranking": "RER",
    "baseline": "BL",
    "query-form": "QF",
}


@dataclass(frozen=True)
class RunSpec:
    """One ranking to produce: a system on one query form."""

    system: str
    form: str
    block: str
    default_form: str

    @property
    def name(self) -> str:
        """Run name / file stem: ``system`` on the default form, ``system@form`` otherwise."""
        return self.system if self.form == self.default_form else f"{self.system}@{self.form}"

    @property
    def category(self) -> str:
        """Seed category code (RET, DEC, FUS, RER, BL, QF); off-default forms are QF."""
        return "QF" if self.form != self.default_form else BLOCKS[self.block]


@dataclass(frozen=True)
class ContrastSpec:
    """A displayed contrast: one base and every tried variant of the same operation."""

    name: str
    base: str
    variants: tuple[str, ...]


@dataclass(frozen=True)
class MatrixSpec:
    """A parsed matrix spec."""

    depth: int
    k: int
    form: str
    runs: tuple[RunSpec, ...]
    contrasts: tuple[ContrastSpec, ...]
    source: str
    sha256: str
    headline: tuple[str, str] | None = None
    """``(base, variant)``: the pair Table S1i decomposes (``None``: the spec names none)."""
    baselines: str = DEFAULT_BASELINES
    """Where the report puts the ``baseline.*`` controls: one of :data:`BASELINE_LAYOUTS`."""

    @property
    def run_names(self) -> list[str]:
        """Every run name, in spec order."""
        return [r.name for r in self.runs]


def default_matrix_path(name: str = "default") -> Path:
    """Path of a shipped matrix: ``default`` (``nclue/matrix/default.toml``) or ``shift`` (SourceShift)."""
    return Path(str(resources.files("nclue.matrix") / f"{name}.toml"))


def _value(table: dict, key: str, kind: type, default: object, where: str) -> object:
    """``table[key]`` (or ``default``) if it is a ``kind``; otherwise one error naming the key and the type wanted.

    ``bool`` is not accepted as an ``int`` (TOML ``true`` is not a depth).
    """
    value = table.get(key, default)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        wanted = {int: "an integer", str: "a string", list: "a list"}[kind]
        raise NclueError(f"{where}: {key!r} must be {wanted}, got {value!r} ({type(value).__name__})")
    return value


def _strings(table: dict, key: str, default: list[str], where: str) -> list[str]:
    """``table[key]`` as a list of strings; a bare string is refused rather than split into characters."""
    values = table.get(key, default)
    if isinstance(values, str):
        raise NclueError(f"{where}: {key!r} must be a list of strings, e.g. {key} = [{values!r}]")
    values = _value(table, key, list, default, where)
    bad = [v for v in values if not isinstance(v, str)]
    if bad:
        raise NclueError(f"{where}: {key!r} must list strings only; {bad[0]!r} is a {type(bad[0]).__name__}")
    return values


def _tables(doc: dict, key: str, where: str) -> list[dict]:
    """The ``[[key]]`` array of tables of ``doc`` (empty when absent)."""
    entries = doc.get(key, [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise NclueError(f"{where}: {key!r} must be an array of tables ([[{key}]] sections), got {entries!r}")
    return entries


def _run_specs(p: Path, doc: dict, form: str) -> list[RunSpec]:
    """The ``[[run]]`` entries of ``doc``, one :class:`RunSpec` per system and form, validated."""
    from nclue.systems.names import parse_name

    runs: list[RunSpec] = []
    for i, entry in enumerate(_tables(doc, "run", str(p)), start=1):
        where = f"{p}: [[run]] #{i}"
        extra = set(entry) - {"system", "block", "forms"}
        if extra or "system" not in entry:
            raise NclueError(f"{where}: needs 'system' (and optional 'block', 'forms'); unexpected {sorted(extra)}")
        system = _value(entry, "system", str, None, where)
        try:
            parse_name(system)
        except NclueError as exc:
            raise NclueError(f"{where}: {exc}") from None
        block = _value(entry, "block", str, "standalone", where)
        if block not in BLOCKS or block == "query-form":
            raise NclueError(
                f"{where}: block {block!r} is not one of {', '.join(b for b in BLOCKS if b != 'query-form')}"
            )
        forms = _strings(entry, "forms", [form], where)
        for f in forms:
            if f not in FORMS and f != "paraphrase":
                raise NclueError(f"{where}: form {f!r} is not one of {', '.join(FORMS)} or paraphrase")
        runs.extend(RunSpec(system=system, form=f, block=block, default_form=form) for f in forms)
    return runs


def _contrast_specs(p: Path, doc: dict, names: list[str]) -> list[ContrastSpec]:
    """The ``[[contrast]]`` entries of ``doc``; every base and variant must be a run of the matrix."""
    contrasts: list[ContrastSpec] = []
    for i, entry in enumerate(_tables(doc, "contrast", str(p)), start=1):
        where = f"{p}: [[contrast]] #{i}"
        if set(entry) != {"name", "base", "variants"}:
            raise NclueError(f"{where}: needs exactly 'name', 'base' and a non-empty 'variants' list")
        name = _value(entry, "name", str, None, where)
        base = _value(entry, "base", str, None, where)
        variants = _strings(entry, "variants", [], where)
        if not variants:
            raise NclueError(f"{where}: 'variants' is empty; list at least one run to compare with {base!r}")
        missing = [s for s in [base, *variants] if s not in names]
        if missing:
            raise NclueError(f"{where}: {', '.join(missing)} not among the matrix runs; add a [[run]] for each")
        contrasts.append(ContrastSpec(name=name, base=base, variants=tuple(variants)))
    return contrasts


def _headline(p: Path, doc: dict, names: list[str]) -> tuple[str, str] | None:
    """The optional ``[headline]`` table: ``base`` and ``variant``, two different runs of the matrix."""
    if "headline" not in doc:
        return None
    table = doc["headline"]
    where = f"{p}: [headline]"
    if not isinstance(table, dict) or set(table) != {"base", "variant"}:
        raise NclueError(f'{where} must be a table with exactly base = "RUN" and variant = "RUN"')
    pair = (_value(table, "base", str, None, where), _value(table, "variant", str, None, where))
    unknown = [n for n in pair if n not in names]
    if unknown:
        raise NclueError(f"{where}: {', '.join(map(repr, unknown))} is not a run of this matrix; add a [[run]] for it")
    if pair[0] == pair[1]:
        raise NclueError(f"{where}: base and variant are the same run {pair[0]!r}")
    return pair


def load_matrix(path: str | Path | None = None) -> MatrixSpec:
    """Parse and validate a matrix TOML; ``None`` loads the shipped default, a bare name (``shift``) a shipped one.

    Raises :class:`NclueError` naming the file and the offending entry for unknown keys, values
    of the wrong type, malformed system names, unknown blocks, forms or baseline layouts, duplicate
    runs, contrasts or a ``[headline]`` that name runs not in the matrix.
    """
    p = Path(path) if path is not None else default_matrix_path()
    if not p.is_file() and path is not None and p.suffix == "" and default_matrix_path(p.name).is_file():
        p = default_matrix_path(p.name)
    if not p.is_file():
        raise NclueError(f"{p}: matrix spec not found")
    raw = p.read_bytes()
    try:
        doc = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise NclueError(f"{p}: not valid TOML ({exc})") from None
    unknown = set(doc) - {"depth", "k", "form", "baselines", "headline", "run", "contrast"}
    if unknown:
        raise NclueError(
            f"{p}: unknown top-level keys {sorted(unknown)}; allowed: depth, k, form, baselines, headline, run, contrast"
        )
    depth = _value(doc, "depth", int, DEFAULT_DEPTH, str(p))
    k = _value(doc, "k", int, DEFAULT_K, str(p))
    form = _value(doc, "form", str, DEFAULT_FORM, str(p))
    if form not in FORMS:
        raise NclueError(f"{p}: form {form!r} is not one of {', '.join(FORMS)}")
    baselines = _value(doc, "baselines", str, DEFAULT_BASELINES, str(p))
    if baselines not in BASELINE_LAYOUTS:
        raise NclueError(f"{p}: baselines {baselines!r} is not one of {', '.join(BASELINE_LAYOUTS)}")
    if not 1 <= k <= depth:
        raise NclueError(f"{p}: need 1 <= k <= depth, got k={k}, depth={depth}")
    runs = _run_specs(p, doc, form)
    names = [r.name for r in runs]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise NclueError(f"{p}: runs listed twice: {', '.join(dupes)}")
    contrasts = _contrast_specs(p, doc, names)
    return MatrixSpec(
        depth=depth,
        k=k,
        form=form,
        runs=tuple(runs),
        contrasts=tuple(contrasts),
        source=str(p),
        sha256=hashlib.sha256(raw).hexdigest(),
        headline=_headline(p, doc, names),
        baselines=baselines,
    )
