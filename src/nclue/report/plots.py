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


def _save(fig, stem: Path) -> list[Path]:  # noqa: ANN001 - matplotlib Figure
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
    return _save(fig, Path(stem))


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
    return _save(fig, Path(stem))
