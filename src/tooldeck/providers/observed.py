"""``ObservedProvider``: every call, whichever provider served it, goes to the audit sink."""

from __future__ import annotations

from tooldeck.core.context import ToolContext
from tooldeck.core.result import ToolResult
from tooldeck.core.tool import Arguments
from tooldeck.observability.audit import AuditSink
from tooldeck.providers.base import ToolsProvider
from tooldeck.providers.wrapper import WrapperProvider

__all__ = ["ObservedProvider"]


class ObservedProvider(WrapperProvider):
    """Records each call's name, arguments, context and result in ``sink`` after it ends.

    The sink must not block (``AuditStore.record`` only queues); recording cost is
    measured by benchmarks/overhead.py (e).
    """

    def __init__(self, wrapped: ToolsProvider, sink: AuditSink) -> None:
        super().__init__(wrapped)
        self.sink = sink

    async def execute(
        self, name: str, arguments: Arguments = None, ctx: ToolContext | None = None
    ) -> ToolResult:
        """Forward the call, then record it."""
        result = await self.wrapped.execute(name, arguments, ctx)
        self.sink.record(name, arguments, ctx, result)
        return result
