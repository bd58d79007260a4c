"""A running tool's progress, carried to whoever follows the call: ``EventRelay``.

A tool reports with ``ctx.report_progress(done, total, message)``, from its own
coroutine or from the worker thread a plain ``def`` tool runs in. An entry point that
can show progress sets ``ctx.event_emitter`` to an ``EventRelay`` around its async
sender: the MCP server (``notifications/progress``, when the client sent a progress
token), a run (``tool_call.progress`` events on its stream), ``tooldeck call`` (a
progress bar on the terminal). Example::

    relay = EventRelay(send)              # send: async (ToolEvent) -> None
    result = await view.execute(name, arguments, ctx.derive(event_emitter=relay))
    await relay.aclose()                  # what the tool reported is sent first
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from tooldeck.core.context import ToolEvent

__all__ = ["EventRelay", "progress_data"]

_log = logging.getLogger(__name__)


def progress_data(event: ToolEvent) -> tuple[float, float | None, str | None] | None:
    """``(progress, total, message)`` of a ``progress`` event; None for another event.

    The fields are those of ``ToolContext.report_progress`` and of MCP's
    ``notifications/progress``; a value of the wrong type is None (a tool's bad
    report never breaks the sender).
    """
    if event.type != "progress":
        return None
    data = event.data
    done = data.get("progress")
    if not isinstance(done, int | float) or isinstance(done, bool):
        return None
    total = data.get("total")
    message = data.get("message")
    return (
        done,
        total if isinstance(total, int | float) and not isinstance(total, bool) else None,
        message if isinstance(message, str) else None,
    )


class EventRelay:
    """Carries one call's events from any thread to one async sender, in order.

    Semantics:
        Calling the relay (it is a ``ToolContext.event_emitter``) never blocks and
        never raises, from the loop's thread or any other. Events are sent on the
        loop the relay was made on, one at a time, in the order they were reported.
        ``progress`` events of one call coalesce: when the sender is slower than the
        tool, the sender gets the latest progress, not a backlog (the count of
        progress reports is not bounded by the tool; a run stores each event). Other
        events wait, up to ``limit`` pending; more are dropped and counted in
        ``dropped``. A sender that raises is logged at debug and the next event is
        sent. After ``aclose`` events are ignored: a tool thread abandoned at its
        timeout can go on reporting, and nobody is told.

    Args:
        send: Sends one event (an MCP notification, a run event, a bar's update).
        limit: Most events waiting to be sent.

    Raises:
        RuntimeError: made outside a running event loop.
    """

    __slots__ = (
        "_closed", "_crossed", "_loop", "_pending", "_pump", "_send", "_seq", "_thread",
        "dropped", "limit",
    )  # fmt: skip

    def __init__(self, send: Callable[[ToolEvent], Awaitable[None]], *, limit: int = 256) -> None:
        self._send = send
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self._pending: dict[Any, ToolEvent] = {}
        self._pump: asyncio.Task[None] | None = None
        self._closed = False
        self._crossed = False  # an event came from another thread
        self._seq = itertools.count()
        self.limit = limit
        self.dropped = 0
        """Events dropped because ``limit`` were waiting."""

    def __call__(self, event: ToolEvent) -> None:
        """Queue ``event`` to be sent (a ``ToolContext.event_emitter``)."""
        if self._closed:
            return
        if threading.get_ident() == self._thread:
            self._put(event)
            return
        self._crossed = True
        try:
            self._loop.call_soon_threadsafe(self._put, event)
        except RuntimeError:  # the loop is closed: the call is long over
            return

    def _put(self, event: ToolEvent) -> None:
        if self._closed:
            return
        key: Any = ("progress", event.request_id) if event.type == "progress" else next(self._seq)
        pending = self._pending
        if key in pending:
            del pending[key]  # the newer progress goes where the order puts it now
        elif len(pending) >= self.limit:
            self.dropped += 1
            return
        pending[key] = event
        if self._pump is None:
            self._pump = self._loop.create_task(self._drain())

    async def _drain(self) -> None:
        pending = self._pending
        while pending:
            event = pending.pop(next(iter(pending)))
            try:
                await self._send(event)
            except Exception as exc:  # a listener that went away must not fail the call
                _log.debug("progress event not sent: %s", exc)
        self._pump = None

    async def aclose(self, timeout_s: float = 1.0) -> None:
        """Send what is waiting (at most ``timeout_s`` seconds), then ignore new events.

        Reports a worker thread made just before the call returned are taken first.
        """
        if self._crossed:
            await asyncio.sleep(0)  # run the call_soon_threadsafe hand-offs already queued
        self._closed = True
        pump = self._pump
        if pump is not None:
            try:
                await asyncio.wait_for(asyncio.shield(pump), timeout_s)
            except TimeoutError:
                pump.cancel()
