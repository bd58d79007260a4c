"""Assembly: settings → registry → provider stack → audit, shared by every entry point.

Entry points (CLI, REST server) build one ``Runtime`` at start-up and close it on exit;
nothing below this module reads configuration (ARCHITECTURE.md, "Layers").
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from tooldeck.config import Settings, load_settings
from tooldeck.core.context import ServiceContainer, ToolContext
from tooldeck.core.intents import IntentRouter
from tooldeck.observability.audit import AuditStore
from tooldeck.packs.brokerage import BrokerageDataSource, brokerage_intents, brokerage_tools
from tooldeck.providers.base import ToolsProvider
from tooldeck.providers.policy import PolicyProvider
from tooldeck.providers.registry import ToolRegistry

__all__ = ["Runtime", "build_runtime"]


@dataclass(kw_only=True)
class Runtime:
    """Everything an entry point needs, built once.

    Attributes:
        settings: The configuration in force.
        registry: Local tools.
        policy: The policy wrapper (timeouts, retries, breakers) around the registry.
        provider: The root provider every call goes through (audit outermost).
        audit: The audit store, or None when auditing is off.
        services: Shared dependencies handed to every tool through ``ToolContext``.
        intents: Intent router over ``provider`` (seed 004 dispatch).
    """

    settings: Settings
    registry: ToolRegistry
    policy: PolicyProvider
    provider: ToolsProvider
    audit: AuditStore | None
    services: ServiceContainer
    intents: IntentRouter

    def context(self, **fields: Any) -> ToolContext:
        """A ``ToolContext`` carrying this runtime's services."""
        return ToolContext(services=self.services, **fields)

    async def aclose(self) -> None:
        """Close providers and flush the audit store."""
        await self.provider.close()
        if self.audit is not None:
            await asyncio.to_thread(self.audit.close)

    def close(self) -> None:
        """Synchronous ``aclose`` for code outside an event loop."""
        asyncio.run(self.aclose())


def build_runtime(settings: Settings | None = None) -> Runtime:
    """Build the runtime from ``settings`` (default: ``load_settings()``).

    Raises:
        ConfigError: invalid configuration.
        DataPackError: the brokerage data file is missing or malformed (checked at
            start-up so a bad file fails fast, with file, section and field).
    """
    settings = settings or load_settings()
    registry = ToolRegistry()
    services = ServiceContainer()
    services.register(Settings, settings)
    if settings.brokerage.enabled:
        source = BrokerageDataSource(settings.brokerage.data_path)
        source.load()
        services.register(BrokerageDataSource, source)
        for tool in brokerage_tools(source):
            registry.register(tool)
    policy = PolicyProvider(registry, settings.policy)
    provider: ToolsProvider = policy
    audit = None
    if settings.audit.enabled:
        audit = AuditStore(settings.audit_url)
        services.register(AuditStore, audit)
        provider = policy.observed(audit)
    services.register(ToolsProvider, provider)  # type: ignore[type-abstract]
    return Runtime(
        settings=settings,
        registry=registry,
        policy=policy,
        provider=provider,
        audit=audit,
        services=services,
        intents=IntentRouter(provider, brokerage_intents()),
    )
