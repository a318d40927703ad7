"""Where batch work runs: this process, a local process pool, or a Ray cluster — the same function.

Every heavy stage of nclue is a pure function over a batch (a PDF → its page texts; a block of
chunks → vectors; a block of queries → rankings). An :class:`Engine` maps such a function over
its inputs and yields ``(position, result)`` pairs as they complete; the caller (always this
process) writes the results, so outputs, resumability and atomic writes are the same whatever
ran the function:

* ``local`` (default, no extra dependency): in this process when ``workers == 1``, otherwise a
  spawn process pool whose workers die with their parent;
* ``ray``: Ray tasks (``pip install 'nclue[ray]'``) on a local Ray instance started for the job
  (``address=None``) or on an existing cluster (``address="HOST:PORT"`` or ``"auto"``). A task
  whose worker dies is retried (``max_retries``), and because only the caller writes, a retry
  can neither lose nor duplicate a result.

At most ``4 × workers`` tasks are in flight, so inputs are consumed lazily and memory stays
bounded however long the input list.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from enum import Enum
from typing import Any, Protocol

from nclue.errors import NclueError

IN_FLIGHT_PER_WORKER = 4
RAY_CONNECT_TIMEOUT_S = 10.0
"""Seconds to wait for a TCP connection to ``--ray-address`` before giving up: ``ray.init``
itself retries an unreachable address for ever."""
RAY_RETRIES = 3


class EngineName(str, Enum):
    """The engines a command can run its batch work on."""

    local = "local"
    ray = "ray"


class Engine(Protocol):
    """Maps a module-level function over argument tuples; yields ``(position, result)`` as completed."""

    name: str
    workers: int

    def imap(self, fn: Callable[..., Any], args: Iterable[tuple]) -> Iterator[tuple[int, Any]]: ...

    def close(self) -> None: ...


def die_with_parent() -> None:
    """Worker initializer: ask Linux to SIGKILL this worker when its parent dies.

    A spawn worker holds both ends of its task pipe, so it would otherwise wait forever
    (with the resource tracker) after the parent is SIGKILLed. ``prctl(PR_SET_PDEATHSIG)``
    is Linux-only; elsewhere the call is skipped.
    """
    import ctypes
    import ctypes.util
    import signal

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return
    pr_set_pdeathsig = 1
    libc.prctl(pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() == 1:  # the parent died before the request took effect
        os._exit(1)


THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")
"""What OpenMP, OpenBLAS, MKL and numba (the MaxSim kernels) read for their thread count when first loaded."""


def env_thread_count(name: str = "OMP_NUM_THREADS") -> int | None:
    """The thread count ``$name`` sets (its first level, as OpenMP reads ``4,2``), or ``None`` when unset
    or not a positive number."""
    first = os.environ.get(name, "").split(",")[0].strip()
    return int(first) if first.isdigit() and int(first) > 0 else None


def cap_threads(threads: int) -> int:
    """Use at most ``threads`` BLAS/OpenMP threads in this process (a worker's share of the CPUs); return
    the count applied.

    Why: each library otherwise starts one thread per CPU in every worker, and OpenBLAS's idle
    threads spin. Two matrix workers on two cores, each with NumPy's two OpenBLAS threads, took
    48 s of wall time for the demo's default matrix (93 s of CPU), against 18 s with one thread
    each (``benchmarks/RESULTS.md``). The variables cover libraries loaded later (torch and ONNX
    Runtime read them at load); ``threadpoolctl`` limits those already loaded (NumPy, imported
    when a spawned worker re-imports the parent's main module). A smaller count the user set in
    :data:`THREAD_VARIABLES` is kept. Call it before numba is imported: numba reads
    ``NUMBA_NUM_THREADS`` once, and refuses a changed value after its threads have started.
    """
    for name in THREAD_VARIABLES:
        threads = min(threads, env_thread_count(name) or threads)
    for name in THREAD_VARIABLES:
        os.environ[name] = str(threads)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # a dependency since 0.1.0; an older environment keeps the variables only
        return threads
    threadpool_limits(threads)
    return threads


def start_worker(threads: int) -> None:
    """Worker initializer: :func:`die_with_parent` and :func:`cap_threads`."""
    die_with_parent()
    cap_threads(threads)


class LocalEngine:
    """This process (``workers == 1``) or a spawn process pool of ``workers`` processes."""

    name = "local"

    def __init__(self, workers: int = 1) -> None:
        self.workers = max(1, int(workers))
        self._pool = None

    def imap(self, fn: Callable[..., Any], args: Iterable[tuple]) -> Iterator[tuple[int, Any]]:
        if self.workers == 1:
            for position, arg in enumerate(args):
                yield position, fn(*arg)
            return
        from concurrent.futures.process import BrokenProcessPool

        try:
            yield from self._pool_imap(fn, args)
        except BrokenProcessPool:
            self.close()
            raise NclueError(
                f"a worker process of the local engine died ({self.workers} workers; killed from outside or "
                "by the system, often for memory); what was finished is kept, so rerun the same command to "
                "resume, with fewer --workers if memory is short"
            ) from None

    def _pool_imap(self, fn: Callable[..., Any], args: Iterable[tuple]) -> Iterator[tuple[int, Any]]:
        from concurrent.futures import FIRST_COMPLETED, wait

        pool = self._executor()
        pending: dict = {}
        queue = enumerate(args)
        for position, arg in queue:
            pending[pool.submit(fn, *arg)] = position
            if len(pending) >= IN_FLIGHT_PER_WORKER * self.workers:
                break
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in sorted(finished, key=pending.__getitem__):
                yield pending.pop(future), future.result()
            for position, arg in queue:
                pending[pool.submit(fn, *arg)] = position
                if len(pending) >= IN_FLIGHT_PER_WORKER * self.workers:
                    break

    def _executor(self):  # noqa: ANN202 - concurrent.futures.ProcessPoolExecutor
        if self._pool is None:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            context = multiprocessing.get_context("spawn")
            threads = max(1, (os.cpu_count() or 1) // self.workers)
            self._pool = ProcessPoolExecutor(
                max_workers=self.workers, mp_context=context, initializer=start_worker, initargs=(threads,)
            )
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


def check_reachable(address: str, timeout: float = RAY_CONNECT_TIMEOUT_S) -> None:
    """Refuse a Ray address nothing answers on within ``timeout`` seconds.

    ``HOST:PORT`` and ``ray://HOST:PORT`` are tried with one TCP connection; ``auto`` (the
    cluster this machine is part of) is left to Ray, which fails fast when there is none.
    """
    import socket

    if address == "auto":
        return
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise NclueError(f"--ray-address {address!r}: expected HOST:PORT (e.g. 10.0.0.5:6379), ray://HOST:PORT or auto")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        reason = "no answer" if isinstance(exc, TimeoutError) else (exc.strerror or type(exc).__name__).lower()
        raise NclueError(
            f"--ray-address {address}: cannot reach a Ray cluster there ({reason} within {timeout:g} s); "
            "check the head node's address with `ray status`, or drop --ray-address to start a local Ray instance"
        ) from None


class RayEngine:
    """Ray tasks on a local instance started here (``address=None``) or on an existing cluster."""

    name = "ray"

    def __init__(self, workers: int | None = None, address: str | None = None) -> None:
        try:
            import ray
        except ImportError:
            raise NclueError("--engine ray needs Ray: pip install 'nclue[ray]'") from None
        self._ray = ray
        self._started = False
        if not ray.is_initialized():
            os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # a local instance for one job; loopback only
            options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "logging_level": "ERROR"}
            if address is None:
                options.update(num_cpus=workers or os.cpu_count() or 1, _node_ip_address="127.0.0.1")
            else:
                check_reachable(address)
                options["address"] = address
            try:
                ray.init(**options)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                where = f"the Ray cluster at {address}" if address else "a local Ray instance"
                raise NclueError(f"cannot start or reach {where} ({exc}); check `ray status`") from None
            self._started = True
        self.workers = int(workers or ray.cluster_resources().get("CPU", 1))
        self._remote: dict[Callable, Any] = {}

    def imap(self, fn: Callable[..., Any], args: Iterable[tuple]) -> Iterator[tuple[int, Any]]:
        ray = self._ray
        remote = self._remote.get(fn)
        if remote is None:
            remote = self._remote[fn] = ray.remote(max_retries=RAY_RETRIES, num_cpus=1)(fn)
        pending: dict = {}
        queue = enumerate(args)
        for position, arg in queue:
            pending[remote.remote(*arg)] = position
            if len(pending) >= IN_FLIGHT_PER_WORKER * self.workers:
                break
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                yield pending.pop(ref), ray.get(ref)
            for position, arg in queue:
                pending[remote.remote(*arg)] = position
                if len(pending) >= IN_FLIGHT_PER_WORKER * self.workers:
                    break

    def close(self) -> None:
        if self._started:
            self._ray.shutdown()
            self._started = False


@contextmanager
def open_engine(name: str, workers: int | None, address: str | None = None) -> Iterator[Engine | None]:
    """The engine a command's ``--engine/--workers/--ray-address`` ask for, closed on exit.

    ``None`` for ``local`` with no worker count above one (the stage then uses its own
    default: this process, or one process per CPU for encoders); otherwise
    :func:`make_engine` (``workers`` ``None`` on Ray = the cluster's CPUs).
    """
    if name == EngineName.local and address is None and (workers is None or workers <= 1):
        yield None
        return
    engine = make_engine(name, workers or 0, address)
    try:
        yield engine
    finally:
        engine.close()


def make_engine(name: str = "local", workers: int = 1, address: str | None = None) -> Engine:
    """The engine ``name`` with ``workers`` parallel workers (Ray: CPUs of a local instance)."""
    if name == EngineName.local:
        if address is not None:
            raise NclueError("--ray-address needs --engine ray")
        return LocalEngine(workers)
    if name == EngineName.ray:
        return RayEngine(workers if workers > 0 else None, address)
    raise NclueError(f"unknown engine {name!r}; choose local or ray")
