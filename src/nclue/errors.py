"""The one exception type nclue raises for bad input.

Every user-facing failure is a :class:`NclueError` whose message names the file, the
record (line number or id) and what to do. The CLI prints the message on one line and
exits with :attr:`NclueError.exit_code` instead of showing a traceback.
"""

from __future__ import annotations


class NclueError(Exception):
    """A clear, actionable error about the user's input or environment.

    ``exit_code`` is 2 for wrong arguments or unusable input (the CLI convention for
    usage errors) and 1 for a run that could not produce anything.
    """

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def where(path: object, line: int | None = None) -> str:
    """Format a location for error messages: ``path`` or ``path:line``."""
    return f"{path}:{line}" if line is not None else f"{path}"


def require_seed(value: object, what: str = "seed") -> int:
    """``value`` as a seed: a non-negative integer (what NumPy's generators accept), else an
    :class:`NclueError` naming ``what`` and the value."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise NclueError(f"{what} must be a non-negative integer, got {value!r}")
    return value
