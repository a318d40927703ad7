"""Figures for scorecards and contrasts (matplotlib, Agg backend), saved as PNG and PDF.

* :func:`scorecard_plot`: runs ranked by a metric, point estimates with horizontal
  percentile-CI bars (seed Figure 2a).
* :func:`delta_plane_plot`: each paired contrast as a point at (ΔGold Hit, Δn-Clue
  Score) with optional CI whiskers on the n-Clue axis, quadrant lines at zero and the
  diagonal ΔScore = ΔHit (seed Figure 2b).
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from nclue.io import atomic_write_bytes  # noqa: E402
from nclue.scoring.results import Contrast, RunSummary  # noqa: E402


def save_figure(fig, stem: Path) -> list[Path]:  # noqa: ANN001 - matplotlib Figure
    """Write ``stem.png`` (200 dpi) and ``stem.pdf`` atomically; close the figure."""
    paths = []
    for ext, kwargs in (("png", {"dpi": 200}), ("pdf", {})):
        buffer = io.BytesIO()
        meta = {"Software": None} if ext == "png" else {"Creator": None, "Producer": None, "CreationDate": None}
        fig.savefig(buffer, format=ext, bbox_inches="tight", metadata=meta, **kwargs)
        path = stem.with_suffix(f".{ext}")
        atomic_write_bytes(path, buffer.getvalue())
        paths.append(path)
    plt.close(fig)
    return paths


def scorecard_plot(
    summary: Mapping[str, RunSummary],
    stem: str | Path,
    metric: str = "n_clue_score",
    label: str = "n-Clue Score@10 (pp)",
) -> list[Path]:
    """Ranked horizontal scorecard of ``summary`` (``Scorecard.runs`` or a subset) with CIs.

    Returns the written paths (``stem.png``, ``stem.pdf``).
    """
    items = sorted(summary.items(), key=lambda kv: (-getattr(kv[1], metric), kv[0]))
    names = [k for k, _ in items]
    values = [getattr(v, metric) for _, v in items]
    height = max(2.0, 0.28 * len(names) + 0.8)
    fig, ax = plt.subplots(figsize=(6.4, height))
    ys = list(range(len(names)))[::-1]
    cis = [v.ci.get(metric) for _, v in items]
    if all(ci is not None for ci in cis) and cis:
        lo = [val - ci[0] for val, ci in zip(values, cis)]
        hi = [ci[1] - val for val, ci in zip(values, cis)]
        ax.errorbar(values, ys, xerr=[lo, hi], fmt="o", color="#1f4e79", ecolor="#7f9fbf", capsize=2, markersize=4)
    else:
        ax.plot(values, ys, "o", color="#1f4e79", markersize=4)
    ax.set_yticks(ys, names, fontsize=8)
    ax.set_xlabel(label)
    ax.grid(axis="x", alpha=0.3)
    ax.set_xlim(left=0)
    return save_figure(fig, Path(stem))


def delta_plane_plot(
    contrasts: Mapping[str, Contrast],
    stem: str | Path,
    labels: Sequence[str] | None = None,
) -> list[Path]:
    """Gold-Hit versus n-Clue-Score delta plane of paired contrasts (``Comparison.contrasts``)."""
    names = list(contrasts)
    labels = list(labels) if labels is not None else names
    d_hit = [contrasts[n].delta["gold_hit"] for n in names]
    d_score = [contrasts[n].delta["n_clue_score"] for n in names]
    fig, ax = plt.subplots(figsize=(5.6, 4.6))
    extents = [abs(v) for v in d_hit + d_score]
    extents += [abs(b) for n in names for b in (contrasts[n].ci.get("n_clue_score") or [])]
    span = max(extents + [1.0]) * 1.15
    ax.axhline(0, color="0.6", lw=0.8)
    ax.axvline(0, color="0.6", lw=0.8)
    ax.plot([-span, span], [-span, span], ls="--", color="0.75", lw=0.8, label="ΔScore = ΔHit")
    for name, x, y, text in zip(names, d_hit, d_score, labels):
        ci = contrasts[name].ci.get("n_clue_score")
        if ci is not None:
            ax.errorbar(
                [x],
                [y],
                yerr=[[y - ci[0]], [ci[1] - y]],
                fmt="o",
                color="#8b1a1a",
                ecolor="#d9a0a0",
                capsize=2,
                markersize=4,
            )
        else:
            ax.plot([x], [y], "o", color="#8b1a1a", markersize=4)
        ax.annotate(text, (x, y), xytext=(4, 4), textcoords="offset points", fontsize=7)
    ax.set_xlim(-span, span)
    ax.set_ylim(-span, span)
    ax.set_xlabel("Δ Gold Hit@10 (pp)")
    ax.set_ylabel("Δ n-Clue Score@10 (pp)")
    ax.legend(loc="lower right", fontsize=7, frameon=False)
    ax.grid(alpha=0.25)
    return save_figure(fig, Path(stem))


def source_delta_plot(rows: Sequence[Mapping[str, object]], stem: str | Path) -> list[Path]:
    """Forest plot of per-source contrasts: one panel per contrast, Δ with its interval per source
    (an open marker where a source has too few gold families for one), the pooled Δ as a dashed line; a
    source whose Δ has the other sign is drawn in red."""
    contrasts = list(dict.fromkeys(str(r["contrast"]) for r in rows))
    fig, axes = plt.subplots(
        len(contrasts),
        1,
        figsize=(6.4, 0.5 + sum(0.32 * sum(r["contrast"] == c for r in rows) + 0.5 for c in contrasts)),
        squeeze=False,
    )
    for ax, contrast in zip(axes[:, 0], contrasts):
        mine = [r for r in rows if r["contrast"] == contrast]
        ys = list(range(len(mine)))[::-1]
        for y, r in zip(ys, mine):
            colour = "#b22222" if r["reverses"] else "#1f4e79"
            delta = float(r["delta"])  # type: ignore[arg-type]
            if r["ci"] is None:  # too few gold families: no interval, an open marker
                ax.plot([delta], [y], "o", mfc="white", color=colour, markersize=4)
                continue
            lo, hi = r["ci"]  # type: ignore[misc]
            ax.errorbar([delta], [y], xerr=[[delta - lo], [hi - delta]], fmt="o", color=colour, capsize=2, markersize=4)
        ax.axvline(0, color="0.6", lw=0.8)
        ax.axvline(float(mine[0]["pooled"]), color="0.3", lw=0.8, ls="--")  # type: ignore[arg-type]
        ax.set_yticks(ys, [f"{r['source']} ({r['queries']})" for r in mine], fontsize=7)
        ax.set_title(contrast, fontsize=8, loc="left")
        ax.grid(axis="x", alpha=0.3)
    axes[-1, 0].set_xlabel("Δ n-Clue Score@10 (pp), per source; dashed: pooled")
    fig.tight_layout()
    return save_figure(fig, Path(stem))
