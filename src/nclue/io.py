"""Atomic file writes, JSON Lines with line-numbered errors, and SHA-256 helpers.

Every file nclue writes goes through :func:`atomic_write_bytes`: the bytes go to a
temporary file in the same directory, are fsync'd, and the file is renamed over the
target, so a reader (or a rerun after SIGKILL) sees either the old file or the new one,
never a torn one.
"""

from __future__ import annotations

import codecs
import errno
import fcntl
import hashlib
import json
import math
import os
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from nclue.errors import NclueError, where


def _read_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# mkstemp creates files 0600; released files get the usual mode (0666 minus the umask).
_UMASK = _read_umask()


def cache_home() -> Path:
    """nclue's cache folder: ``$NCLUE_CACHE``, else ``~/.cache/nclue`` (models, run columns)."""
    return Path(os.environ.get("NCLUE_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "nclue"))


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temp file + fsync + rename + dir fsync).

    The one write path of nclue. A target that exists and is not a regular file (a folder, a
    FIFO, a device such as ``/dev/null``, a socket) is refused rather than replaced, and every
    ``OSError`` (full disk, read-only or forbidden folder, ``ulimit -f``, a name over 255 bytes)
    becomes one :class:`NclueError` naming the path, the reason and the fix; the old file, if
    any, is left as it was.
    """
    target = Path(path)
    refuse_special_target(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name[:200]}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise write_error(target, exc) from None
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
        fsync_dir(target.parent)
    except OSError as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise write_error(target, exc) from None
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def refuse_special_target(target: Path) -> None:
    """Raise :class:`NclueError` when ``target`` exists and is not a regular file (it would be replaced)."""
    try:
        mode = target.stat().st_mode
    except OSError:
        return
    kinds = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a device"))
    kinds += ((stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"))
    for test, kind in kinds:
        if test(mode):
            raise NclueError(
                f"{target}: is {kind}, not a regular file; nclue writes files by replacing them, so give a file path"
            )


_WRITE_REASONS = {
    errno.ENOSPC: ("the disk is full", "free some space and run it again"),
    errno.EDQUOT: ("the disk quota is used up", "free some space and run it again"),
    errno.EROFS: ("the file system is read-only", "write to another folder"),
    errno.EACCES: ("permission denied", "write to a folder you may write to"),
    errno.EPERM: ("permission denied", "write to a folder you may write to"),
    errno.EFBIG: ("the file size limit was reached (ulimit -f)", "raise the limit or write less"),
    errno.ENAMETOOLONG: ("the file name is too long (255 bytes at most)", "choose a shorter name"),
    errno.ENOTDIR: ("a folder on the path is a file", "choose another path"),
}


def write_error(target: Path, exc: OSError) -> NclueError:
    """One line for an ``OSError`` while writing ``target``: the path, the reason, that nothing was replaced, the fix."""
    reason, fix = _WRITE_REASONS.get(exc.errno or -1, ((exc.strerror or str(exc)).lower(), "check the path"))
    return NclueError(f"{target}: cannot write it ({reason}); nothing was replaced — {fix}")


def fsync_dir(directory: str | os.PathLike[str]) -> None:
    """fsync a directory so a completed rename survives a crash."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write UTF-8 ``text`` to ``path`` atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))


def dumps_canonical(obj: Any) -> str:
    """JSON with sorted keys and no NaN: the byte-stable form used for hashing and files."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def write_jsonl(path: str | os.PathLike[str], rows: Iterable[Any]) -> int:
    """Atomically write ``rows`` as JSON Lines (canonical key order); return the row count."""
    lines = [dumps_canonical(row) for row in rows]
    atomic_write_text(path, "".join(line + "\n" for line in lines))
    return len(lines)


def write_json(path: str | os.PathLike[str], obj: Any) -> None:
    """Atomically write an indented, key-sorted JSON document."""
    atomic_write_text(path, json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n")


def _reject_constant(token: str) -> float:
    raise ValueError(f"{token} is not a valid number")


def iter_text_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` for every line of a UTF-8 text file (newline removed).

    A byte-order mark at the start of the file (what some Windows editors write) is dropped, so
    the first record keeps its id. Raises :class:`NclueError` naming ``path:line`` for a line that
    is not valid UTF-8 and for a file that cannot be read, instead of a ``UnicodeDecodeError``
    without a location.
    """
    p = Path(path)
    if not p.is_file():
        raise NclueError(f"{p}: file not found" + (" (it is a directory)" if p.is_dir() else ""))
    try:
        with p.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                if number == 1 and raw.startswith(codecs.BOM_UTF8):
                    raw = raw[len(codecs.BOM_UTF8) :]
                try:
                    yield number, raw.decode("utf-8").rstrip("\r\n")
                except UnicodeDecodeError as exc:
                    raise NclueError(
                        f"{where(p, number)}: not UTF-8 text (byte {exc.start + 1} of the line is {raw[exc.start]:#04x}); "
                        "nclue reads UTF-8 files — re-encode the file"
                    ) from None
    except OSError as exc:
        raise NclueError(f"{p}: cannot read ({exc.strerror or exc})") from None


def iter_jsonl(path: str | os.PathLike[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line of a JSON Lines file.

    Raises :class:`NclueError` naming ``path:line`` for a line that is not UTF-8, not a JSON
    object, or that contains NaN/Infinity.
    """
    p = Path(path)
    for number, raw in iter_text_lines(p):
        text = raw.strip()
        if not text:
            continue
        try:
            obj = json.loads(text, parse_constant=_reject_constant)
        except (json.JSONDecodeError, ValueError, RecursionError) as exc:
            reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
            raise NclueError(f"{where(p, number)}: malformed JSON ({reason}); fix or remove this line") from None
        if not isinstance(obj, dict):
            raise NclueError(f"{where(p, number)}: expected a JSON object, got {type(obj).__name__}")
        yield number, obj


def json_kind(obj: Any) -> str:
    """What ``obj`` is in JSON terms, for error messages: ``an object``, ``an array``, ``a number``, …"""
    if isinstance(obj, dict):
        return "an object"
    if isinstance(obj, list):
        return "an array"
    if isinstance(obj, str):
        return "a string"
    if isinstance(obj, bool):
        return f"the literal {str(obj).lower()}"
    return "null" if obj is None else "a number"


def read_json(path: str | os.PathLike[str], fix: str, what: str = "JSON file") -> Any:
    """The parsed JSON document at ``path`` (a leading UTF-8 byte-order mark is ignored).

    Every way the file can be unusable raises one :class:`NclueError` line naming ``path``, what
    is wrong and ``fix`` (e.g. ``"re-run `nclue coverage freeze`"``): missing or unreadable, not
    UTF-8, not complete JSON (truncated, garbage, NaN/Infinity), or nested deeper than Python's
    parser can follow (its ``RecursionError``). ``what`` names the file in the "not a complete …"
    message.
    """
    p = Path(path)
    try:
        text = p.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise NclueError(f"{p}: file not found; {fix}") from None
    except UnicodeDecodeError as exc:
        raise NclueError(f"{p}: not UTF-8 text (byte {exc.start + 1} of the file); {fix}") from None
    except OSError as exc:
        raise NclueError(f"{p}: cannot read ({exc.strerror or exc}); {fix}") from None
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise NclueError(
            f"{p}: not a complete {what} ({exc.msg} at line {exc.lineno} column {exc.colno}); {fix}"
        ) from None
    except RecursionError:
        raise NclueError(f"{p}: JSON nested too deeply to read (beyond Python's recursion limit); {fix}") from None
    except ValueError as exc:
        raise NclueError(f"{p}: not valid JSON ({exc}); {fix}") from None


def read_json_object(path: str | os.PathLike[str], fix: str, what: str = "JSON file") -> dict[str, Any]:
    """The JSON object at ``path``: :func:`read_json`, and one error line (ending with ``fix``)
    when the document is an array, a string, a number or a literal instead of an object."""
    obj = read_json(path, fix, what)
    if not isinstance(obj, dict):
        raise NclueError(f"{path}: expected a JSON object, got {json_kind(obj)}; {fix}")
    return obj


def read_json_record(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """A build record that may be absent or stale: the JSON object at ``path``, else ``None``.

    For manifests whose absence or damage only means "rebuild" (an index's ``manifest.json``);
    a file a user must fix is read with :func:`read_json_object`, which names the problem.
    """
    try:
        obj = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return obj if isinstance(obj, dict) else None


def json_safe(obj: Any) -> Any:
    """Replace NaN/inf floats by ``None`` recursively (files are written with ``allow_nan=False``)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [json_safe(v) for v in obj]
    return obj


def require_finite(value: Any, path: object, line: int, field: str) -> float:
    """Return ``value`` as a finite float or raise an error naming file, line and field."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise NclueError(f"{where(path, line)}: field '{field}' is not a number: {value!r}") from None
    if not math.isfinite(number):
        raise NclueError(f"{where(path, line)}: field '{field}' is {value!r}; scores must be finite numbers")
    return number


def sha256_file(path: str | os.PathLike[str], chunk: int = 1 << 20) -> str:
    """Hex SHA-256 of a file's bytes, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def sha256_bytes(data: bytes) -> str:
    """Hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


LOCK_FILE = ".nclue.lock"


def writable_dir(path: str | os.PathLike[str], what: str) -> Path:
    """Create ``path`` (and parents) if needed and check that nclue can write there.

    Raises :class:`NclueError` naming the folder and the fix for a read-only file system, a
    missing permission or a path that is a file — instead of a traceback from deep inside a
    writer.
    """
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise NclueError(f"{target}: exists and is not a folder; choose another {what}")
    try:
        target.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".write-check.", dir=target)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        reason = "the file system is read-only" if exc.errno == errno.EROFS else (exc.strerror or str(exc)).lower()
        raise NclueError(f"{target}: cannot write the {what} here ({reason}); choose a writable folder") from None
    return target


@contextmanager
def exclusive_lock(directory: str | os.PathLike[str], what: str) -> Iterator[None]:
    """Hold ``DIR/.nclue.lock`` while one job writes ``directory``; a second job is refused.

    The lock is an ``fcntl.flock`` on the file, released by the kernel when the process
    ends (also after SIGKILL), so a killed job never leaves a stale lock behind.
    """
    folder = Path(directory)
    path = folder / LOCK_FILE
    handle = open(path, "a+")  # noqa: SIM115 - held for the whole block
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            raise NclueError(
                f"{folder}: another nclue job is writing this {what} ({holder}); wait for it to finish, "
                "or write to another folder"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}")
        handle.flush()
        yield
    finally:
        handle.close()


def json_leaves(
    obj: Any, path: tuple[str, ...] = (), index: Callable[[int], str] = str
) -> Iterator[tuple[tuple[str, ...], Any]]:
    """``(path, value)`` of every leaf of a JSON document (dict keys sorted; a list item's path
    part is ``index(i)``), for comparing a recorded document with a recomputed one cell by cell."""
    if isinstance(obj, dict):
        for key in sorted(obj):
            yield from json_leaves(obj[key], (*path, str(key)), index)
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            yield from json_leaves(value, (*path, index(i)), index)
    else:
        yield path, obj
