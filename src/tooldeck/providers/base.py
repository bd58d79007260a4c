"""The one provider interface (ARCHITECTURE.md, "The path of one call")."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Literal

from tooldeck.core.context import ToolContext, new_request_id
from tooldeck.core.definition import ToolDefinition
from tooldeck.core.names import closest_names
from tooldeck.core.result import ToolResult, trusted_metadata
from tooldeck.core.tool import Arguments, error_result

if TYPE_CHECKING:
    from tooldeck.observability.audit import AuditSink
    from tooldeck.observability.tracing import ToolTracer
    from tooldeck.providers.approvals import ApprovalStore
    from tooldeck.providers.confirming import ConfirmingToolsProvider
    from tooldeck.providers.filtered import FilteredToolsProvider
    from tooldeck.providers.observed import ObservedProvider
    from tooldeck.providers.policy import PolicyConfig, PolicyProvider
    from tooldeck.providers.prefixed import PrefixedToolsProvider

__all__ = ["ToolsProvider", "not_found", "unknown_name"]


class ToolsProvider(ABC):
    """A source of tools: ``definitions()``, ``execute()``, ``close()``.

    Semantics:
        ``execute`` never raises for a tool-level failure; it returns
        ``ToolResult(status="error")``. Wrappers (policy, observed, filtered, ...) are
        providers that wrap another, so every tool, local or remote, takes one path.
        When a provider's tool list changes (a registration, an MCP server's
        ``notifications/tools/list_changed``) it calls ``tools_changed()``, which
        notifies the listeners added with ``on_tools_changed``; wrappers listen to what
        they wrap, drop their cached definitions and pass the news up.
    """

    id: str = "provider"
    _listeners: list[Callable[[], None]] | None = None

    @abstractmethod
    async def definitions(self) -> list[ToolDefinition]:
        """The tools this provider serves."""

    @abstractmethod
    async def execute(
        self, name: str, arguments: Arguments = None, ctx: ToolContext | None = None
    ) -> ToolResult:
        """Run tool ``name`` with ``arguments`` (a mapping or JSON text)."""

    async def all_definitions(self) -> list[ToolDefinition]:
        """Every tool, those ``unavailable()`` right now included (for listings)."""
        return await self.definitions()

    def unavailable(self) -> Mapping[str, str]:
        """Tools temporarily left out of ``definitions()``, with why (e.g. circuit open).

        A model is not offered them, so it stops calling a broken tool; a call still
        reaches the tool's provider and gets its error (e.g. ``circuit_open``).
        """
        return {}

    async def close(self) -> None:  # noqa: B027 - optional hook, default no-op
        """Release connections and flush buffers. Idempotent."""

    def on_tools_changed(self, listener: Callable[[], None]) -> None:
        """Call ``listener()`` (synchronously, no arguments) whenever the tool list changes."""
        if self._listeners is None:
            self._listeners = []
        self._listeners.append(listener)

    def tools_changed(self) -> None:
        """Announce that ``definitions()`` may now answer differently."""
        for listener in self._listeners or ():
            listener()

    async def __aenter__(self) -> ToolsProvider:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # -- fluent assembly -----------------------------------------------------------------

    def with_policies(self, config: PolicyConfig | None = None) -> PolicyProvider:
        """Wrap this provider in timeout / retry / circuit-breaker / concurrency policies."""
        from tooldeck.providers.policy import PolicyProvider

        return PolicyProvider(self, config)

    def observed(
        self,
        sink: AuditSink | None,
        tracer: ToolTracer | None = None,
        *,
        fail_closed: Literal["destructive", "all", "none"] = "destructive",
    ) -> ObservedProvider:
        """Wrap this provider so every call is traced by ``tracer`` and recorded in ``sink``."""
        from tooldeck.providers.observed import ObservedProvider

        return ObservedProvider(self, sink, tracer, fail_closed=fail_closed)

    def filtered(
        self, tools: Iterable[str] | None = None, servers: Iterable[str] | None = None
    ) -> FilteredToolsProvider:
        """A view showing only ``tools`` (names or globs) and MCP ``servers`` (ids)."""
        from tooldeck.providers.filtered import FilteredToolsProvider

        return FilteredToolsProvider(self, tools=tools, servers=servers)

    def confirming(
        self, tools: Iterable[str] = (), approvals: ApprovalStore | None = None
    ) -> ConfirmingToolsProvider:
        """A view asking before tools in ``tools`` (names or globs) or marked as needing it."""
        from tooldeck.providers.confirming import ConfirmingToolsProvider

        return ConfirmingToolsProvider(self, tools=tools, approvals=approvals)

    def prefixed(self, prefix: str) -> PrefixedToolsProvider:
        """A view naming every tool ``<prefix>_<name>``."""
        from tooldeck.providers.prefixed import PrefixedToolsProvider

        return PrefixedToolsProvider(self, prefix)


async def unknown_name(
    provider: ToolsProvider, name: object, ctx: ToolContext | None
) -> ToolResult:
    """``not_found`` for a name that is not a string (a caller's bug), listing the tools.

    The outer layers of a stack call it before any lookup, so an unhashable name (a
    list, a dict) gives an envelope instead of a ``TypeError``.
    """
    known = [d.name for d in await provider.definitions()]
    return not_found(name, known, ctx)  # type: ignore[arg-type]


def not_found(
    name: str,
    known: Collection[str],
    ctx: ToolContext | None = None,
    candidates: Iterable[str] | None = None,
) -> ToolResult:
    """The ``not_found`` result for ``name``, listing ``known`` names and the closest ones.

    Every provider answers an unknown (or hidden) name with this same text, so a tool a
    profile hides reads exactly like a tool that does not exist. ``candidates`` (default
    ``known``) are the names "did you mean" picks from, e.g. aliases included.
    """
    if not isinstance(name, str):  # a caller's bug (None, a number): still an envelope
        name = repr(name)
    near = closest_names(name, known if candidates is None else candidates)
    hint = f" Did you mean {', '.join(repr(n) for n in near)}?" if near else ""
    shown = ", ".join(known) if len(known) <= 30 else f"{len(known)} tools"
    meta = trusted_metadata(name, None, (ctx and ctx.request_id) or new_request_id(), 0.0)
    return error_result(
        "not_found",
        f"Unknown tool {name!r}.{hint} Available: {shown or 'none'}.",
        meta,
        details={"closest": near},
    )
