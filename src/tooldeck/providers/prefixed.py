"""``PrefixedToolsProvider``: every tool renamed ``<prefix>_<name>``, so namesakes coexist."""

from __future__ import annotations

import re

from tooldeck.core.context import ToolContext
from tooldeck.core.definition import ToolDefinition
from tooldeck.core.result import ToolResult
from tooldeck.core.tool import Arguments
from tooldeck.providers.base import ToolsProvider, not_found
from tooldeck.providers.wrapper import WrapperProvider

__all__ = ["PrefixedToolsProvider"]


class PrefixedToolsProvider(WrapperProvider):
    """Shows the wrapped provider's tools as ``<prefix>_<name>`` (aliases prefixed too).

    Two MCP servers that both have a ``search`` tool can live side by side as
    ``github_search`` and ``jira_search``. Results report the prefixed name, in
    metadata and in the first mention of the tool in an error message.
    """

    def __init__(self, wrapped: ToolsProvider, prefix: str) -> None:
        super().__init__(wrapped)
        self.prefix = prefix
        self._head = f"{prefix}_"

    def transform_definitions(self, definitions: list[ToolDefinition]) -> list[ToolDefinition]:
        """The definitions under prefixed names."""
        head = self._head
        return [
            d.model_copy(
                update={"name": head + d.name, "aliases": tuple(head + a for a in d.aliases)}
            )
            for d in definitions
        ]

    def unavailable(self) -> dict[str, str]:
        """The wrapped provider's unavailable tools, under prefixed names."""
        return {self._head + n: why for n, why in self.wrapped.unavailable().items()}

    async def execute(
        self, name: str, arguments: Arguments = None, ctx: ToolContext | None = None
    ) -> ToolResult:
        """Strip the prefix and forward; an unknown name is ``not_found`` in prefixed names."""
        if not name.startswith(self._head):
            return not_found(name, [d.name for d in await self.all_definitions()], ctx)
        result = await self.wrapped.execute(name[len(self._head) :], arguments, ctx)
        if result.error is not None and result.error.type == "not_found":
            return not_found(name, [d.name for d in await self.all_definitions()], ctx)
        tool_name = result.metadata.tool_name
        if tool_name is not None and not tool_name.startswith(self._head):
            result = result.with_metadata(tool_name=self._head + tool_name)
        error = result.error
        if error is not None:  # "Invalid arguments for git_log" names what the caller called
            inner = re.escape(name[len(self._head) :])
            message = re.sub(rf"(?<![\w.-]){inner}(?![\w.-])", name, error.message, count=1)
            if message != error.message:
                result = result.model_copy(
                    update={"error": error.model_copy(update={"message": message})}
                )
        return result
