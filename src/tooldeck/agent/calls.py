"""``RunTools``: the tools of one run, recorded and announced as events.

Both agents (intent router and model loop) call tools only through it, so every call
goes through the profile's provider stack (confirmation, policies, audit, spans), is
listed in the answer's ``tool_calls``, and emits ``tool_call.started``,
``tool_call.progress`` for each report of the tool's (``ctx.report_progress``) and
``tool_call.completed``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from tooldeck.agent.contracts import ToolCallRecord
from tooldeck.core.context import ToolContext, ToolEvent, new_request_id
from tooldeck.core.progress import EventRelay, progress_data
from tooldeck.core.result import ToolResult
from tooldeck.core.tool import Arguments, ToolExecutor, ToolViews

__all__ = ["Emit", "RunTools", "run_channel", "run_of_channel", "shown_arguments"]

Emit = Callable[[str, dict[str, Any]], Awaitable[None]]
"""Emits a run event: ``await emit("tool_call.started", {...})``."""


def run_channel(run_id: str) -> str:
    """The channel of a run's calls: ``run:<run_id>``.

    A run's confirmations are decided through the run's own route only, whichever
    engine runs it.
    """
    return f"run:{run_id}"


def run_of_channel(channel: str | None) -> str | None:
    """The run whose calls ``channel`` carries (``run:<run_id>``); None for another."""
    if channel is None or not channel.startswith("run:"):
        return None
    return channel.removeprefix("run:") or None


def shown_arguments(arguments: Arguments) -> Any:
    """Arguments as a run shows them: the JSON object, or the raw text when not JSON."""
    if arguments is None:
        return {}
    if isinstance(arguments, str | bytes):
        try:
            return json.loads(arguments or "{}")
        except ValueError:
            return arguments if isinstance(arguments, str) else arguments.decode(errors="replace")
    return dict(arguments)


class RunTools:
    """A ``ToolExecutor`` over ``view`` that records each call of a run and emits its events.

    Each call of a run carries the idempotency key ``run:<run_id>:<call_id>`` (unless
    its context has one), so a run that is resumed and repeats a call of a tool with
    side effects gets its receipt's result instead of a second effect.

    Args:
        view: The profile's provider stack.
        ctx: The run's context (run_id, session, user, profile, confirm callback).
        emit: Event sink of the run.

    Attributes:
        records: One ``ToolCallRecord`` per finished call, in start order.
        results: The ``ToolResult`` of each finished call, same order.
    """

    def __init__(self, view: ToolExecutor, ctx: ToolContext, emit: Emit) -> None:
        self.view = view
        self.ctx = ctx
        self.emit = emit
        self.records: list[ToolCallRecord] = []
        self.results: list[ToolResult] = []
        self._order: list[str] = []

    async def execute(
        self,
        name: str,
        arguments: Arguments = None,
        ctx: ToolContext | None = None,
        *,
        call_id: str | None = None,
        via: ToolExecutor | None = None,
        audited: bool = True,
    ) -> ToolResult:
        """Run one call through the view; never raises for tool failures.

        ``via`` runs it with another executor (``search_tools``, which the agent
        answers), behind the runtime's audit and tracing (``ToolViews.observed``)
        unless ``audited`` is false (a call replayed from a journal was recorded when
        it was made).
        """
        call_id = call_id or new_request_id()
        ctx = ctx or self.ctx
        if via is not None and audited:
            views = ctx.services.get_optional(ToolViews)  # type: ignore[type-abstract]
            via = views.observed(via) if views is not None else via
        shown = shown_arguments(arguments)
        self._order.append(call_id)
        await self.emit("tool_call.started", {"call_id": call_id, "name": name, "arguments": shown})
        start = time.perf_counter()
        key = ctx.idempotency_key or (ctx.run_id and f"run:{ctx.run_id}:{call_id}")
        relay = EventRelay(partial(self._progress, call_id))
        try:
            result = await (via or self.view).execute(
                name,
                arguments,
                ctx.derive(request_id=call_id, idempotency_key=key or None, event_emitter=relay),
            )
        finally:
            await relay.aclose()
        error = result.error
        record = ToolCallRecord(
            id=call_id,
            name=name,
            arguments=shown,
            status=result.status,
            source_id=result.source_id,
            as_of=result.as_of,
            error_type=error.type.value if error else None,
            error_message=error.message if error else None,
            duration_ms=round((time.perf_counter() - start) * 1000, 3),
        )
        position = self._order.index(call_id)  # concurrent calls finish in any order
        at = sum(1 for r in self.records if self._order.index(r.id) < position)
        self.records.insert(at, record)
        self.results.insert(at, result)
        await self.emit("tool_call.completed", {"call_id": call_id, **record.model_dump()})
        return result

    def result(self, request_id: str) -> ToolResult | None:
        """The result of this run's finished call ``request_id`` (its call id), or None."""
        for record, result in zip(self.records, self.results, strict=True):
            if record.id == request_id:
                return result
        return None

    async def _progress(self, call_id: str, event: ToolEvent) -> None:
        report = progress_data(event)
        if report is not None:
            done, total, message = report
            data = {"call_id": call_id, "progress": done, "total": total, "message": message}
            await self.emit("tool_call.progress", data)
