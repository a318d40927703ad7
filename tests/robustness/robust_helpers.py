"""Checks shared by the robustness probes."""

from __future__ import annotations


def assert_clean(result, code: int, *fragments: str) -> str:  # noqa: ANN001 - click Result
    """The command failed (or not) the way a user should see it: exit ``code``, no traceback,
    every fragment in the output, and at most one ``error:`` line. Returns the output."""
    out = result.output
    assert result.exit_code == code, out
    assert "Traceback" not in out, out
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert out.count("error:") <= 1, out
    for fragment in fragments:
        assert fragment in out, f"{fragment!r} not in {out!r}"
    return out
