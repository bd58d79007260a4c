"""``DeadlineWatchdog``: per-call timeouts with one timer for all calls in flight.

``asyncio.timeout`` arms a timer per call (~4.6 µs here, four times a whole tool call;
benchmarks/overhead.py). The watchdog keeps the in-flight deadlines in a dict and one
loop timer at the earliest of them: arming is a dict insert and a comparison, and the
timer is re-armed only when it fires or an earlier deadline arrives.
"""

from __future__ import annotations

import asyncio
import math

__all__ = ["Deadline", "DeadlineWatchdog"]


class Deadline:
    """One armed deadline: the task to cancel and when (loop clock, seconds)."""

    __slots__ = ("expired", "task", "when")

    def __init__(self, when: float, task: asyncio.Task[object]) -> None:
        self.when = when
        self.task = task
        self.expired = False


class DeadlineWatchdog:
    """Cancels the task of a call whose deadline passed.

    Semantics:
        ``arm`` registers the current task with an absolute deadline; when it passes,
        the watchdog marks the ``Deadline`` expired and cancels the task. The caller
        catches ``CancelledError``, checks ``expired``, calls ``task.uncancel()`` and
        reports a timeout; a cancellation that is not ours is re-raised, so nested calls
        in one task each see only their own deadline (the same rule as
        ``asyncio.timeout``). ``disarm`` must be called when the call ends.
    """

    def __init__(self) -> None:
        self._live: dict[Deadline, None] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._handle: asyncio.TimerHandle | None = None
        self._next = math.inf

    def arm(self, timeout_s: float) -> Deadline:
        """Arm a deadline ``timeout_s`` seconds from now for the current task."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # first use, or a new event loop: old entries are dead
            self._loop, self._live, self._handle, self._next = loop, {}, None, math.inf
        task = asyncio.current_task(loop)
        assert task is not None, "DeadlineWatchdog.arm() must run inside a task"
        deadline = Deadline(loop.time() + timeout_s, task)
        self._live[deadline] = None
        if deadline.when < self._next:
            self._schedule(loop, deadline.when)
        return deadline

    def disarm(self, deadline: Deadline) -> None:
        """Forget ``deadline`` (the call ended, in time or not)."""
        self._live.pop(deadline, None)

    def _schedule(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        if self._handle is not None:
            self._handle.cancel()
        self._next = when
        self._handle = loop.call_at(when, self._fire)

    def _fire(self) -> None:
        loop = self._loop
        assert loop is not None
        self._handle, self._next = None, math.inf
        now = loop.time()
        for deadline in [d for d in self._live if d.when <= now]:
            del self._live[deadline]
            deadline.expired = True
            deadline.task.cancel()
        if self._live:
            self._schedule(loop, min(d.when for d in self._live))
