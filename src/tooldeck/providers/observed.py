"""``ObservedProvider``: every call, whichever provider served it, is traced and audited."""

from __future__ import annotations

import asyncio
import time
from typing import Literal

from tooldeck.core.context import ToolContext, new_request_id
from tooldeck.core.result import ToolResult, trusted_metadata
from tooldeck.core.tool import Arguments, error_result
from tooldeck.observability.audit import AuditSink
from tooldeck.observability.tracing import ToolTracer
from tooldeck.providers.base import ToolsProvider, unknown_name
from tooldeck.providers.wrapper import WrapperProvider

__all__ = ["ObservedProvider"]


class ObservedProvider(WrapperProvider):
    """Opens a span around each call (``tracer``) and records the call in ``sink`` after it ends.

    Semantics:
        The span is current while the call runs, so what the tool does nests under it.
        A cancelled call ends its span as ``cancelled`` and is recorded as a
        ``cancelled`` error (queued, never waited for: the caller is going away; the
        CLI flushes the audit before it exits). Either part may be None. With a ``sink``
        whose durability is ``ack``, the answer waits until the record is safe from a
        kill (journalled: ``observability.journal``); with ``batch`` the sink only queues (cost: benchmarks/overhead.py (e), benchmarks/providers.py).
        While the sink cannot store anything (``healthy`` false: a full disk), a call
        that must not run unrecorded answers ``unavailable`` without running:
        ``fail_closed`` says which: ``destructive`` tools (the default), ``all`` or
        ``none``.
    """

    def __init__(
        self,
        wrapped: ToolsProvider,
        sink: AuditSink | None,
        tracer: ToolTracer | None = None,
        *,
        fail_closed: Literal["destructive", "all", "none"] = "destructive",
    ) -> None:
        super().__init__(wrapped)
        self.sink = sink
        self.tracer = tracer
        self.fail_closed = fail_closed

    async def execute(
        self, name: str, arguments: Arguments = None, ctx: ToolContext | None = None
    ) -> ToolResult:
        """Forward the call inside its span, then record it."""
        if type(name) is not str:
            return await unknown_name(self, name, ctx)
        sink = self.sink
        if sink is not None and not sink.healthy and await self._must_be_recorded(name):
            return error_result(
                "unavailable",
                f"{name} was not run: the audit store cannot record calls right now (a full "
                "disk?), and this tool does not run unrecorded ([audit] fail_closed)",
                trusted_metadata(name, None, (ctx and ctx.request_id) or new_request_id(), 0.0),
                retryable=True,
            )
        started = time.perf_counter()
        tracer = self.tracer
        if tracer is None:
            try:
                result = await self.wrapped.execute(name, arguments, ctx)
            except asyncio.CancelledError:  # Ctrl-C, a client's cancel: no result
                if sink is not None:
                    sink.record(name, arguments, ctx, _cancelled(name, ctx, started))
                raise
        else:
            span, token = tracer.start(name, arguments, ctx)
            try:
                result = await self.wrapped.execute(name, arguments, ctx)
            except BaseException as exc:
                tracer.end(span, token, None)
                if sink is not None and isinstance(exc, asyncio.CancelledError):
                    sink.record(name, arguments, ctx, _cancelled(name, ctx, started))
                raise
            tracer.end(span, token, result)
        if sink is not None:
            if sink.durability == "ack":
                stored = sink.record_acked(name, arguments, ctx, result)
                if not stored.done():  # journalled already, unless there is no journal
                    await asyncio.wrap_future(stored)
            else:
                sink.record(name, arguments, ctx, result)
        return result

    async def _must_be_recorded(self, name: str) -> bool:
        if self.fail_closed != "destructive":
            return self.fail_closed == "all"
        definition = next((d for d in await self.all_definitions() if d.name == name), None)
        return definition is not None and bool(definition.annotations.destructive)


def _cancelled(name: str, ctx: ToolContext | None, started: float) -> ToolResult:
    """The record of a call cancelled before it answered: it may have had effects."""
    return error_result(
        "cancelled",
        f"{name} was cancelled before it finished (by its caller: Ctrl-C, a client's "
        "cancel, a closed connection); what it did until then may have taken effect",
        trusted_metadata(
            name,
            None,
            (ctx and ctx.request_id) or new_request_id(),
            (time.perf_counter() - started) * 1000,
        ),
    )
