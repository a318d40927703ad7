"""A memory budget for resampling: refuse a request that cannot fit, before allocating it.

Resampling matrices grow with replicates × units; a mistyped ``--bootstrap 100000000`` would
otherwise allocate gigabytes and be killed. The budget is half the memory the kernel reports as
available (``/proc/meminfo`` ``MemAvailable``), or ``NCLUE_MEMORY_BUDGET`` bytes when set.
"""

from __future__ import annotations

import os

from nclue.errors import NclueError

FALLBACK_BUDGET = 4 << 30


def budget_bytes() -> int:
    """Bytes a single resampling step may allocate."""
    configured = os.environ.get("NCLUE_MEMORY_BUDGET")
    if configured:
        try:
            return int(configured)
        except ValueError:
            raise NclueError(f"NCLUE_MEMORY_BUDGET={configured!r} is not a number of bytes") from None
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024 // 2
    except OSError:
        pass
    return FALLBACK_BUDGET


def require(n_bytes: float, what: str, fix: str) -> None:
    """Raise :class:`NclueError` when ``n_bytes`` exceeds the budget, naming the request and the fix."""
    budget = budget_bytes()
    if n_bytes > budget:
        raise NclueError(
            f"{what} needs about {n_bytes / 2**30:.1f} GiB, more than the {budget / 2**30:.1f} GiB this machine "
            f"can spare; {fix}"
        )
