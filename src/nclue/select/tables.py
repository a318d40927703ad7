"""R03 tables in Markdown and LaTeX: results, paired effects, per-task cases.

Layouts follow the seed: one results row per selection (means over tasks, lost/gained summed),
one effects row per contrast (difference [95% bootstrap interval]), and per task and method a
case table ``Rank / ID | Document | Mean grade | Agreed requirements (one-based) | New
requirements at rank``.
"""

from __future__ import annotations

from typing import Literal

from nclue.select.bootstrap import Interval

Format = Literal["md", "tex"]

LABELS: dict[str, str] = {
    "dense": "Dense",
    "coverage": "Fixed coverage",
    "gated": "Gated coverage (ours)",
    "oracle": "Labeled oracle — diagnostic",
}
RESULT_HEADER = ("Selection", "nDCG@5", "Agreed coverage@5", "Label redundancy", "Mean positive pair cosine",
                 "Docs with no agreed obligation", "Unique obligations lost / gained vs dense")
EFFECT_HEADER = ("Exploratory paired effect", "nDCG difference [95% bootstrap interval]",
                 "Coverage difference [95% bootstrap interval]")
CASE_HEADER = ("Rank / ID", "Document", "Mean grade", "Agreed requirements (one-based)", "New requirements at rank")
_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
        "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def label(method: str) -> str:
    """Display name of a method (the name itself when unknown)."""
    return LABELS.get(method, method)


def tex_escape(text: str) -> str:
    """Escape LaTeX special characters."""
    return "".join(_TEX.get(ch, ch) for ch in text)


def render(header: tuple[str, ...], rows: list[tuple[str, ...]], fmt: Format) -> str:
    """A pipe table (``md``) or a ``tabular`` (``tex``) with a booktabs rule set."""
    if fmt == "md":
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
        return "\n".join(lines) + "\n"
    spec = "l" + "r" * (len(header) - 1)
    body = [r"\begin{tabular}{" + spec + "}", r"\toprule", " & ".join(tex_escape(h) for h in header) + r" \\",
            r"\midrule"]
    body += [" & ".join(tex_escape(cell) for cell in row) + r" \\" for row in rows]
    body += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(body) + "\n"


def results_table(summaries: dict[str, dict[str, float]], fmt: Format = "md") -> str:
    """One row per method (in dict order) from :func:`nclue.select.metrics.summarise` outputs."""
    rows = [(label(name), f"{s['ndcg']:.4f}", f"{s['coverage']:.4f}", f"{s['redundancy']:.4f}",
             f"{s['pair_cosine']:.4f}", f"{s['no_obligation']:.4f}", f"{int(s['lost'])} / {int(s['gained'])}")
            for name, s in summaries.items()]
    return render(RESULT_HEADER, rows, fmt)


def _interval(iv: Interval) -> str:
    return f"{iv.estimate:+.4f} [{iv.low:+.4f}, {iv.high:+.4f}]"


def effects_table(effects: dict[tuple[str, str], dict[str, Interval]], fmt: Format = "md") -> str:
    """One row per contrast ``(a, b)`` named ``a-minus-b`` with nDCG and coverage intervals."""
    rows = [(f"{a}-minus-{b}", _interval(iv["ndcg"]), _interval(iv["coverage"])) for (a, b), iv in effects.items()]
    return render(EFFECT_HEADER, rows, fmt)


def _numbers(values: list[int]) -> str:
    return ", ".join(str(v) for v in values) if values else "None"


def case_rows(ranking: list[str], titles: dict[str, str], grades: dict[str, float],
              agreed: dict[str, list[int]]) -> list[tuple[str, ...]]:
    """Rows of one case table: rank / ID, title, mean grade, agreed and newly covered requirements.

    A title equal to its path-like ID is shortened to the ID's last ``/`` part.
    """
    seen: set[int] = set()
    rows = []
    for rank, doc_id in enumerate(ranking, start=1):
        reqs = agreed.get(doc_id, [])
        new = [r for r in reqs if r not in seen]
        seen.update(reqs)
        title = titles.get(doc_id, doc_id)
        if title == doc_id:  # ID-only titles (the benchmark adapter's): show the last path part
            title = doc_id.rsplit("/", 1)[-1]
        rows.append((f"{rank} / {doc_id}", title, f"{grades.get(doc_id, 0.0):g}",
                     _numbers(reqs), _numbers(new)))
    return rows


def case_table(ranking: list[str], titles: dict[str, str], grades: dict[str, float],
               agreed: dict[str, list[int]], fmt: Format = "md") -> str:
    """The seed's per-task case table for one ranking."""
    return render(CASE_HEADER, case_rows(ranking, titles, grades, agreed), fmt)
