"""Table S2a: the LLM paraphrase probe (``docs/report.md#paraphrase-probe``).

For every system with a run on the frozen ``paraphrase`` form (``SYSTEM@paraphrase``, read
from the release's ``paraphrases.jsonl``, ``docs/construction.md#paraphrases``), the n-Clue
Score on the raw rendering, on the default rendering and on the paraphrase, and the paired
difference paraphrase − reference (the raw run when there is one, else the default form)
with its exact-family bootstrap interval and family sign-flip p. A probe, not a lexical-free
benchmark: a paraphrase may keep condition words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from nclue.io import json_safe
from nclue.scoring import Benchmark, Scores, metric_matrix
from nclue.stats import bootstrap_ci, paired_randomization
from nclue.tables import Table, fmt_ci, fmt_p, fmt_pp

PARAPHRASE = "paraphrase"


@dataclass(frozen=True)
class ProbeRow:
    """One system of Table S2a (pp; p a probability)."""

    system: str
    raw: float | None
    default: float | None
    paraphrase: float
    reference: str
    delta: float
    ci: tuple[float, float]
    p_family: float

    def to_json(self) -> dict:
        return json_safe({k: getattr(self, k) for k in self.__dataclass_fields__})


def probe_rows(
    bench: Benchmark,
    scores: Scores,
    runs_by_system: Mapping[str, Mapping[str, str]],
    default_form: str,
    n_boot: int,
    n_draws: int,
    seed: int,
) -> list[ProbeRow]:
    """Rows for every system with a paraphrase run; ``runs_by_system[system][form]`` is a run name."""
    primary = metric_matrix(scores, "n_clue_score")
    out = []
    for system, forms in runs_by_system.items():
        if PARAPHRASE not in forms:
            continue
        reference = "raw" if "raw" in forms else default_form
        if reference not in forms:
            continue
        para, ref = scores.index(forms[PARAPHRASE]), scores.index(forms[reference])
        diff = primary[para] - primary[ref]
        ci = bootstrap_ci(diff[None, :], bench.family, n_boot, seed)[0]
        p = paired_randomization(diff[None, :], bench.family, n_draws, seed)[0]
        mean = {f: 100.0 * float(primary[scores.index(r)].mean()) for f, r in forms.items()}
        out.append(
            ProbeRow(
                system=system,
                raw=mean.get("raw"),
                default=mean.get(default_form),
                paraphrase=mean[PARAPHRASE],
                reference=reference,
                delta=100.0 * float(diff.mean()),
                ci=(100.0 * float(ci[0]), 100.0 * float(ci[1])),
                p_family=float(p),
            )
        )
    return out


def probe_table(rows: Sequence[ProbeRow], default_form: str) -> Table:
    """Table S2a in the seed's layout (Raw, Paraphrase, Δ) plus the interval and p, and the default
    form's column when the default form is not raw (a second raw column would repeat the first)."""
    with_default = default_form != "raw"

    def cells(r: ProbeRow) -> tuple[str, ...]:
        default = (fmt_pp(r.default),) if with_default else ()
        return (
            r.system,
            fmt_pp(r.raw),
            *default,
            fmt_pp(r.paraphrase),
            f"{fmt_pp(r.delta, sign=True)} vs {r.reference}",
            fmt_ci(r.ci, 1, sign=True),
            fmt_p(r.p_family),
        )

    headers = ("System", "Raw Score", *((f"{default_form} Score",) if with_default else ()), "Paraphrase Score")
    return Table(
        (*headers, "Δ", "Exact-family 95% CI", "p (family)"),
        tuple(cells(r) for r in rows),
        "l" + "r" * (len(headers) - 1) + "rcr",
        "n-Clue Score@10 on the frozen LLM paraphrases against the verbatim renderings (pp); Δ is "
        "paraphrase − raw (the default form where no raw run exists). A probe: paraphrases may keep condition words.",
        number="S2a",
    )
