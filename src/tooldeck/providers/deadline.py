"""``DeadlineWatchdog``: per-call timeouts with one timer for all calls in flight.

``asyncio.timeout`` arms a timer per call (~4.6 µs here, four times a whole tool call;
benchmarks/overhead.py). The watchdog keeps the in-flight deadlines in a dict and one
loop timer at the earliest of them: arming is a dict insert and a comparison, and the
timer is re-armed only when it fires or an earlier deadline arrives.

A call that finishes in its first step (an async tool that never waits) needs no
deadline at all: no timer can fire while it runs. ``first_step`` runs that step and
either gives the result or an awaitable that continues the call; only that is armed,
with what is left of the call's time (benchmarks/overhead.py (b'): 4.0 → 3.4 µs).
"""

from __future__ import annotations

import asyncio
import math
import types
from collections.abc import Awaitable, Coroutine, Generator
from typing import Any, TypeVar

__all__ = ["Deadline", "DeadlineWatchdog", "first_step"]

T = TypeVar("T")
_COROUTINE = types.CoroutineType


def first_step(call: Awaitable[T]) -> tuple[bool, Any]:
    """Run ``call`` up to its first wait: ``(True, its result)`` if it never waited.

    Else ``(False, awaitable)``: awaiting it continues the call where it stopped, in
    the awaiting task, with cancellation and ``close()`` passed through as ``await``
    passes them. An awaitable that is not a coroutine is handed back to be awaited.

    Raises:
        BaseException: whatever the call raised in its first step.
    """
    if type(call) is not _COROUTINE:
        return False, call
    try:
        step = call.send(None)
    except StopIteration as done:
        return True, done.value
    return False, _resumed(call, step)


@types.coroutine
def _resumed(call: Coroutine[Any, Any, T], step: Any) -> Generator[Any, Any, T]:
    """``yield from call`` for a coroutine already sent to its first wait (``step``)."""
    while True:
        try:
            sent = yield step
        except GeneratorExit:
            call.close()
            raise
        except BaseException as exc:  # a cancellation: into the call, as ``await`` does
            try:
                step = call.throw(exc)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]
        else:
            try:
                step = call.send(sent)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]


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
