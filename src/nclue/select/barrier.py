"""The freeze barrier: judgment and outcome files cannot be read while label-free rankings are made.

``docs/coverage.md#pre-outcome-freeze``. Two layers:

1. **Kernel (Landlock, Linux ≥ 5.13, ``landlock(7)``).** :func:`run_sealed` runs the freeze in a
   fresh (spawned) child process that first restricts itself with :func:`seal_reads`: from then on,
   opening any protected file for reading fails with ``EACCES`` in that process, in every thread it
   starts, and in every process those start. That covers pyarrow's C++ readers, ``mmap``, ctypes
   and ``subprocess`` alike, because the kernel checks the open, whoever asks for it. Landlock
   rules only grant access, so the seal grants reading on everything except the protected files.
   For each directory on the way to a protected file, every entry that is neither protected nor on
   the way to one is granted with everything beneath it. Entries that resolve to a protected
   file, through a symbolic link or as a hard link (same inode), are left out. One consequence: a
   file created *after* the seal directly in such a directory is unreadable in the child, so the
   child gets its own temporary folder, made before the seal.
2. **Process (audit hook, PEP 578).** :func:`judgment_barrier` makes every Python
   ``open``/``os.open`` of a refused file raise :class:`PermissionError`, and refuses to start a
   process, for the duration of a block. It works where Landlock is missing, and it catches what a
   list of files cannot: a path component matching a pattern anywhere on the disk. Defaults are
   :data:`nclue.select.selection_defaults.JUDGMENT_PATTERNS` and the outcome files of
   :data:`nclue.select.selection_defaults.OUTCOME_PATTERNS`. A protected file is caught under any name, by
   device and inode. Audit hooks cannot be removed, so the hook is installed once and does
   nothing while no barrier is active.

Protected files: the ones the caller names, plus every file under the scanned folders (the task
set, the folder around it, the release) whose path matches a pattern. A *copy* of the labels
under an unrelated name and outside those folders is a different file: name it with ``--protect``
or give a pattern for it.
"""

from __future__ import annotations

import ctypes
import fnmatch
import os
import platform
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from nclue.errors import NclueError
from nclue.progress import Advance
from nclue.select.selection_defaults import BARRIER_PATTERNS

_lock = threading.Lock()
_active: list[tuple[tuple[str, ...], frozenset[tuple[int, int]]]] = []
_installed = False
PROCESS_EVENTS = frozenset({"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork"})
"""Audit events that start a process; refused while a barrier is active (a child is outside the hook)."""
SCAN_LIMIT = 50_000
"""Most directory entries :func:`pattern_files` looks at per folder."""


def refusal(target: str, patterns: Sequence[str], protected: frozenset[tuple[int, int]] = frozenset()) -> str | None:
    """Why opening ``target`` is refused under a barrier, or ``None`` (see the module docstring)."""
    given = os.path.abspath(target)
    real = os.path.realpath(target)
    for path in dict.fromkeys((given, real)):
        for part in Path(path).parts:
            low = part.lower()
            for pattern in patterns:
                if fnmatch.fnmatchcase(low, pattern):
                    return f"path component {part!r} matches {pattern!r}"
    if protected:
        try:
            info = os.stat(real)
        except OSError:
            return None
        if (info.st_dev, info.st_ino) in protected:
            return "it is a protected judgment file (the same file under another name)"
    return None


def _audit(event: str, args: tuple) -> None:
    if not _active:
        return
    if event in PROCESS_EVENTS:
        raise PermissionError(
            f"pre-outcome freeze in progress: starting a process ({event}) is refused; "
            "a child process is outside the barrier"
        )
    if event != "open":
        return
    target = args[0]
    if isinstance(target, int):
        return
    name = os.fsdecode(target)
    for patterns, protected in list(_active):
        why = refusal(name, patterns, protected)
        if why is not None:
            raise PermissionError(
                f"pre-outcome freeze in progress: opening {name!r} is refused ({why}); "
                "if it holds no labels, move it or change the barrier patterns"
            )


def file_ids(paths: Sequence[str | os.PathLike[str]]) -> frozenset[tuple[int, int]]:
    """``(device, inode)`` of each existing file among ``paths`` (links resolved)."""
    out = set()
    for path in paths:
        try:
            info = os.stat(path)
        except OSError:
            continue
        out.add((info.st_dev, info.st_ino))
    return frozenset(out)


@contextmanager
def judgment_barrier(
    patterns: Sequence[str] = BARRIER_PATTERNS, protect: Sequence[str | os.PathLike[str]] = ()
) -> Iterator[None]:
    """Refuse, for the duration of the block, any open of a file whose path (as given or
    resolved) has a component matching one of ``patterns`` (lower-cased shell wildcards), or
    which is one of the ``protect`` files under any name (device and inode), and any new process."""
    global _installed
    entry = (tuple(p.lower() for p in patterns), file_ids(protect))
    with _lock:
        if not _installed:
            sys.addaudithook(_audit)
            _installed = True
        _active.append(entry)
    try:
        yield
    finally:
        with _lock:
            _active.remove(entry)


def pattern_files(folders: Sequence[str | os.PathLike[str]], patterns: Sequence[str]) -> list[Path]:
    """Every file under ``folders`` (recursively, at most :data:`SCAN_LIMIT` entries each) whose
    path below the folder has a component matching one of ``patterns``."""
    lowered = tuple(p.lower() for p in patterns)
    found: list[Path] = []
    for folder in folders:
        root = Path(folder)
        if not root.is_dir():
            continue
        seen = 0
        for current, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            seen += len(dirs) + len(files)
            if seen > SCAN_LIMIT:
                break
            for name in files:
                path = Path(current) / name
                parts = path.relative_to(root).parts
                if any(fnmatch.fnmatchcase(part.lower(), p) for part in parts for p in lowered):
                    found.append(path)
    return found


# --- Landlock -------------------------------------------------------------------------------------

_SYSCALLS = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446)}
_ACCESS_FS_READ_FILE = 1 << 2
_RULE_PATH_BENEATH = 1
_CREATE_RULESET_VERSION = 1 << 0
_PR_SET_NO_NEW_PRIVS = 38


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> Any:  # noqa: ANN401 - ctypes.CDLL
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, or 0 when Landlock is missing or disabled."""
    numbers = _SYSCALLS.get(platform.machine())
    if sys.platform != "linux" or numbers is None:
        return 0
    version = _libc().syscall(ctypes.c_long(numbers[0]), None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return max(int(version), 0)


def barrier_kind() -> str:
    """What :func:`run_sealed` will use here, in words (recorded in every freeze manifest)."""
    abi = landlock_abi()
    if abi:
        return f"Landlock (kernel ABI {abi}) in a sealed child process, and the audit hook"
    return "audit hook only (Landlock is not available on this kernel)"


def readable_complement(protected: Sequence[str | os.PathLike[str]]) -> list[Path]:
    """Paths to grant so that everything except ``protected`` stays readable (module docstring)."""
    blocked = {Path(os.path.realpath(p)) for p in protected if os.path.isfile(p)}
    blocked_ids = file_ids(sorted(blocked))
    ancestors = {a for b in blocked for a in b.parents}
    grant: list[Path] = []
    for folder in sorted(ancestors):
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            path = Path(entry.path)
            if path in ancestors or path in blocked:
                continue
            real = Path(os.path.realpath(path))
            if real in blocked or real in ancestors or any(b.is_relative_to(real) for b in blocked):
                continue
            try:
                info = os.stat(path)
            except OSError:
                continue
            if (info.st_dev, info.st_ino) in blocked_ids:
                continue
            grant.append(path)
    return grant


def seal_reads(protected: Sequence[str | os.PathLike[str]]) -> int:
    """Make ``protected`` unreadable for the rest of this process and its children; returns the
    number of rules. Irrevocable: call it in a process that exists for the sealed work."""
    numbers = _SYSCALLS.get(platform.machine())
    if not landlock_abi() or numbers is None:
        raise NclueError("Landlock is not available on this kernel; the freeze falls back to the audit hook")
    create, add_rule, restrict = numbers
    libc = _libc()
    attr = _RulesetAttr(_ACCESS_FS_READ_FILE)
    ruleset = libc.syscall(ctypes.c_long(create), ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), 0)
    if ruleset < 0:
        raise NclueError(f"Landlock ruleset refused: {os.strerror(ctypes.get_errno())}")
    grant = readable_complement(protected)
    try:
        for path in grant:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                rule = _PathBeneathAttr(_ACCESS_FS_READ_FILE, fd)
                if libc.syscall(ctypes.c_long(add_rule), ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0) < 0:
                    raise NclueError(f"Landlock refused a rule for {path}: {os.strerror(ctypes.get_errno())}")
            finally:
                os.close(fd)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise NclueError(f"prctl(PR_SET_NO_NEW_PRIVS) failed: {os.strerror(ctypes.get_errno())}")
        if libc.syscall(ctypes.c_long(restrict), ruleset, 0) < 0:
            raise NclueError(f"landlock_restrict_self failed: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(ruleset)
    return len(grant)


def _sealed_child(conn: Any, protected: list[str], scratch: str, call: Callable, kwargs: dict) -> None:  # noqa: ANN401
    """Body of the sealed child: seal, then run ``call(**kwargs, on_block=…)`` and send the outcome."""
    try:
        seal_reads(protected)
        tempfile.tempdir = scratch
        os.environ["TMPDIR"] = scratch
        result = call(**kwargs, on_block=lambda n: conn.send(("progress", n)))
        conn.send(("ok", result))
    except NclueError as exc:
        conn.send(("nclue", str(exc)))
    except PermissionError as exc:
        conn.send(("permission", str(exc)))
    except BaseException as exc:  # noqa: BLE001 - every failure goes back to the parent, with its traceback
        import traceback

        conn.send(("error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"))
    finally:
        conn.close()


def run_sealed(
    call: Callable,
    kwargs: dict,
    protected: Sequence[str | os.PathLike[str]],
    scratch_parent: str | os.PathLike[str],
    on_block: Advance | None = None,
) -> Any:  # noqa: ANN401 - whatever ``call`` returns
    """Run ``call(**kwargs, on_block=...)`` in a spawned child sealed by :func:`seal_reads`; its
    progress reaches ``on_block``; its :class:`NclueError` or :class:`PermissionError` is raised here."""
    import multiprocessing
    import shutil

    Path(scratch_parent).mkdir(parents=True, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix=".nclue-sealed-", dir=scratch_parent)
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe(duplex=False)
    process = context.Process(
        target=_sealed_child, args=(child, [str(p) for p in protected], scratch, call, kwargs), daemon=True
    )
    try:
        process.start()
        child.close()
        while True:
            try:
                kind, value = parent.recv()
            except EOFError:
                process.join()
                raise NclueError(
                    f"the sealed freeze process ended without an answer (exit code {process.exitcode})"
                ) from None
            if kind == "progress":
                if on_block is not None:
                    on_block(value)
                continue
            process.join()
            if kind == "ok":
                return value
            if kind == "permission":
                raise PermissionError(value)
            if kind == "nclue":
                raise NclueError(value)
            raise RuntimeError(f"the sealed freeze process failed: {value}")
    finally:
        if process.is_alive():
            process.kill()
        shutil.rmtree(scratch, ignore_errors=True)
