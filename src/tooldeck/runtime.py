"""Assembly: settings → providers → the stack each caller sees, shared by every entry point.

Entry points (CLI, REST server, MCP server) build one ``Runtime`` at start-up, ``await
start()`` it, and close it on exit; nothing below this module reads configuration
(ARCHITECTURE.md, "Layers"). The stack, outermost first::

    Observed → Receipts → Confirming → Filtered (a profile's view) → Policy → Composite
                                                                              ├─ ToolRegistry
                                                                              └─ MCP × N
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import shlex
import shutil
import sys
import threading
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from tooldeck.config import (
    Settings,
    TracingSettings,
    keep_out_of_git,
    load_settings,
)
from tooldeck.config_names import check_names
from tooldeck.core.context import ServiceContainer, ToolContext
from tooldeck.core.credentials import CredentialStore
from tooldeck.core.definition import ToolDefinition
from tooldeck.core.extensions import Extensions
from tooldeck.core.names import closest_names
from tooldeck.core.notify import Notifications
from tooldeck.core.pack import (
    ConsolePage,
    PackEnvironment,
    PackReloader,
    PackRoutes,
    ResourceSource,
    TemporalAccess,
)
from tooldeck.core.tool import Tool, ToolExecutor, ToolViews
from tooldeck.exceptions import ConfigError, ToolDeckError
from tooldeck.observability.audit import AuditStore
from tooldeck.observability.runs import RunStore
from tooldeck.observability.tracing import (
    TRACER_NAME,
    ToolTracer,
    global_tracer,
    make_tracer_provider,
)
from tooldeck.pack_setup import PackSetup, with_pack_profiles, with_policy_defaults
from tooldeck.packs.loader import (
    MODULES_PACK,
    SHIPPED_PACKS,
    LoadError,
    load_tools,
    spec_files,
)
from tooldeck.providers.approvals import ApprovalStore
from tooldeck.providers.base import ToolsProvider
from tooldeck.providers.cache import CachingToolsProvider, caching_configured
from tooldeck.providers.composite import CompositeToolsProvider
from tooldeck.providers.confirming import ConfirmingToolsProvider
from tooldeck.providers.flow import FlowRules, FlowTracker
from tooldeck.providers.mcp import MCPToolsProvider
from tooldeck.providers.mcp_per_user import PerUserMCPToolsProvider
from tooldeck.providers.policy import PolicyConfig, PolicyProvider
from tooldeck.providers.profiled import ProfiledProvider
from tooldeck.providers.receipt_file import ReceiptFile, ReceiptStore
from tooldeck.providers.receipts import ReceiptsProvider
from tooldeck.providers.registry import ToolRegistry

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import TracerProvider as TracerProviderAPI

    from tooldeck.agent.engine import RunEngine
    from tooldeck.core.intents import IntentPack

__all__ = ["Runtime", "ToolsReload", "build_runtime"]


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
        receipts: Receipts of keyed calls with side effects, shared by every view, or
            None when ``[receipts] enabled = false``.
        flow: The data-flow labels of ``[flow]``, or None when it is off.
        flow_tracker: What each run has read, shared by every view.
        audit: The audit store, or None when auditing is off.
        tracer: Opens a span per call, or None when tracing is off.
        services: Shared dependencies handed to every tool through ``ToolContext``.
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
    receipts: ReceiptStore | None
    audit: AuditStore | None
    tracer: ToolTracer | None
    services: ServiceContainer
    load_errors: list[LoadError] = field(default_factory=list)
    """Tool specs that failed to load (the rest started); entry points print them."""
    packs: dict[str, str] = field(default_factory=dict)
    """Each shipped pack: ``on (why)`` or ``off (why)`` (entry points say so at start)."""
    routes: list[Callable[[], PackRoutes]] = field(default_factory=list)
    """The packs' REST routes, made by the server (``PackParts.routes``)."""
    console: list[ConsolePage] = field(default_factory=list)
    """The packs' console pages (``PackParts.console``)."""
    resources: list[ResourceSource] = field(default_factory=list)
    """The packs' MCP resources (``PackParts.resources``)."""
    background: list[Callable[[], Coroutine[Any, Any, None]]] = field(default_factory=list)
    """The packs' work while a server runs (``PackParts.background``, ``serving()``)."""
    workflows: list[type] = field(default_factory=list)
    activities: list[Callable[..., Any]] = field(default_factory=list)
    """The packs' Temporal workflows and activities, for the workers (``run_worker``)."""
    flow: FlowRules | None = None
    flow_tracker: FlowTracker = field(default_factory=FlowTracker)
    _runs: RunEngine | None = None
    _make_runs: Callable[[], RunEngine] | None = None
    _views: dict[str, ToolsProvider] = field(default_factory=dict)
    _receipt_layers: list[ReceiptsProvider] = field(default_factory=list)
    _tracer_provider: TracerProvider | None = None
    _notifications: Notifications | None = None
    """``[store] url``'s ``LISTEN`` connection (approvals and runs of other replicas)."""
    _user_tools: list[str] = field(default_factory=list)
    """Registry names of the tools loaded from ``settings.tools`` (what a reload swaps)."""
    _pack_tools: dict[str, list[str]] = field(default_factory=dict)
    """Registry names of each reloadable pack's tools."""
    _pack_reloaders: dict[str, Callable[[], Any]] = field(default_factory=dict)
    _reloading: threading.Lock = field(default_factory=threading.Lock, repr=False)
    """One pack reload at a time: a module install's (in a tool's thread) and another
    process's (``tooldeck modules``, seen by the modules pack's watch on the loop)."""
    answers: IntentPack | None = None
    """The packs' intent pack: the chat agent's router and the grounding's subjects."""
    _model_client: Any = None
    """The chat agent's ``openai.AsyncOpenAI`` client, closed with the runtime."""

    @property
    def model_client(self) -> Any:
        """The chat agent's ``openai.AsyncOpenAI`` client (``[agent] model``), or None."""
        return self._model_client

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
            flow=self.flow,
            tracker=self.flow_tracker,
        )
        view = ProfiledProvider(self.observed(self._with_receipts(view)), profile)
        self._views[profile] = view
        return view

    def resource_servers(self, profile: str | None) -> list[MCPToolsProvider]:
        """The upstream MCP servers whose resources and prompts ``profile`` sees.

        Those its view includes (``mcp_servers``); per-user servers are left out (their
        resources are each caller's own).

        Raises:
            ConfigError: no such profile.
        """
        self.view(profile)  # an unknown profile: the error that names the profiles
        config = self.settings.profiles.get(profile) if profile is not None else None
        allowed = config.mcp_servers if config is not None else None
        return [
            provider
            for sid, provider in self.mcp.items()
            if (allowed is None or sid in allowed)
            and not isinstance(provider, PerUserMCPToolsProvider)
        ]

    async def resource_sources(self, profile: str | None) -> list[ResourceSource]:
        """The packs' resource sources that go with a tool ``profile`` sees.

        Raises:
            ConfigError: no such profile.
        """
        if not self.resources:
            return []
        names = {d.name for d in await self.view(profile).definitions()}
        return [r for r in self.resources if r.tools & names]

    def observed(self, provider: ToolsProvider) -> ToolsProvider:
        """``provider`` behind the runtime's audit and tracing (when either is on)."""
        if self.audit is None and self.tracer is None:
            return provider
        return provider.observed(
            self.audit, self.tracer, fail_closed=self.settings.audit.fail_closed
        )

    def _with_receipts(self, provider: ToolsProvider) -> ToolsProvider:
        """``provider`` behind the receipts layer (when receipts are on)."""
        if self.receipts is None:
            return provider
        config = self.settings.receipts
        layer = ReceiptsProvider(
            provider, self.receipts, lease_s=config.lease_s, wait_s=config.wait_s
        )
        self._receipt_layers.append(layer)
        return layer

    def context(self, **fields: Any) -> ToolContext:
        """A ``ToolContext`` carrying this runtime's services."""
        return ToolContext(services=self.services, **fields)

    def approve_command(self) -> str | None:
        """The terminal command that approves a pending call of this runtime, or None.

        For ``ToolContext.approve_at``: ``tooldeck approvals approve {approval_id}``
        with this runtime's config file (or data dir) spelled out and the
        ``tooldeck`` beside this interpreter, so it works from any folder and shell
        (a desktop client starts the server from ``/`` with its own ``PATH``). None
        when approvals are kept in memory (``[approvals] persist = false``): no other
        process can decide them.
        """
        if not self.settings.approvals.persist:
            return None
        beside = Path(sys.executable).parent / "tooldeck"
        found = shutil.which("tooldeck")
        program = "tooldeck" if found and Path(found) == beside else str(beside)
        config = self.settings.config_file
        where = (
            f"--config {shlex.quote(str(config.resolve()))}"
            if config is not None
            else f"--data-dir {shlex.quote(str(self.settings.data_dir.resolve()))}"
        )
        return f"{shlex.quote(program)} approvals approve {where} {{approval_id}}"

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

    @contextlib.asynccontextmanager
    async def serving(self) -> AsyncIterator[None]:
        """Run the packs' background work (``PackParts.background``) inside the block.

        For entry points that serve (``tooldeck serve``, ``tooldeck mcp``, ``tooldeck
        schedule run``); each piece is a task, cancelled when the block ends. One that
        fails is logged; the rest goes on.
        """
        tasks = [asyncio.create_task(_logged(work)) for work in self.background]
        try:
            yield
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def reload_tools(self) -> ToolsReload:
        """Load ``settings.tools`` again and swap their tools in the registry.

        All or nothing: when a spec fails to load (a syntax error mid-edit) or a new
        name clashes with another tool, the tools stay as they were and the report says
        why. Tools only: packs and providers of those specs need a restart. A swap
        tells the provider stack, so MCP clients get ``notifications/tools/list_changed``.
        """
        base_dir = self.settings.config_file.parent if self.settings.config_file else None
        loaded = load_tools(self.settings.tools, base_dir, entry_points=False, fresh=True)
        report, self._user_tools = self._swap(
            self._user_tools, loaded.tools, [str(e) for e in loaded.errors]
        )
        return report

    def reload_pack(self, name: str) -> ToolsReload:
        """Load pack ``name``'s tools anew (``PackParts.reload``) and swap them in.

        All or nothing, as ``reload_tools``. A pack without ``reload`` reports so.
        """
        reload = self._pack_reloaders.get(name)
        if reload is None:
            known = ", ".join(sorted(self._pack_reloaders)) or "none"
            return ToolsReload(errors=[f"pack {name!r} cannot reload; packs that can: {known}"])
        with self._reloading:
            try:
                tools = list(reload())
            except Exception as exc:  # a pack's loading can fail like any import
                return ToolsReload(errors=[f"pack {name}: {type(exc).__name__}: {exc}"])
            report, self._pack_tools[name] = self._swap(self._pack_tools.get(name, []), tools, [])
            return report

    def _swap(
        self, old: list[str], tools: list[Tool], errors: list[str]
    ) -> tuple[ToolsReload, list[str]]:
        """Replace the registry's tools named ``old`` by ``tools`` unless there are errors.

        Returns the report and the names now registered (``old`` when nothing changed).
        """
        before = {n: t.definition for n in old if (t := self.registry.get(n))}
        new = {tool.definition.name: tool for tool in tools}
        taken = set(self.registry.names) - set(before)
        errors = [
            *errors,
            *(f"{name}: the name is taken by another tool" for name in new if name in taken),
        ]
        changed = sorted(n for n in new.keys() & before.keys() if new[n].definition != before[n])
        report = ToolsReload(
            added=sorted(new.keys() - before.keys()),
            removed=sorted(before.keys() - new.keys()),
            changed=changed,
            errors=errors,
        )
        if errors:
            return report, old
        for name in old:
            self.registry.unregister(name)
        for tool in new.values():
            self.registry.register(tool)
        return report, list(new)

    async def watch_tools(
        self, on_reload: Callable[[ToolsReload], None], interval_s: float = 1.0
    ) -> None:
        """Reload ``settings.tools`` whenever one of their files changes; runs until cancelled.

        Polls the files' modification times every ``interval_s`` seconds (a few files:
        cheaper than a file-watching dependency) and calls ``on_reload`` with each
        reload's report.
        """
        base_dir = self.settings.config_file.parent if self.settings.config_file else None
        seen = _mtimes(spec_files(self.settings.tools, base_dir))
        while True:
            await asyncio.sleep(interval_s)
            now = _mtimes(spec_files(self.settings.tools, base_dir))
            if now != seen:
                seen = now
                on_reload(self.reload_tools())

    @property
    def runs(self) -> RunEngine:
        """The chat runs, made on first use (a ``RunEngine``).

        ``agent.runs.RunManager`` in process, or ``worker.engine.TemporalRuns`` with
        ``[runs] engine = "temporal"``.

        A command that only lists or calls tools (``tooldeck call``, ``tooldeck mcp``)
        never imports the agent.
        """
        if self._runs is None:
            assert self._make_runs is not None, "build_runtime sets it"
            self._runs = self._make_runs()
        return self._runs

    async def aclose(self) -> None:
        """Cancel unfinished runs, close providers and clients, flush the audit store.

        Providers: MCP sessions; clients: HTTP, the sandbox, the chat model's.
        """
        if self._runs is not None:
            await self._runs.aclose()
        if self._model_client is not None:
            await self._model_client.close()
        for layer in self._receipt_layers:  # keyed calls under way store their results
            await layer.drain()
        await self.root.close()
        for service in self.services.created():  # HTTP client, sandbox, a pack's own
            close = getattr(service, "aclose", None)
            if inspect.iscoroutinefunction(close) and not isinstance(service, ToolsProvider):
                await close()
        if self.audit is not None:
            await asyncio.to_thread(self.audit.close)
        self.approvals.close()
        if self._notifications is not None:
            await asyncio.to_thread(self._notifications.close)
        if self.receipts is not None:
            self.receipts.close()
        if self._tracer_provider is not None:  # flush spans still in the batch
            await asyncio.to_thread(self._tracer_provider.shutdown)

    def close(self) -> None:
        """Synchronous ``aclose`` for code outside an event loop.

        Raises:
            RuntimeError: called inside a running event loop, where the runtime's tasks
                live: the message says to ``await runtime.aclose()`` instead.
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            asyncio.run(self.aclose())
            return
        raise RuntimeError(
            "Runtime.close() was called inside a running event loop; use "
            "`await runtime.aclose()` there (close() is for code outside one)"
        )


@dataclass(frozen=True, slots=True)
class ToolsReload:
    """What a reload did: tool names added, removed, changed; or why not.

    From ``Runtime.reload_tools`` (your own tools) or ``Runtime.reload_pack``.
    """

    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    """Non-empty: nothing was swapped, the previous tools still serve."""

    def __str__(self) -> str:
        if self.errors:
            return "tools not reloaded (the previous ones still serve): " + "; ".join(self.errors)
        parts = [f"+{n}" for n in self.added] + [f"-{n}" for n in self.removed]
        parts += [f"~{n}" for n in self.changed]
        return "tools reloaded: " + (" ".join(parts) or "no change to names or schemas")


async def _logged(work: Callable[[], Coroutine[Any, Any, None]]) -> None:
    try:
        await work()
    except asyncio.CancelledError:
        raise
    except Exception:
        logging.getLogger("tooldeck").exception("a pack's background work stopped")


def _mtimes(files: list[Path]) -> dict[Path, int]:
    stamps: dict[Path, int] = {}
    for path in files:
        with contextlib.suppress(OSError):
            stamps[path] = path.stat().st_mtime_ns
    return stamps


class _RuntimeViews(ToolViews):
    """``ToolViews`` over a runtime, for tools that call tools (``execute_script``)."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def view(self, profile: str | None) -> ToolExecutor:
        """The runtime's view for ``profile``."""
        return self.runtime.view(profile)

    async def names(self, profile: str | None) -> list[str]:
        """Names of the tools the view lists."""
        return sorted(d.name for d in await self.definitions(profile))

    async def definitions(self, profile: str | None) -> list[ToolDefinition]:
        """The definitions the view lists."""
        return await self.runtime.view(profile).definitions()

    def observed(self, tools: ToolExecutor) -> ToolExecutor:
        """``tools`` behind the runtime's audit and tracing (a provider; others as they are)."""
        return self.runtime.observed(tools) if isinstance(tools, ToolsProvider) else tools


class _RuntimePacks(PackReloader):
    """``PackReloader`` over a runtime, for a pack's tools (``module_admin``)."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def reload_pack(self, name: str) -> list[str]:
        """``Runtime.reload_pack``'s problems (empty: swapped)."""
        return self.runtime.reload_pack(name).errors


def build_runtime(
    settings: Settings | None = None,
    *,
    tracer_provider: TracerProviderAPI | None = None,
    load_entry_points: bool = True,
) -> Runtime:
    """Build the runtime from ``settings`` (default: ``load_settings()``); nothing connects yet.

    The shipped packs (``SHIPPED_PACKS``), your own tools (``settings.tools``) and the
    ``tooldeck.packs`` entry points (``load_entry_points=False`` skips them) load through
    ``packs.loader``; each ``Pack`` is set up with its table. One that fails to load is
    listed in ``Runtime.load_errors`` (the CLI prints them), and the rest starts.

    Spans go to ``tracer_provider`` when given (tests pass one with an in-memory
    exporter), else to the exporter of ``[tracing]``, else to a tracer provider the
    application set globally before this call; with none of them, there are no spans.

    Raises:
        ConfigError: invalid configuration (e.g. an unreadable ``mcp_config`` file, a
            ``[packs.<name>]`` table no pack reads).
        DataPackError: the brokerage data file is missing or malformed (checked at
            start-up so a bad file fails fast, with file, section and field).
    """
    settings = settings or load_settings()
    keep_out_of_git(settings.data_dir)
    try:
        servers = settings.all_mcp_servers()
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    registry = ToolRegistry()
    services = ServiceContainer()
    services.register(Settings, settings)
    base_dir = settings.config_file.parent if settings.config_file else None
    services.register(
        PackEnvironment,
        PackEnvironment(settings.data_dir, base_dir, settings.store.url, _temporal(settings)),
    )
    services.register(Extensions, Extensions())
    services.register_factory(httpx.AsyncClient, lambda: httpx.AsyncClient(timeout=30.0))
    services.register_factory(CredentialStore, partial(open_credentials, settings))  # type: ignore[type-abstract]
    shipped = load_tools((*SHIPPED_PACKS, MODULES_PACK), entry_points=False)
    user = load_tools(settings.tools, base_dir, entry_points=load_entry_points)
    errors = [*shipped.errors, *user.errors]
    packs = PackSetup(settings, services)
    for pack in shipped.packs:
        packs.add(pack, errors, shipped=True)
    for pack in user.packs:
        packs.add(pack, errors)
    packs.check_tables()
    user_tools: list[str] = []
    imported = _openapi_tools(settings, base_dir, errors)
    for tool in [*packs.tools, *shipped.tools, *user.tools, *imported]:
        try:
            registry.register(tool)
        except ToolDeckError as exc:  # a name clash: say so, keep the rest
            errors.append(LoadError(tool.definition.name, str(exc)))
        else:
            if tool in user.tools:
                user_tools.append(tool.definition.name)
    settings = with_pack_profiles(settings, packs.profiles, set(registry.names))
    policy_config = with_policy_defaults(settings.policy_config(), packs.policy_defaults)
    if base_dir is not None:  # relative args and cwd mean the project, not where we started
        servers = {
            sid: cfg.model_copy(update={"cwd": base_dir / (cfg.cwd or ".")})
            if cfg.command is not None
            else cfg
            for sid, cfg in servers.items()
        }
    credentials = partial(services.get, CredentialStore)  # type: ignore[type-abstract]
    mcp = {
        sid: (PerUserMCPToolsProvider if cfg.per_user else MCPToolsProvider)(
            sid, cfg, credentials=credentials
        )
        for sid, cfg in servers.items()
        if cfg.enabled
    }
    prefixes = {sid: cfg.prefix for sid, cfg in servers.items() if cfg.prefix}
    providers = [registry, *shipped.providers, *user.providers, *mcp.values()]
    root = CompositeToolsProvider(providers, prefixes=prefixes)
    policy = PolicyProvider(root, policy_config)
    notifications = Notifications(settings.store.url) if settings.store.url else None
    approvals = ApprovalStore(
        settings.approvals.ttl_s,
        path=settings.data_dir / "approvals.db" if settings.approvals.persist else None,
        url=settings.approvals_url,
        notifications=notifications if settings.approvals.url is None else None,
    )
    flow = FlowRules(settings.flow) if settings.flow.enabled else None
    flow_tracker = FlowTracker()
    below: ToolsProvider = policy
    if caching_configured(policy_config):
        below = CachingToolsProvider(policy, policy_config)
        services.register(CachingToolsProvider, below)  # its stats reach /metrics
    provider: ToolsProvider = ConfirmingToolsProvider(
        below,
        approvals=approvals,
        rule=lambda d: policy_config.resolve(d).requires_confirmation,
        flow=flow,
        tracker=flow_tracker,
    )
    receipts = _receipt_store(settings)
    audit = None
    if settings.audit.enabled:
        retention = settings.audit.retention_days
        local = settings.audit_url.startswith("sqlite")  # else its journal is in the data dir
        audit = AuditStore(
            settings.audit_url,
            retention_s=None if retention is None else retention * 86_400,
            durability=settings.audit.durability,
            fallback_path=None if local else settings.data_dir / "audit-fallback.jsonl",
            journal_dir=None if local else settings.data_dir / "audit.journal",
        )
        services.register(AuditStore, audit)
        approvals.on_decision(lambda approval: audit.record_decision(approval.as_dict()))
    tracer, own_provider = _tracer(settings.tracing, tracer_provider)
    services.register(ApprovalStore, approvals)
    runtime = Runtime(
        settings=settings,
        registry=registry,
        mcp=mcp,
        root=root,
        policy=policy,
        provider=provider,
        approvals=approvals,
        receipts=receipts,
        flow=flow,
        flow_tracker=flow_tracker,
        audit=audit,
        tracer=tracer,
        services=services,
        load_errors=errors,
        packs=packs.states,
        routes=packs.routes,
        console=packs.console,
        resources=packs.resources,
        background=packs.background,
        workflows=packs.workflows,
        activities=packs.activities,
        _notifications=notifications,
        _user_tools=user_tools,
        _pack_tools={
            name: [n for n in names if n in registry.names]
            for name, names in packs.tools_of.items()
            if name in packs.reloaders
        },
        _pack_reloaders=dict(packs.reloaders),
        _tracer_provider=own_provider,
    )
    provider = runtime.provider = runtime.observed(runtime._with_receipts(provider))
    services.register(ToolsProvider, provider)  # type: ignore[type-abstract]
    services.register(ToolViews, _RuntimeViews(runtime))  # type: ignore[type-abstract]
    services.register(PackReloader, _RuntimePacks(runtime))  # type: ignore[type-abstract]
    if settings.agent.model is not None:
        from tooldeck.agent.factory import model_client

        runtime._model_client = model_client(settings.agent)
    answers = runtime.answers = packs.answers

    def make_runs() -> RunEngine:
        if settings.runs.engine == "temporal":
            try:
                from tooldeck.worker.engine import TemporalRuns
            except ImportError:
                raise ConfigError(
                    '[runs] engine = "temporal" needs temporalio: '
                    "pip install 'tooldeck[temporal]'"
                ) from None
            return TemporalRuns(
                settings.runs, profiles=runtime.view, confirm_timeout_s=settings.approvals.ttl_s
            )
        from tooldeck.agent.factory import agent_factory
        from tooldeck.agent.runs import RunManager

        return RunManager(
            view=runtime.view,
            context=runtime.context,
            agent=agent_factory(settings.agent, answers, runtime._model_client),
            store=RunStore(audit.engine) if audit is not None else None,
            approvals=approvals,
            confirm_timeout_s=settings.approvals.ttl_s,
            keep=settings.agent.max_runs_in_memory,
            lease_s=settings.runs.lease_s,
            notifications=runtime._notifications if settings.audit.url is None else None,
            tracer=tracer.tracer if tracer is not None else None,
            subjects=answers.subjects if answers is not None else None,
        )

    runtime._make_runs = make_runs
    _offer_delegation(settings, runtime, services)
    return runtime


def _temporal(settings: Settings) -> TemporalAccess | None:
    """How packs reach Temporal with ``[runs] engine = "temporal"``; else None."""
    if settings.runs.engine != "temporal":
        return None

    async def connect() -> Any:
        from tooldeck.worker.engine import connect as connect_to

        return await connect_to(settings.runs)

    return TemporalAccess(connect=connect, task_queue=settings.runs.task_queue)


def _receipt_store(settings: Settings) -> ReceiptStore | None:
    """The receipts of ``[receipts]``: PostgreSQL by URL, else the data dir's SQLite file."""
    config = settings.receipts
    if not config.enabled:
        return None
    if settings.receipts_url is not None:
        from tooldeck.providers.receipt_postgres import PostgresReceipts

        return PostgresReceipts(settings.receipts_url, keep_s=config.keep_s)
    return ReceiptFile(settings.data_dir / "receipts.db", keep_s=config.keep_s)


def _offer_delegation(settings: Settings, runtime: Runtime, services: ServiceContainer) -> None:
    """Register ``agent.delegate.Delegation`` when a profile lists ``delegates``.

    Raises:
        ConfigError: a delegate names no profile (the closest one suggested).
    """
    delegates = {name: cfg.delegates for name, cfg in settings.profiles.items() if cfg.delegates}
    for name, targets in delegates.items():
        unknown = [t for t in targets if t not in settings.profiles]
        if unknown:
            near = closest_names(unknown[0], list(settings.profiles), n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise ConfigError(
                f"[profiles.{name}] delegates: no profile {unknown[0]!r}{hint}; "
                f"profiles: {', '.join(sorted(settings.profiles))}"
            )
    if delegates and settings.runs.engine == "temporal":  # a child run from an activity
        logging.getLogger("tooldeck").warning(
            "[profiles] delegates: not offered to runs on Temporal (embedded runs only)"
        )
    elif delegates:
        from tooldeck.agent.delegate import Delegation

        services.register(
            Delegation, Delegation(lambda: runtime.runs, delegates, runtime.flow_tracker)
        )


def _openapi_tools(
    settings: Settings, base_dir: Path | None, errors: list[LoadError]
) -> list[Tool]:
    """The tools of each enabled ``[openapi.<name>]``.

    One that cannot load is a load error (named; the others load), as a file of your
    own tools is; so is an operation that cannot be a tool (the document's others load).
    """
    if not settings.openapi:
        return []
    from tooldeck.providers.openapi import openapi_tools

    tools: list[Tool] = []
    for name, config in settings.openapi.items():
        if not config.enabled:
            continue
        refused: list[tuple[str, str]] = []
        try:
            tools += openapi_tools(name, config, base_dir, refused=refused)
        except ConfigError as exc:
            errors.append(LoadError(f"[openapi.{name}]", str(exc)))
        errors += [LoadError(f"[openapi.{name}] operation {op}", why) for op, why in refused]
    return tools


def open_credentials(settings: Settings) -> CredentialStore:
    """The credential store of ``settings`` (``[credentials]``, ``providers.credentials``).

    Made on first use (``ServiceContainer.get(CredentialStore)``): the key is looked
    up, or made, only when a secret is stored or read.

    Raises:
        ConfigError: the key or the files cannot be used; the message says why.
    """
    from tooldeck.providers.credentials import EncryptedCredentialStore, credential_key

    config = settings.credentials
    key = credential_key(
        settings.data_dir / "credentials.key", setting=config.key, use_keyring=config.use_keyring
    )
    return EncryptedCredentialStore(settings.data_dir / "credentials.db", key)


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
