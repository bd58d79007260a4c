"""Bounded worker threads per tool family, so one family's stuck calls cannot starve another.

A sync tool's ``execute_internal`` (and a sync ``ActionStrategy.run``) runs in a worker
thread. With one shared pool, seven calls blocked on something that never answers (a
slow disk, a lock, a hung library call) would take every thread, and every other
tool, the event loop's DNS lookups included, would wait behind them. Here each
family (a tool's ``pool``, its name by default) gets its own pool of at most
``THREADS_PER_POOL`` threads, created on first use; the event loop's default
executor stays free for the loop's own work.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

__all__ = ["THREADS_PER_POOL", "pool_for"]

THREADS_PER_POOL = 4
"""Threads per family: the most calls of one family that run at once in threads."""

_pools: dict[str, ThreadPoolExecutor] = {}
_lock = threading.Lock()


def pool_for(family: str) -> ThreadPoolExecutor:
    """The thread pool of ``family`` (created on first use, kept for the process)."""
    pool = _pools.get(family)
    if pool is None:
        with _lock:
            pool = _pools.get(family)
            if pool is None:
                pool = _pools[family] = ThreadPoolExecutor(
                    THREADS_PER_POOL, thread_name_prefix=f"tooldeck-{family}"
                )
    return pool
