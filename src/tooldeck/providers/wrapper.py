"""``WrapperProvider``: forwards everything to a wrapped provider; subclasses override one thing."""

from __future__ import annotations

from collections.abc import Mapping

from tooldeck.core.context import ToolContext
from tooldeck.core.definition import ToolDefinition
from tooldeck.core.result import ToolResult
from tooldeck.core.tool import Arguments
from tooldeck.providers.base import ToolsProvider

__all__ = ["WrapperProvider"]


class WrapperProvider(ToolsProvider):
    """A provider that forwards ``definitions``, ``execute`` and ``close`` to ``wrapped``.

    Semantics:
        ``all_definitions()`` is ``transform_definitions(wrapped.all_definitions())``,
        cached until the wrapped provider announces a change (``tools_changed``), which
        also clears what a subclass derives in ``reset()`` and is passed up to
        listeners. ``definitions()`` leaves out what ``unavailable()`` reports, without
        touching the cache, so a tool comes back as soon as it is available again.
    """

    def __init__(self, wrapped: ToolsProvider) -> None:
        self.wrapped = wrapped
        self.id = wrapped.id
        self._definitions: list[ToolDefinition] | None = None
        wrapped.on_tools_changed(self.tools_changed)

    async def all_definitions(self) -> list[ToolDefinition]:
        """The wrapped provider's definitions through ``transform_definitions`` (cached)."""
        cached = self._definitions
        if cached is None:
            cached = self.transform_definitions(await self.wrapped.all_definitions())
            self._definitions = cached
        return cached

    async def definitions(self) -> list[ToolDefinition]:
        """``all_definitions()`` minus the tools ``unavailable()`` right now."""
        shown = await self.all_definitions()
        hidden = self.unavailable()
        return [d for d in shown if d.name not in hidden] if hidden else shown

    def unavailable(self) -> Mapping[str, str]:
        """What the wrapped provider reports unavailable."""
        return self.wrapped.unavailable()

    def transform_definitions(self, definitions: list[ToolDefinition]) -> list[ToolDefinition]:
        """What this wrapper shows of the wrapped definitions; default: all, unchanged."""
        return definitions

    def reset(self) -> None:
        """Drop state derived from the wrapped definitions; called on every change."""
        self._definitions = None

    def tools_changed(self) -> None:
        """Reset, then tell this wrapper's own listeners."""
        self.reset()
        super().tools_changed()

    async def execute(
        self, name: str, arguments: Arguments = None, ctx: ToolContext | None = None
    ) -> ToolResult:
        """Forward the call to the wrapped provider."""
        return await self.wrapped.execute(name, arguments, ctx)

    async def close(self) -> None:
        """Close the wrapped provider."""
        await self.wrapped.close()
