"""The one provider interface (ARCHITECTURE.md, "The path of one call")."""

from __future__ import annotations

from abc import ABC, abstractmethod
from types import TracebackType
from typing import TYPE_CHECKING

from tooldeck.core.context import ToolContext
from tooldeck.core.definition import ToolDefinition
from tooldeck.core.result import ToolResult
from tooldeck.core.tool import Arguments

if TYPE_CHECKING:
    from tooldeck.observability.audit import AuditSink
    from tooldeck.providers.observed import ObservedProvider
    from tooldeck.providers.policy import PolicyConfig, PolicyProvider

__all__ = ["ToolsProvider"]


class ToolsProvider(ABC):
    """A source of tools: ``definitions()``, ``execute()``, ``close()``.

    Semantics:
        ``execute`` never raises for a tool-level failure; it returns
        ``ToolResult(status="error")``. Wrappers (policy, observed, filtered, ...) are
        providers that wrap another, so every tool, local or remote, takes one path.
    """

    id: str = "provider"

    @abstractmethod
    async def definitions(self) -> list[ToolDefinition]:
        """The tools this provider serves."""

    @abstractmethod
    async def execute(
        self, name: str, arguments: Arguments = None, ctx: ToolContext | None = None
    ) -> ToolResult:
        """Run tool ``name`` with ``arguments`` (a mapping or JSON text)."""

    async def close(self) -> None:  # noqa: B027 - optional hook, default no-op
        """Release connections and flush buffers. Idempotent."""

    async def __aenter__(self) -> ToolsProvider:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def with_policies(self, config: PolicyConfig | None = None) -> PolicyProvider:
        """Wrap this provider in timeout / retry / circuit-breaker / concurrency policies."""
        from tooldeck.providers.policy import PolicyProvider

        return PolicyProvider(self, config)

    def observed(self, sink: AuditSink) -> ObservedProvider:
        """Wrap this provider so every call is recorded in ``sink``."""
        from tooldeck.providers.observed import ObservedProvider

        return ObservedProvider(self, sink)
