"""``ObservedProvider``: every call, whichever provider served it, is traced and audited."""

from __future__ import annotations

from tooldeck.core.context import ToolContext
from tooldeck.core.result import ToolResult
from tooldeck.core.tool import Arguments
from tooldeck.observability.audit import AuditSink
from tooldeck.observability.tracing import ToolTracer
from tooldeck.providers.base import ToolsProvider, unknown_name
from tooldeck.providers.wrapper import WrapperProvider

__all__ = ["ObservedProvider"]


class ObservedProvider(WrapperProvider):
    """Opens a span around each call (``tracer``) and records the call in ``sink`` after it ends.

    Semantics:
        The span is current while the call runs, so what the tool does nests under it.
        A cancelled call ends its span as ``cancelled`` and is not recorded (it has no
        result). Either part may be None. The sink must not block
        (``AuditStore.record`` only queues); the cost is measured by
        benchmarks/overhead.py (e) and benchmarks/providers.py.
    """

    def __init__(
        self, wrapped: ToolsProvider, sink: AuditSink | None, tracer: ToolTracer | None = None
    ) -> None:
        super().__init__(wrapped)
        self.sink = sink
        self.tracer = tracer

    async def execute(
        self, name: str, arguments: Arguments = None, ctx: ToolContext | None = None
    ) -> ToolResult:
        """Forward the call inside its span, then record it."""
        if type(name) is not str:
            return await unknown_name(self, name, ctx)
        if self.tracer is None:
            result = await self.wrapped.execute(name, arguments, ctx)
        else:
            span, token = self.tracer.start(name, arguments, ctx)
            try:
                result = await self.wrapped.execute(name, arguments, ctx)
            except BaseException:  # cancelled: no result to record
                self.tracer.end(span, token, None)
                raise
            self.tracer.end(span, token, result)
        if self.sink is not None:
            self.sink.record(name, arguments, ctx, result)
        return result
