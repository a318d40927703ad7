"""The one progress protocol: stage announcements, the old booleans, refusals, and the renderer."""

from __future__ import annotations

import warnings

import pytest

from nclue.errors import NclueError
from nclue.progress import progress_bars, quiet, stage_advance


def test_a_stage_is_announced_with_its_total_then_advanced() -> None:
    events: list[tuple] = []
    advance = stage_advance(lambda *event: events.append(event), "pages", 3)
    advance(2)
    advance(1)
    assert events == [("pages", 0, 3), ("pages", 2, None), ("pages", 1, None)]


@pytest.mark.parametrize("old", [True, False])
def test_an_old_boolean_warns_and_is_quiet(old: bool) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        advance = stage_advance(old, "pages", 3)  # type: ignore[arg-type]
        advance(3)
    assert [w.category for w in caught] == [DeprecationWarning]
    assert f"progress={old} is deprecated" in str(caught[0].message)


def test_a_value_that_is_not_a_callback_is_refused_by_name() -> None:
    with pytest.raises(NclueError, match="progress"):
        stage_advance("yes", "pages", 3)  # type: ignore[arg-type]


def test_bars_skip_an_empty_stage_and_draw_a_real_one(capsys: pytest.CaptureFixture[str]) -> None:
    with progress_bars() as bar:
        stage_advance(bar, "documents", 0)
    assert capsys.readouterr().err == ""  # a resumed job: nothing to do, no 0/0 bar
    with progress_bars() as bar:
        stage_advance(bar, "documents", 2)(2)
    assert "documents" in capsys.readouterr().err
    with progress_bars(enabled=False) as bar:
        assert bar is quiet
