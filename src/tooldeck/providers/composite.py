"""``CompositeToolsProvider``: many providers merged into one, names unique (seed 002)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterable, Mapping
from typing import Any

from tooldeck.core.context import ToolContext
from tooldeck.core.definition import ToolDefinition
from tooldeck.core.result import ToolResult
from tooldeck.core.tool import Arguments
from tooldeck.exceptions import DuplicateToolError
from tooldeck.providers.base import ToolsProvider, not_found, unknown_name
from tooldeck.providers.prefixed import PrefixedToolsProvider

__all__ = ["CompositeToolsProvider"]


class CompositeToolsProvider(ToolsProvider):
    """The union of several providers' tools; each call goes to the provider serving it.

    Semantics:
        Definitions are gathered from every provider concurrently, in the order the
        providers were given, and cached until one of them announces a change. Two
        providers serving the same name (or alias) is a configuration error:
        ``definitions()`` raises ``DuplicateToolError`` naming both providers, unless
        the clash is resolved with ``prefixes`` (provider id → prefix, which wraps that
        provider in ``PrefixedToolsProvider``). ``close()`` closes every provider.

    Args:
        providers: The providers to merge.
        prefixes: Prefix to put before the tool names of the provider with that id.
        id: This provider's id.
    """

    def __init__(
        self,
        providers: Iterable[ToolsProvider],
        *,
        prefixes: Mapping[str, str] | None = None,
        id: str = "root",
    ) -> None:
        self.id = id
        prefixes = prefixes or {}
        self.providers = [
            PrefixedToolsProvider(p, prefixes[p.id]) if p.id in prefixes else p for p in providers
        ]
        self._routes: dict[str, ToolsProvider] | None = None
        self._definitions: list[ToolDefinition] = []
        for provider in self.providers:
            provider.on_tools_changed(self.tools_changed)

    def tools_changed(self) -> None:
        """Drop the merged index, then tell listeners."""
        self._routes = None
        super().tools_changed()

    async def definitions(self) -> list[ToolDefinition]:
        """Every provider's definitions, merged, minus ``unavailable()`` tools."""
        shown = await self.all_definitions()
        hidden = self.unavailable()
        return [d for d in shown if d.name not in hidden] if hidden else shown

    def unavailable(self) -> dict[str, str]:
        """What any provider reports unavailable."""
        hidden: dict[str, str] = {}
        for provider in self.providers:
            hidden.update(provider.unavailable())
        return hidden

    async def all_definitions(self) -> list[ToolDefinition]:
        """Every provider's definitions, merged.

        Raises:
            DuplicateToolError: two providers serve the same name or alias.
        """
        if self._routes is None:
            listed = await asyncio.gather(*(p.all_definitions() for p in self.providers))
            routes: dict[str, ToolsProvider] = {}
            owners: dict[str, str] = {}
            merged: list[ToolDefinition] = []
            for provider, definitions in zip(self.providers, listed, strict=True):
                for definition in definitions:
                    for name in (definition.name, *definition.aliases):
                        if name in routes and routes[name] is not provider:
                            raise DuplicateToolError(
                                f"tool name {name!r} is served by both provider "
                                f"{owners[name]!r} and provider {provider.id!r}; give one of "
                                f"them a prefix, e.g. prefixes={{{provider.id!r}: "
                                f"{provider.id!r}}} (tools become '{provider.id}_{name}')"
                            )
                        routes[name] = provider
                        owners[name] = provider.id
                    merged.append(definition)
            self._definitions = merged
            self._routes = routes
        return self._definitions

    def execute(
        self, name: str, arguments: Arguments = None, ctx: ToolContext | None = None
    ) -> Coroutine[Any, Any, ToolResult]:
        """Route the call to the provider serving ``name``; ``not_found`` if none does.

        Returns that provider's awaitable itself (no extra coroutine frame per call).
        """
        if type(name) is not str:
            return unknown_name(self, name, ctx)
        routes = self._routes
        provider = routes.get(name) if routes is not None else None
        if provider is not None:
            return provider.execute(name, arguments, ctx)
        return self._slow(name, arguments, ctx)

    async def _slow(self, name: str, arguments: Arguments, ctx: ToolContext | None) -> ToolResult:
        await self.all_definitions()
        routes = self._routes or {}
        provider = routes.get(name)
        if provider is None:
            return not_found(name, [d.name for d in self._definitions], ctx, routes)
        return await provider.execute(name, arguments, ctx)

    async def close(self) -> None:
        """Close every provider, even if one fails to close."""
        results = await asyncio.gather(*(p.close() for p in self.providers), return_exceptions=True)
        for outcome in results:
            if isinstance(outcome, BaseException):
                raise outcome
