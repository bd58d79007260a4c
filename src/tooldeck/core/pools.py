"""Bounded worker threads per tool family, so one family's stuck calls cannot starve another.

A sync tool's ``execute_internal`` (and a sync ``ActionStrategy.run``) runs in a worker
thread. With one shared pool, seven calls blocked on something that never answers (a
slow disk, a lock, a hung library call) would take every thread, and every other
tool, the event loop's DNS lookups included, would wait behind them. Here each
family (a tool's ``pool``, its name by default) gets its own pool of at most
``THREADS_PER_POOL`` threads, created on first use; the event loop's default
executor stays free for the loop's own work.

The pool hands the result straight to an ``asyncio`` future with one
``call_soon_threadsafe``. ``loop.run_in_executor`` with a ``ThreadPoolExecutor``
(what ``asyncio.to_thread`` does) goes through a ``concurrent.futures.Future`` and
chains it to an asyncio one, which costs about a quarter of the whole thread hop
(``benchmarks/overhead.py``, case (d)). The threads are daemons: a call stuck for
good does not hold the process at exit, where a ``ThreadPoolExecutor`` joins it.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from contextlib import suppress
from queue import SimpleQueue
from typing import Any, TypeVar

__all__ = ["THREADS_PER_POOL", "WorkerPool", "in_thread", "pool_for"]

THREADS_PER_POOL = 4
"""Threads per family: the most calls of one family that run at once in threads."""

T = TypeVar("T")

_Job = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]", Callable[..., Any], tuple[Any, ...]]


def _deliver(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if not future.done():  # cancelled by its caller (a timeout) while the thread worked
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)


class WorkerPool:
    """At most ``size`` daemon threads that run sync callables for the event loop.

    Semantics: ``run`` queues the job and returns an ``asyncio.Future`` of its result
    (or its exception). A job whose future is cancelled before a thread takes it never
    runs; one already running finishes in its thread and its result is dropped. Threads
    start on demand, up to ``size``, and then wait for work for the life of the process.
    """

    def __init__(self, name: str, size: int = THREADS_PER_POOL) -> None:
        self.name = name
        """Prefix of the threads' names (``tooldeck-<family>``)."""
        self.size = size
        """The most threads, and so the most jobs running at once."""
        self._jobs: SimpleQueue[_Job] = SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0
        self._idle = 0

    def run(self, function: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        """Run ``function(*args)`` in one of the pool's threads; await the returned future.

        Must be called from a running event loop, which receives the result.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._jobs.put((loop, future, function, args))
        if self._idle == 0 and self._threads < self.size:
            with self._lock:
                if self._threads < self.size:
                    self._threads += 1
                    threading.Thread(
                        target=self._work, name=f"{self.name}-{self._threads}", daemon=True
                    ).start()
        return future

    def _work(self) -> None:
        jobs, lock = self._jobs, self._lock
        while True:
            with lock:
                self._idle += 1
            loop, future, function, args = jobs.get()
            with lock:
                self._idle -= 1
            if future.cancelled():
                continue
            try:
                value, ok = function(*args), True
            except BaseException as exc:  # the caller's await re-raises it
                value, ok = exc, False
            with suppress(RuntimeError):  # the loop closed while the job ran: nobody waits
                loop.call_soon_threadsafe(_deliver, future, ok, value)
            del value, function, args, future  # hold nothing while idle


_pools: dict[str, WorkerPool] = {}
_pools_lock = threading.Lock()


def pool_for(family: str) -> WorkerPool:
    """The worker pool of ``family`` (created on first use, kept for the process)."""
    pool = _pools.get(family)
    if pool is None:
        with _pools_lock:
            pool = _pools.get(family)
            if pool is None:
                pool = _pools[family] = WorkerPool(f"tooldeck-{family}")
    return pool


def in_thread(family: str, function: Callable[..., T], *args: Any) -> asyncio.Future[T]:
    """Run ``function(*args)`` in ``family``'s pool with the caller's context variables."""
    return pool_for(family).run(contextvars.copy_context().run, function, *args)
