"""``ProfiledProvider``: a profile's view that says, on every call, whose view it is."""

from __future__ import annotations

from tooldeck.core.context import EMPTY_CONTEXT, ToolContext
from tooldeck.core.result import ToolResult
from tooldeck.core.tool import Arguments
from tooldeck.providers.base import ToolsProvider
from tooldeck.providers.wrapper import WrapperProvider

__all__ = ["ProfiledProvider"]


class ProfiledProvider(WrapperProvider):
    """``wrapped`` (a profile's stack) whose calls carry ``profile`` in their context.

    Semantics:
        A call whose ``ctx.profile`` is not ``profile`` (None, as an adapter's caller
        often leaves it, or another name) runs with ``profile``: the audit row, the
        approval and the trace name the view whose policies applied (issue 55: the
        LangChain, Agents SDK and pydantic-ai adapters' rows had no profile).
    """

    def __init__(self, wrapped: ToolsProvider, profile: str) -> None:
        super().__init__(wrapped)
        self.profile = profile

    async def execute(
        self, name: str, arguments: Arguments = None, ctx: ToolContext | None = None
    ) -> ToolResult:
        """Forward the call with ``ctx.profile`` set to this view's profile."""
        ctx = ctx or EMPTY_CONTEXT
        if ctx.profile != self.profile:
            ctx = ctx.derive(profile=self.profile)
        return await self.wrapped.execute(name, arguments, ctx)
