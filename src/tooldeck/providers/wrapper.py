"""``WrapperProvider``: forwards everything to a wrapped provider; subclasses override one thing."""

from __future__ import annotations

from tooldeck.core.context import ToolContext
from tooldeck.core.definition import ToolDefinition
from tooldeck.core.result import ToolResult
from tooldeck.core.tool import Arguments
from tooldeck.providers.base import ToolsProvider

__all__ = ["WrapperProvider"]


class WrapperProvider(ToolsProvider):
    """A provider that forwards ``definitions``, ``execute`` and ``close`` to ``wrapped``."""

    def __init__(self, wrapped: ToolsProvider) -> None:
        self.wrapped = wrapped
        self.id = wrapped.id

    async def definitions(self) -> list[ToolDefinition]:
        """The wrapped provider's definitions."""
        return await self.wrapped.definitions()

    async def execute(
        self, name: str, arguments: Arguments = None, ctx: ToolContext | None = None
    ) -> ToolResult:
        """Forward the call to the wrapped provider."""
        return await self.wrapped.execute(name, arguments, ctx)

    async def close(self) -> None:
        """Close the wrapped provider."""
        await self.wrapped.close()
