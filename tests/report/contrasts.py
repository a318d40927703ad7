"""A hand-made :class:`~nclue.scoring.results.Contrast` for the figure and table tests."""

from __future__ import annotations

from nclue.scoring.results import Contrast


def make_contrast(
    d_hit: float, d_score: float, ci: tuple[float, float] | None = None, variant: str = "variant"
) -> Contrast:
    """``variant − base`` with the given ΔGold Hit and Δn-Clue Score (and its interval); every other field neutral."""
    return Contrast(
        variant,
        "base",
        {"gold_hit": d_hit, "n_clue_score": d_score},
        {"n_clue_score": ci} if ci else {},
        0.5,
        0.5,
        0.5,
        10,
        0.0,
        (0.0, 0.0, 0.0),
        (0.0, 0.0, 0.0),
        {"1": 0.0, "2": 0.0, "3": 0.0},
    )
