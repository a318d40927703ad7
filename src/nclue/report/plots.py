"""Figures for scorecards and contrasts (matplotlib, Agg backend), saved as PNG and PDF.

* :func:`scorecard_plot`: runs ranked by a metric, point estimates with horizontal
  percentile-CI bars (seed Figure 2a).
* :func:`delta_plane_plot`: each paired contrast as a point at (ΔGold Hit, Δn-Clue
  Score) with optional CI whiskers on the n-Clue axis, quadrant lines at zero and the
  diagonal ΔScore = ΔHit (seed Figure 2b); :func:`place_labels` sets the contrast labels
  so that none overlaps another label or a point, with leader lines where a label moved away.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.text import Text  # noqa: E402
from matplotlib.transforms import Bbox  # noqa: E402

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


MARKER_SIZE = 4.0
"""Diameter of a delta-plane point (points)."""
LABEL_FONT = 7.0
LABEL_PAD = 2.0
"""Free space (points) that :func:`place_labels` keeps around every label."""
LABEL_STEP = 3.0
LEADER_AFTER = 6.0
"""A label set more than this (points) away from its marker gets a leader line."""
_ANGLES = np.deg2rad(45.0 + 22.5 * np.arange(16))


def delta_plane_plot(
    contrasts: Mapping[str, Contrast],
    stem: str | Path,
    labels: Sequence[str] | None = None,
) -> list[Path]:
    """Gold-Hit versus n-Clue-Score delta plane of paired contrasts (``Comparison.contrasts``).

    Returns the written paths (``stem.png``, ``stem.pdf``); the figure is :func:`delta_plane_figure`.
    """
    return save_figure(delta_plane_figure(contrasts, labels), Path(stem))


def delta_plane_figure(contrasts: Mapping[str, Contrast], labels: Sequence[str] | None = None) -> Figure:
    """The open delta-plane figure: one point per contrast with its n-Clue CI whisker, quadrant lines,
    the diagonal ΔScore = ΔHit, and the labels (``labels`` or the contrast keys) placed by :func:`place_labels`."""
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
    whiskers = []
    for name, x, y in zip(names, d_hit, d_score):
        ci = contrasts[name].ci.get("n_clue_score")
        if ci is not None:
            ax.errorbar([x], [y], yerr=[[y - ci[0]], [ci[1] - y]], fmt="none", ecolor="#d9a0a0", capsize=2)
            whiskers.append(((x, ci[0]), (x, ci[1])))
    ax.plot(d_hit, d_score, "o", color="#8b1a1a", markersize=MARKER_SIZE, zorder=3, linestyle="none")
    ax.set_xlim(-span, span)
    ax.set_ylim(-span, span)
    ax.set_xlabel("Δ Gold Hit@10 (pp)")
    ax.set_ylabel("Δ n-Clue Score@10 (pp)")
    ax.legend(loc="lower right", fontsize=7, frameon=False)
    ax.grid(alpha=0.25)
    place_labels(ax, list(zip(d_hit, d_score)), labels, whiskers)
    return fig


def place_labels(
    ax,  # noqa: ANN001 - matplotlib Axes
    points: Sequence[tuple[float, float]],
    texts: Sequence[str],
    avoid: Sequence[tuple[tuple[float, float], tuple[float, float]]] = (),
    fontsize: float = LABEL_FONT,
) -> list[Text]:
    """Label each of ``points`` (data coordinates) so that no label overlaps another label, a point
    marker, the legend or the axes frame; returns the label ``Text`` artists in the order of ``points``.

    Greedy and deterministic, in display space at the figure's size: the most crowded point is
    labelled first, and each label takes the cheapest free spot on rings of growing radius
    (steps of :data:`LABEL_STEP` points, 16 directions) around its marker. The cost is the
    distance, plus penalties for covering one of the ``avoid`` rectangles (two corners in data
    coordinates, e.g. CI whiskers), for a leader line that crosses a label or marker, and for
    covering an earlier leader. A label further than :data:`LEADER_AFTER` points from its
    marker is joined to it by a thin leader line (``gid="leader"``). Each label is anchored by
    its side facing the marker, so that side stays in place when the figure is drawn at another
    resolution.

    Written here rather than taken from adjustText: adjustText (1.4) moves labels iteratively
    and guarantees no separation — on 15 contrasts clustered near the origin it left 2 label
    overlaps and 6 labels covering points, which is the case this figure has.
    """
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    px = fig.dpi / 72.0
    pad, radius = LABEL_PAD * px, MARKER_SIZE / 2 * px
    centres = ax.transData.transform(np.asarray(points, dtype=float).reshape(-1, 2))
    frame = ax.get_window_extent(renderer)
    markers = np.column_stack([centres - radius - pad, centres + radius + pad])
    walls = [markers]
    legend = ax.get_legend()
    if legend is not None:
        walls.append(_boxes([legend.get_window_extent(renderer)], pad))
    soft = np.array(
        [np.concatenate([np.minimum(*ends), np.maximum(*ends)]) for ends in map(ax.transData.transform, avoid)]
    ).reshape(-1, 4)
    artists = [
        ax.text(x, y, t, fontsize=fontsize, ha="left", va="bottom", zorder=4) for (x, y), t in zip(points, texts)
    ]
    sizes = np.array([[b.width, b.height] for b in (a.get_window_extent(renderer) for a in artists)]).reshape(-1, 2)
    rings = np.arange(radius + pad, np.hypot(frame.width, frame.height), LABEL_STEP * px)
    r = np.repeat(rings, len(_ANGLES))
    ux, uy = np.tile(np.cos(_ANGLES), len(rings)), np.tile(np.sin(_ANGLES), len(rings))
    rank = np.tile(np.arange(len(_ANGLES)), len(rings)) * 0.01
    steps = np.linspace(0.0, 1.0, int(rings[-1] / (2 * LABEL_PAD * px)) + 2)  # finer than any padded label
    near = np.linalg.norm(centres[:, None] - centres[None], axis=-1) < 40 * px
    placed = np.empty((0, 4))
    leaders: list[np.ndarray] = []
    for i in sorted(range(len(artists)), key=lambda k: (-int(near[k].sum()), k)):
        (cx, cy), (w, h) = centres[i], sizes[i]
        x0, y0 = cx + r * ux - w * (1 - ux) / 2, cy + r * uy - h * (1 - uy) / 2
        boxes = np.column_stack([x0, y0, x0 + w, y0 + h])
        grown = boxes + np.array([-pad, -pad, pad, pad])
        outside = (
            (grown[:, 0] < frame.x0) | (grown[:, 1] < frame.y0) | (grown[:, 2] > frame.x1) | (grown[:, 3] > frame.y1)
        )
        hard = outside + _overlaps(grown, np.vstack([placed, *walls])).sum(axis=1)
        nearest = np.column_stack([np.clip(cx, boxes[:, 0], boxes[:, 2]), np.clip(cy, boxes[:, 1], boxes[:, 3])])
        line = steps[None, :, None] * (nearest - centres[i])[:, None] + centres[i]
        others = np.delete(markers, i, axis=0)
        crossing = _inside(line, np.vstack([placed, others])).any(axis=1).sum(axis=1)
        covering = sum((_inside(seg, boxes).any(axis=0) for seg in leaders), np.zeros(len(boxes)))
        cost = r + rank + 30 * px * _overlaps(grown, soft).sum(axis=1) + 1000 * px * (crossing + covering)
        best = int(np.argmin(cost + 1e9 * hard))
        # anchor the label by its side facing the marker, so that side stays put at any resolution
        ha = "left" if ux[best] > 0.3 else "right" if ux[best] < -0.3 else "center"
        va = "bottom" if uy[best] > 0.3 else "top" if uy[best] < -0.3 else "center"
        left, bottom, right, top = boxes[best]
        anchor = (
            {"left": left, "right": right, "center": (left + right) / 2}[ha],
            {"bottom": bottom, "top": top, "center": (bottom + top) / 2}[va],
        )
        artists[i].set_position(tuple(ax.transData.inverted().transform(anchor)))
        artists[i].set_horizontalalignment(ha)
        artists[i].set_verticalalignment(va)
        placed = np.vstack([placed, grown[best]])
        gap = nearest[best] - centres[i]
        if np.hypot(*gap) > LEADER_AFTER * px:
            start = centres[i] + gap / np.hypot(*gap) * radius
            ends = ax.transData.inverted().transform(np.vstack([start, nearest[best]]))
            ax.plot(ends[:, 0], ends[:, 1], color="0.45", lw=0.5, zorder=2, gid="leader")
            leaders.append(line[best])
    return artists


def label_boxes(fig: Figure) -> list[Bbox]:
    """The display-space window extents of the text labels drawn in ``fig``'s axes (legends and tick labels excluded)."""
    renderer = fig.canvas.get_renderer()
    return [t.get_window_extent(renderer) for ax in fig.axes for t in ax.texts if t.get_text()]


def _boxes(bboxes: Sequence[Bbox], pad: float) -> np.ndarray:
    return np.array([[b.x0 - pad, b.y0 - pad, b.x1 + pad, b.y1 + pad] for b in bboxes]).reshape(-1, 4)


def _overlaps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``(len(a), len(b))`` booleans: whether boxes ``[x0, y0, x1, y1]`` of ``a`` and ``b`` intersect."""
    return (
        (a[:, None, 0] < b[None, :, 2])
        & (b[None, :, 0] < a[:, None, 2])
        & (a[:, None, 1] < b[None, :, 3])
        & (b[None, :, 1] < a[:, None, 3])
    )


def _inside(xy: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """``(..., len(boxes))`` booleans: whether each point of ``xy (..., 2)`` lies strictly inside each box."""
    x, y = xy[..., 0, None], xy[..., 1, None]
    return (boxes[:, 0] < x) & (x < boxes[:, 2]) & (boxes[:, 1] < y) & (y < boxes[:, 3])


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
