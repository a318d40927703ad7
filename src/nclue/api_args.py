"""Argument checks for the public Python API (:mod:`nclue.api`).

Each check returns the argument, normalised (a :class:`~pathlib.Path`, a plain ``int``, a
``list[str]``), or raises :class:`~nclue.errors.NclueError` with one line that names the
argument, what it must be, the type and value received and an example of a right value::

    k must be an integer of at least 1, got str '5'; e.g. k=10

``bool`` is not an integer here (``k=True`` is refused); NumPy integers are. A bare string
where a list of strings is expected is refused rather than split into characters.
"""

from __future__ import annotations

import numbers
import os
import reprlib
from collections.abc import Sequence
from pathlib import Path
from typing import TypeGuard

from nclue.errors import NclueError

_SHORT = reprlib.Repr()
_SHORT.maxstring = 40
_SHORT.maxother = 40


def received(value: object) -> str:
    """``value``'s type and a short one-line repr, e.g. ``str '5'`` (``None`` alone)."""
    if value is None:
        return "None"
    shown = " ".join(_SHORT.repr(value).split())
    return f"{type(value).__name__} {shown}"


def refuse(name: str, wanted: str, value: object, example: str) -> NclueError:
    """The error for argument ``name``: what it must be, what came and a right value."""
    return NclueError(f"{name} must be {wanted}, got {received(value)}; e.g. {name}={example}")


def path_arg(name: str, value: object, example: str = "'coll'") -> Path:
    """``value`` as a :class:`Path`: a non-empty ``str`` or an ``os.PathLike`` of one."""
    text = os.fspath(value) if isinstance(value, (str, os.PathLike)) else None
    if not isinstance(text, str) or not text:
        raise refuse(name, "a path: a non-empty str or os.PathLike such as pathlib.Path", value, example)
    return Path(text)


def optional_path(name: str, value: object, example: str = "'out.jsonl'") -> Path | None:
    """``None``, or ``value`` as a :class:`Path` (:func:`path_arg`)."""
    return None if value is None else path_arg(name, value, example)


def is_int(value: object) -> TypeGuard[numbers.Integral]:
    """Whether ``value`` is an integer: ``int`` or a NumPy integer, but not a ``bool``."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_bool(value: object) -> bool:
    """Whether ``value`` is ``True`` or ``False``: a ``bool`` or a NumPy bool (NumPy is not imported)."""
    kind = type(value)
    return isinstance(value, bool) or (kind.__module__ == "numpy" and kind.__name__ in ("bool", "bool_"))


def int_at_least(name: str, value: object, minimum: int, example: int) -> int:
    """``value`` as a plain ``int`` of at least ``minimum``."""
    if not is_int(value) or int(value) < minimum:
        raise refuse(name, f"an integer of at least {minimum}", value, str(example))
    return int(value)


def positive_int(name: str, value: object, example: int = 10) -> int:
    """``value`` as an ``int`` ≥ 1 (a cutoff, a depth, a number of replicates)."""
    return int_at_least(name, value, 1, example)


def seed_arg(value: object, name: str = "seed") -> int:
    """``value`` as a seed: an integer ≥ 0, the range the command line's ``--seed`` takes."""
    if not is_int(value) or int(value) < 0:
        raise NclueError(f"{name} must be a non-negative integer, got {received(value)}; e.g. {name}=42")
    return int(value)


def bool_arg(name: str, value: object) -> bool:
    """``value`` as a ``bool``: only ``True`` or ``False`` (a NumPy bool too), never a truthy string."""
    if not is_bool(value):
        raise NclueError(f"{name} must be True or False, got {received(value)}; e.g. {name}=True")
    return bool(value)


def optional_bool(name: str, value: object) -> bool | None:
    """``None``, or ``value`` as a ``bool`` (:func:`bool_arg`)."""
    return None if value is None else bool_arg(name, value)


def text_arg(name: str, value: object, example: str) -> str:
    """``value`` itself when it is a ``str``."""
    if not isinstance(value, str):
        raise refuse(name, "a string", value, example)
    return value


def optional_text(name: str, value: object, example: str) -> str | None:
    """``None``, or ``value`` when it is a ``str``."""
    return None if value is None else text_arg(name, value, example)


def choice_arg(name: str, value: object, choices: Sequence[str]) -> str:
    """``value`` when it is one of ``choices`` (strings)."""
    if not isinstance(value, str) or value not in choices:
        raise refuse(name, f"one of {', '.join(map(repr, choices))}", value, repr(choices[0]))
    return value


def text_or_list(name: str, value: object, example: str) -> str | list[str]:
    """``value`` itself when it is a ``str``, else as a ``list[str]`` (:func:`text_list`)."""
    if isinstance(value, str):
        return value
    if not isinstance(value, Sequence) or isinstance(value, (bytes, bytearray)):
        raise refuse(name, "a string or a list of strings", value, example)
    return text_list(name, value, example)


def text_list(name: str, value: object, example: str) -> list[str]:
    """``value`` as a ``list[str]``: a list or tuple of strings; a bare string is refused, not split."""
    if isinstance(value, str):
        raise NclueError(
            f"{name} must be a list of strings, got str {_SHORT.repr(value)}; "
            f"pass a list of strings, e.g. {name}={example}"
        )
    if not isinstance(value, Sequence) or isinstance(value, (bytes, bytearray)):
        raise refuse(name, "a list of strings", value, example)
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise NclueError(f"{name}[{i}] must be a string, got {received(item)}; e.g. {name}={example}")
    return list(value)
