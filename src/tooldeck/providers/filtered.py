"""``FilteredToolsProvider``: a profile's view of a shared provider (seed 002)."""

from __future__ import annotations

import re
from collections.abc import Coroutine, Iterable
from fnmatch import translate
from typing import Any

from tooldeck.core.context import ToolContext
from tooldeck.core.definition import ToolDefinition
from tooldeck.core.result import ToolResult
from tooldeck.core.tool import Arguments
from tooldeck.providers.base import ToolsProvider, not_found
from tooldeck.providers.wrapper import WrapperProvider

__all__ = ["FilteredToolsProvider", "compile_globs"]


def compile_globs(patterns: Iterable[str]) -> re.Pattern[str]:
    """One regex matching any of the shell-style ``patterns`` (``get_*``, ``crm.?``)."""
    return re.compile("|".join(f"(?:{translate(p)})" for p in patterns) or "(?!)")


class FilteredToolsProvider(WrapperProvider):
    """Shows only the allowed tools of the wrapped provider.

    Semantics:
        A tool from an MCP server (``definition.server_id`` set) is visible when
        ``servers`` is None or lists that server id; any other tool is visible when
        ``tools`` is None or one of its names or globs matches the tool's name (seed
        002's ``enable_local_tools`` and ``enable_mcp_server_ids``). A hidden tool is
        absent from ``definitions()`` and executing it gives the same ``not_found`` as
        an unknown name. ``close()`` does not close the wrapped provider: it is shared
        by every profile.

    Args:
        wrapped: The provider to filter, usually the root provider.
        tools: Allowed local tool names or globs; None for all.
        servers: Allowed MCP server ids; None for all.
    """

    def __init__(
        self,
        wrapped: ToolsProvider,
        *,
        tools: Iterable[str] | None = None,
        servers: Iterable[str] | None = None,
    ) -> None:
        super().__init__(wrapped)
        self.tools = None if tools is None else tuple(tools)
        self.servers = None if servers is None else frozenset(servers)
        self._pattern = None if self.tools is None else compile_globs(self.tools)
        self._visible: dict[str, ToolDefinition] | None = None

    def allows(self, definition: ToolDefinition) -> bool:
        """Whether this view shows ``definition``."""
        if definition.server_id is not None:
            return self.servers is None or definition.server_id in self.servers
        return self._pattern is None or self._pattern.fullmatch(definition.name) is not None

    def transform_definitions(self, definitions: list[ToolDefinition]) -> list[ToolDefinition]:
        """The allowed definitions, in the wrapped provider's order."""
        shown = [d for d in definitions if self.allows(d)]
        self._visible = {n: d for d in shown for n in (d.name, *d.aliases)}
        return shown

    def reset(self) -> None:
        """Forget the visible set."""
        super().reset()
        self._visible = None

    def execute(
        self, name: str, arguments: Arguments = None, ctx: ToolContext | None = None
    ) -> Coroutine[Any, Any, ToolResult]:
        """Forward a visible tool's call; anything else is ``not_found``.

        Returns the wrapped provider's awaitable itself on the hot path (no extra
        coroutine frame per call, as ``ToolRegistry.execute``).
        """
        visible = self._visible
        if visible is not None and name in visible:
            return self.wrapped.execute(name, arguments, ctx)
        return self._slow(name, arguments, ctx)

    async def _slow(self, name: str, arguments: Arguments, ctx: ToolContext | None) -> ToolResult:
        shown = await self.all_definitions()
        visible = self._visible or {}
        if name not in visible:
            return not_found(name, [d.name for d in shown], ctx, visible)
        return await self.wrapped.execute(name, arguments, ctx)

    async def close(self) -> None:
        """Nothing to release: the wrapped provider is shared and closed by its owner."""
