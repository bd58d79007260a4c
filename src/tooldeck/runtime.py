"""Assembly: settings → providers → the stack each caller sees, shared by every entry point.

Entry points (CLI, REST server, MCP server) build one ``Runtime`` at start-up, ``await
start()`` it, and close it on exit; nothing below this module reads configuration
(ARCHITECTURE.md, "Layers"). The stack, outermost first::

    Observed → Confirming → Filtered (a profile's view) → Policy → Composite
                                                                   ├─ ToolRegistry (local)
                                                                   └─ MCPToolsProvider × N
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx

from tooldeck.agent.base import Agent
from tooldeck.agent.model_agent import ModelAgent
from tooldeck.agent.router_agent import RouterAgent
from tooldeck.agent.runs import RunManager
from tooldeck.config import AgentSettings, Settings, TracingSettings, load_settings
from tooldeck.config_names import check_names
from tooldeck.core.context import ServiceContainer, ToolContext
from tooldeck.core.tool import ToolExecutor, ToolViews
from tooldeck.exceptions import ConfigError, ToolDeckError
from tooldeck.observability.audit import AuditStore
from tooldeck.observability.runs import RunStore
from tooldeck.observability.tracing import (
    TRACER_NAME,
    ToolTracer,
    global_tracer,
    make_tracer_provider,
)
from tooldeck.packs.brokerage import (
    BrokerageAnswers,
    BrokerageDataSource,
    brokerage_tools,
)
from tooldeck.packs.builtin import CALLER_CODE_TOOLS, Sandbox, builtin_tools, make_sandbox
from tooldeck.packs.builtin.llm import openai_client
from tooldeck.packs.loader import LoadError, load_tools
from tooldeck.providers.approvals import ApprovalStore
from tooldeck.providers.base import ToolsProvider
from tooldeck.providers.composite import CompositeToolsProvider
from tooldeck.providers.confirming import ConfirmingToolsProvider
from tooldeck.providers.mcp import MCPToolsProvider
from tooldeck.providers.policy import PolicyConfig, PolicyOverride, PolicyProvider
from tooldeck.providers.registry import ToolRegistry

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import TracerProvider as TracerProviderAPI

__all__ = ["Runtime", "build_runtime"]


@dataclass(kw_only=True)
class Runtime:
    """Everything an entry point needs, built once.

    Attributes:
        settings: The configuration in force.
        registry: Local tools.
        mcp: One provider per enabled MCP server, by id.
        root: Every tool (local and MCP), merged; names unique.
        policy: The policy wrapper (timeouts, retries, breakers) around ``root``.
        provider: The stack with no profile: every tool, confirmation applied, audited.
        approvals: Pending and decided approvals, shared by every view.
        audit: The audit store, or None when auditing is off.
        tracer: Opens a span per call, or None when tracing is off.
        services: Shared dependencies handed to every tool through ``ToolContext``.
        intents: Intent router over ``provider`` (seed 004 dispatch).
        runs: Chat runs (``tooldeck chat``, ``/api/chat``): the agent, its state
            machine and events.
    """

    settings: Settings
    registry: ToolRegistry
    mcp: dict[str, MCPToolsProvider]
    root: CompositeToolsProvider
    policy: PolicyProvider
    provider: ToolsProvider
    approvals: ApprovalStore
    audit: AuditStore | None
    tracer: ToolTracer | None
    services: ServiceContainer
    load_errors: list[LoadError] = field(default_factory=list)
    """Tool specs that failed to load (the rest started); entry points print them."""
    runs: RunManager = field(init=False)
    _views: dict[str, ToolsProvider] = field(default_factory=dict)
    _tracer_provider: TracerProvider | None = None
    _model_client: Any = None
    """The chat agent's ``openai.AsyncOpenAI`` client, closed with the runtime."""

    @property
    def policy_config(self) -> PolicyConfig:
        """Policies with every profile's layer (what ``tools --explain`` reads)."""
        return self.policy.config

    def view(self, profile: str | None = None) -> ToolsProvider:
        """The stack a caller of ``profile`` goes through (None: every tool).

        Raises:
            ConfigError: no such profile; the message lists the profiles.
        """
        if profile is None:
            return self.provider
        cached = self._views.get(profile)
        if cached is not None:
            return cached
        config = self.settings.profiles.get(profile)
        if config is None:
            known = ", ".join(sorted(self.settings.profiles)) or "none configured"
            raise ConfigError(f"unknown profile {profile!r}; profiles: {known}")
        view: ToolsProvider = ConfirmingToolsProvider(
            self.policy.filtered(config.tools, config.mcp_servers),
            tools=config.confirm,
            approvals=self.approvals,
            rule=lambda d: self.policy_config.resolve(d, profile).requires_confirmation,
        )
        if self.audit is not None or self.tracer is not None:
            view = view.observed(
                self.audit, self.tracer, fail_closed=self.settings.audit.fail_closed
            )
        self._views[profile] = view
        return view

    def context(self, **fields: Any) -> ToolContext:
        """A ``ToolContext`` carrying this runtime's services."""
        return ToolContext(services=self.services, **fields)

    async def start(self) -> None:
        """Connect the MCP servers (concurrently) and check the tool names.

        Tool names must be unique, and every tool name in the configuration must
        exist (``config_names``). A server that cannot start is reported in its
        provider's ``last_error`` and
        its tools are missing; the rest keeps working.

        Raises:
            DuplicateToolError: two providers serve the same tool name.
            ConfigError: the configuration names a tool, provider or server that does
                not exist; the message names the key and the closest names.
        """
        definitions = await self.root.all_definitions()
        down = [sid for sid, provider in self.mcp.items() if provider.last_error]
        check_names(self.settings, definitions, self.settings.all_mcp_servers(), down)

    async def aclose(self) -> None:
        """Cancel unfinished runs, close providers and clients, flush the audit store.

        Providers: MCP sessions; clients: HTTP, the sandbox, the chat model's.
        """
        await self.runs.aclose()
        if self._model_client is not None:
            await self._model_client.close()
        await self.root.close()
        for service in self.services.created():
            if isinstance(service, httpx.AsyncClient | Sandbox):
                await service.aclose()
        if self.audit is not None:
            await asyncio.to_thread(self.audit.close)
        if self._tracer_provider is not None:  # flush spans still in the batch
            await asyncio.to_thread(self._tracer_provider.shutdown)

    def close(self) -> None:
        """Synchronous ``aclose`` for code outside an event loop."""
        asyncio.run(self.aclose())


class _RuntimeViews(ToolViews):
    """``ToolViews`` over a runtime, for tools that call tools (``execute_script``)."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def view(self, profile: str | None) -> ToolExecutor:
        """The runtime's view for ``profile``."""
        return self.runtime.view(profile)

    async def names(self, profile: str | None) -> list[str]:
        """Names of the tools the view lists."""
        return sorted(d.name for d in await self.runtime.view(profile).definitions())


def build_runtime(
    settings: Settings | None = None,
    *,
    tracer_provider: TracerProviderAPI | None = None,
    load_entry_points: bool = True,
) -> Runtime:
    """Build the runtime from ``settings`` (default: ``load_settings()``); nothing connects yet.

    Your own tools come from ``settings.tools`` and the ``tooldeck.packs`` entry points
    (``packs.loader``; ``load_entry_points=False`` skips the latter): one that fails to
    load is listed in ``Runtime.load_errors`` (the CLI prints them), and the rest starts.

    Spans go to ``tracer_provider`` when given (tests pass one with an in-memory
    exporter), else to the exporter of ``[tracing]``, else to a tracer provider the
    application set globally before this call; with none of them, there are no spans.

    Raises:
        ConfigError: invalid configuration (e.g. an unreadable ``mcp_config`` file).
        DataPackError: the brokerage data file is missing or malformed (checked at
            start-up so a bad file fails fast, with file, section and field).
    """
    settings = settings or load_settings()
    try:
        servers = settings.all_mcp_servers()
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    registry = ToolRegistry()
    services = ServiceContainer()
    services.register(Settings, settings)
    services.register_factory(httpx.AsyncClient, lambda: httpx.AsyncClient(timeout=30.0))
    if settings.brokerage.enabled:
        source = BrokerageDataSource(settings.brokerage.data_path)
        source.load()
        services.register(BrokerageDataSource, source)
        for tool in brokerage_tools(source):
            registry.register(tool)
    policy_config = settings.policy_config()
    if settings.builtin.enabled:
        sandbox = make_sandbox(settings.builtin.python, os.environ, settings.builtin.roots)
        services.register(Sandbox, sandbox)
        for builtin in builtin_tools(settings.builtin, environ=os.environ, sandbox=sandbox):
            registry.register(builtin)
        policy_config = _caller_code_defaults(policy_config)
    base_dir = settings.config_file.parent if settings.config_file else None
    user = load_tools(settings.tools, base_dir, entry_points=load_entry_points)
    for user_tool in user.tools:
        try:
            registry.register(user_tool)
        except ToolDeckError as exc:  # a name clash: say so, keep the rest
            user.errors.append(LoadError(user_tool.definition.name, str(exc)))
    mcp = {sid: MCPToolsProvider(sid, cfg) for sid, cfg in servers.items() if cfg.enabled}
    prefixes = {sid: cfg.prefix for sid, cfg in servers.items() if cfg.prefix}
    root = CompositeToolsProvider([registry, *user.providers, *mcp.values()], prefixes=prefixes)
    policy = PolicyProvider(root, policy_config)
    approvals = ApprovalStore(settings.approvals.ttl_s)
    provider: ToolsProvider = ConfirmingToolsProvider(
        policy, approvals=approvals, rule=lambda d: policy_config.resolve(d).requires_confirmation
    )
    audit = None
    if settings.audit.enabled:
        retention = settings.audit.retention_days
        audit = AuditStore(
            settings.audit_url,
            retention_s=None if retention is None else retention * 86_400,
            durability=settings.audit.durability,
        )
        services.register(AuditStore, audit)
        approvals.on_decision(lambda approval: audit.record_decision(approval.as_dict()))
    tracer, own_provider = _tracer(settings.tracing, tracer_provider)
    if audit is not None or tracer is not None:
        provider = provider.observed(audit, tracer, fail_closed=settings.audit.fail_closed)
    services.register(ToolsProvider, provider)  # type: ignore[type-abstract]
    services.register(ApprovalStore, approvals)
    runtime = Runtime(
        settings=settings,
        registry=registry,
        mcp=mcp,
        root=root,
        policy=policy,
        provider=provider,
        approvals=approvals,
        audit=audit,
        tracer=tracer,
        services=services,
        load_errors=user.errors,
        _tracer_provider=own_provider,
    )
    services.register(ToolViews, _RuntimeViews(runtime))  # type: ignore[type-abstract]
    data = services.get_optional(BrokerageDataSource)
    pack = BrokerageAnswers(data) if data else None
    if settings.agent.model is not None:
        runtime._model_client = _model_client(settings.agent)
    runtime.runs = RunManager(
        view=runtime.view,
        context=runtime.context,
        agent=_agent_factory(settings.agent, pack, runtime._model_client),
        store=RunStore(audit.engine) if audit is not None else None,
        confirm_timeout_s=settings.approvals.ttl_s,
        keep=settings.agent.max_runs_in_memory,
        tracer=tracer.tracer if tracer is not None else None,
    )
    return runtime


def _model_client(config: AgentSettings) -> Any:
    """The ``openai.AsyncOpenAI`` client of ``[agent]``.

    Raises:
        ConfigError: the ``openai`` package is missing.
    """
    try:
        return openai_client(
            "[agent] model", config.base_url, config.api_key, config.timeout_s, max_retries=1
        )
    except ImportError as exc:
        raise ConfigError(str(exc)) from None


def _agent_factory(
    config: AgentSettings, pack: BrokerageAnswers | None, client: Any
) -> Callable[[ToolsProvider], Agent]:
    """Makes each run's agent.

    The model loop with ``client`` when ``[agent] model`` is set, else the intent router;
    without the brokerage pack either, every run fails saying what to configure.
    """
    model = config.model
    if model is None:
        if pack is None:
            return _no_agent
        agent = RouterAgent(pack)
        return lambda view: agent
    return lambda view: ModelAgent(
        client,
        model,
        view,
        max_steps=config.max_steps,
        temperature=config.temperature,
        max_tokens=config.max_tokens,
        strict_tools=config.strict_tools,
        figures=pack.figures if pack else None,
    )


def _no_agent(view: ToolsProvider) -> Agent:
    raise ConfigError(
        "the chat agent needs [agent] model (an OpenAI-compatible endpoint) or the "
        "brokerage pack ([brokerage] enabled = true) for its intent router"
    )


def _caller_code_defaults(config: PolicyConfig) -> PolicyConfig:
    """``config`` with the breaker off for tools that run the caller's code, unless set.

    A failure of ``python`` or ``shell`` is most often the code's, not the tool's;
    five in a row must not lock a model out while it fixes its code.
    """
    tools = dict(config.tools)
    for name in CALLER_CODE_TOOLS:
        own = tools.get(name)
        values = own.model_dump(exclude_unset=True) if own is not None else {}
        tools[name] = PolicyOverride(**{"breaker_enabled": False, **values})
    return config.model_copy(update={"tools": tools})


def _tracer(
    config: TracingSettings, given: TracerProviderAPI | None
) -> tuple[ToolTracer | None, TracerProvider | None]:
    """The call tracer, and the tracer provider the runtime owns (shuts down), if any."""
    capture = config.capture_content
    if given is not None:
        return ToolTracer(given.get_tracer(TRACER_NAME), capture_content=capture), None
    if config.exporter == "none":
        return global_tracer(capture_content=capture), None
    owned = make_tracer_provider(
        config.exporter,
        endpoint=config.endpoint,
        headers=config.headers,
        service_name=config.service_name,
        schedule_delay_ms=config.schedule_delay_ms,
    )
    return ToolTracer(owned.get_tracer(TRACER_NAME), capture_content=capture), owned
