"""tooldeck as an MCP server: a profile's view over stdio (``tooldeck mcp``) or HTTP (``/mcp``).

Built on the official SDK's low-level ``Server``: ``tools/list`` is the view's
definitions (``exporters.mcp.to_mcp``), ``tools/call`` runs through the same provider
stack as every other entry point and answers ``exporters.mcp.to_mcp_result`` (provenance
in ``_meta``). A tool needing confirmation is confirmed with MCP elicitation when the
client supports it (on 2026-07-28 connections as an ``InputRequiredResult`` the client
answers by repeating the call; on earlier ones as an ``elicitation/create`` request);
otherwise the call returns the ``confirmation_required`` error. A client that sends a
``progressToken`` gets the tool's ``ctx.report_progress`` as ``notifications/progress``.
The upstream MCP servers' resources, resource templates and prompts in the profile's
view pass through (``resources/list``, ``resources/read``, ``prompts/list``,
``prompts/get``).
Over HTTP, ``/mcp?profile=NAME`` picks the profile. When the tools change (``--reload``,
an MCP server's own change), clients are told: ``notifications/tools/list_changed`` on
a session, or a ``subscriptions/listen`` event for 2026-07-28 clients.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import sys
import weakref
from typing import TYPE_CHECKING, Any

from tooldeck.core.context import ANONYMOUS, ToolEvent, new_request_id
from tooldeck.core.pack import ResourceSource
from tooldeck.core.progress import EventRelay, progress_data
from tooldeck.core.result import trusted_metadata
from tooldeck.core.tool import error_result
from tooldeck.core.tool_search import SEARCH_TOOLS, DeferredTools, ToolIndex
from tooldeck.core.tool_vectors import text_embedder
from tooldeck.exceptions import ConfigError
from tooldeck.exporters.mcp import to_mcp, to_mcp_result
from tooldeck.providers.base import ToolsProvider
from tooldeck.providers.mcp import MCPToolsProvider
from tooldeck.providers.receipts import key_problem
from tooldeck.providers.registry import ToolRegistry
from tooldeck.runtime import Runtime, ToolsReload
from tooldeck.server.identity import principal_from_headers
from tooldeck.server.mcp_confirm import (
    apply_answers,
    ask_for_confirmation,
    ask_on_the_page,
    console_link,
    elicitation_modes,
    form_elicitation,
    url_elicitation,
)
from tooldeck.server.mcp_results import LongResults
from tooldeck.server.mcp_upstream import upstream_handlers

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from mcp.server import Server
    from mcp.server.context import ServerRequestContext
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.subscriptions import InMemorySubscriptionBus
    from mcp_types import (
        CallToolRequestParams,
        CallToolResult,
        InputRequiredResult,
        ListToolsResult,
    )

    from tooldeck.core.definition import ToolDefinition

__all__ = [
    "IDEMPOTENCY_KEY",
    "UNAVAILABLE_SERVERS",
    "create_mcp_http_app",
    "create_mcp_server",
    "serve_stdio",
]

UNAVAILABLE_SERVERS = "tooldeck/unavailable_servers"
"""``_meta`` key of a ``tools/list`` result: MCP servers whose tools are missing, and why."""
IDEMPOTENCY_KEY = "idempotencyKey"
"""``_meta`` key of a ``tools/call`` request: the caller's idempotency key, so a call
repeated after a lost connection runs at most once (``providers.receipts``)."""


def create_mcp_server(
    runtime: Runtime,
    profile: str | None = None,
    *,
    stdio: bool = False,
    search_tools: bool | None = None,
    channel: str | None = None,
) -> Server[Any]:
    """An MCP ``Server`` serving ``runtime.view(profile)``.

    With ``stdio``, the server has one client, its parent process: every request is on
    one channel (``channel``, default ``mcp:stdio-<random>``), so a run's data flow and
    its approvals are those of that client, whatever the protocol version.

    With ``search_tools`` (None: ``[server] mcp_search_tools``), a view of more than
    ``[agent] defer_tools_over`` tools is listed as ``search_tools`` plus the
    ``always_visible`` tools (``core.tool_search.DeferredTools``, one per connection
    and profile); a search's finds join that connection's list, and it is sent
    ``notifications/tools/list_changed``. Found tools come with their input schemas,
    so a client that does not list again can still call them; any tool of the view
    can be called.

    Raises:
        ConfigError: ``profile`` is not configured.
    """
    import mcp_types as types
    from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
    from mcp.shared.exceptions import MCPError
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    from tooldeck import __version__

    runtime.view(profile)  # fail fast on an unknown profile
    settings = runtime.settings
    searching = settings.server.mcp_search_tools if search_tools is None else search_tools
    deferred: weakref.WeakKeyDictionary[Any, dict[str | None, DeferredTools]] = (
        weakref.WeakKeyDictionary()
    )  # per connection and profile: what one client found is not listed to another

    def deferred_of(
        ctx: ServerRequestContext[Any], name: str | None, definitions: list[ToolDefinition]
    ) -> DeferredTools | None:
        if not searching:
            return None
        connection = getattr(ctx.session, "_connection", None) or ctx.session
        mine = deferred.setdefault(connection, {})
        current = mine.get(name)
        if current is not None and current.tool.index is ToolIndex.of(definitions):
            return current
        fresh = DeferredTools.over(
            definitions,
            settings.agent.defer_tools_over,
            settings.agent.always_visible,
            schemas=True,
            embedder=text_embedder(runtime.services),
        )
        if fresh is not None and current is not None:  # the tools changed: keep the finds
            fresh.found |= current.found
        if fresh is None:
            mine.pop(name, None)
        else:
            mine[name] = fresh
        return fresh

    command = runtime.approve_command()
    approve_at = f"in a terminal on the server's machine, run: {command}" if command else None
    only_client = (channel or f"mcp:stdio-{secrets.token_hex(8)}") if stdio else None
    listing: weakref.WeakSet[Any] = weakref.WeakSet()  # connections that listed the tools
    long_results = LongResults()  # the whole text of results cut for the client's model
    bus = InMemorySubscriptionBus()  # 2026-07-28 clients: subscriptions/listen streams

    def tools_changed() -> None:  # a reload, or an MCP server's own list_changed
        with contextlib.suppress(RuntimeError):  # no running loop: nobody to tell
            task = asyncio.get_running_loop().create_task(_tell(list(listing), bus))
            _pending.add(task)
            task.add_done_callback(_pending.discard)

    runtime.root.on_tools_changed(tools_changed)

    callers: weakref.WeakKeyDictionary[Any, str | None] = weakref.WeakKeyDictionary()

    def caller(ctx: ServerRequestContext[Any]) -> str | None:
        """The request's principal, as REST resolves it (``server.identity``).

        A session (2025-11-25 and before) belongs to the principal of its first
        request: another principal's request on it is refused, so a session id that
        leaks does not make its holder someone else.
        """
        if only_client is not None:
            return None  # stdio: the person who started the process
        headers = getattr(ctx.request, "headers", None)
        principal = principal_from_headers(settings.server.trust_user_header, headers)
        connection = getattr(ctx.session, "_connection", None)
        if connection is None or ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return principal
        owner = callers.setdefault(connection, principal)
        if owner != principal:
            raise MCPError(
                types.INVALID_REQUEST,
                "this MCP session was opened by another user; open a session of your own",
            )
        return principal

    def chosen(ctx: ServerRequestContext[Any]) -> str | None:
        request = ctx.request
        query = getattr(request, "query_params", None)
        return (query.get("profile") if query is not None else None) or profile

    def view(name: str | None) -> ToolsProvider:
        try:
            return runtime.view(name)
        except ConfigError as exc:  # ?profile= names no profile: say which exist
            raise MCPError(types.INVALID_PARAMS, str(exc)) from None

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> ListToolsResult:
        connection = getattr(ctx.session, "_connection", None)  # the SDK's per-request
        if connection is not None:  # session proxy lives one request; its connection lasts
            listing.add(connection)
        name = chosen(ctx)
        definitions = await view(name).definitions()
        searched = deferred_of(ctx, name, definitions)
        listed = definitions if searched is None else searched.visible()
        listing_body: dict[str, Any] = {"tools": to_mcp(listed)}
        down = {sid: p.last_error for sid, p in runtime.mcp.items() if p.last_error}
        if down:  # a client (and tooldeck doctor) can say why those tools are missing
            listing_body["_meta"] = {UNAVAILABLE_SERVERS: down}
        return types.ListToolsResult.model_validate(listing_body)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult | InputRequiredResult:
        name = chosen(ctx)
        user = caller(ctx)
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        # the SDK's session object lives one request; its connection lasts the session
        connection = getattr(ctx.session, "_connection", None) or ctx.session
        channel = channel_of(ctx)
        if modern and params.input_responses:
            await apply_answers(runtime, params, channel, user)
        modes = elicitation_modes(ctx)
        confirm = None
        if "form" in modes and not modern:
            confirm = form_elicitation(ctx)
        elif "url" in modes and not modern:  # the console's page; None when it is down
            confirm = url_elicitation(ctx, runtime)
        meta = params.meta or {}
        key = meta.get(IDEMPOTENCY_KEY)
        if key is not None:
            problem = key_problem(key) if isinstance(key, str) else "it must be a string"
            if problem is not None:
                bad = error_result(
                    "validation",
                    f"_meta.{IDEMPOTENCY_KEY}: {problem}",
                    trusted_metadata(params.name, None, new_request_id(), 0.0),
                )
                return types.CallToolResult.model_validate(to_mcp_result(bad))
        call_ctx = runtime.context(
            idempotency_key=key,
            user=user,
            profile=name,
            channel=channel,
            session_id=None if channel == "mcp" else channel,  # the run view groups by it
            # the JSON-RPC id repeats across sessions: it names the call, not its record
            request_id=f"mcp-{ctx.request_id}-{new_request_id()}",
            confirm=confirm,
            approve_at=None if "form" in modes else approve_at,  # nobody to ask here
        )
        searched = None
        if searching and params.name == SEARCH_TOOLS:
            searched = deferred_of(ctx, name, await view(name).definitions())
        if searched is not None:
            before = len(searched.found)
            search = runtime.observed(ToolRegistry([searched.tool]))  # audited as any call
            result = searched.note(await search.execute(params.name, params.arguments, call_ctx))
            if len(searched.found) > before:  # this client's list grew
                with contextlib.suppress(Exception):  # a client gone meanwhile
                    await connection.send_tool_list_changed()
        elif _progress_token(meta) is None:
            result = await view(name).execute(params.name, params.arguments or {}, call_ctx)
        else:  # the client follows the call: the tool's reports go out as it runs
            relay = EventRelay(_progress_sender(ctx.session))
            call_ctx = call_ctx.derive(event_emitter=relay)
            try:
                result = await view(name).execute(params.name, params.arguments or {}, call_ctx)
            finally:
                await relay.aclose()  # before the result: the spec's order
        error = result.error
        if modern and error is not None and error.type == "confirmation_required":
            details = error.details or {}
            if "form" in modes:
                return ask_for_confirmation(details)
            link = await console_link(runtime, details["approval_id"]) if "url" in modes else None
            if link is not None:
                return ask_on_the_page(details, link)
        wire = long_results.shorten(result, to_mcp_result(result), _owner(user, channel))
        return types.CallToolResult.model_validate(wire)

    def channel_of(ctx: ServerRequestContext[Any]) -> str:
        """The request's channel: its client's (stdio), else its connection's."""
        if only_client is not None:
            return only_client
        connection = getattr(ctx.session, "_connection", None) or ctx.session
        return _channel(connection, ctx.protocol_version in MODERN_PROTOCOL_VERSIONS)

    def upstream(ctx: ServerRequestContext[Any]) -> list[MCPToolsProvider]:
        name = chosen(ctx)
        view(name)  # an unknown profile: the MCP error that names the profiles
        return runtime.resource_servers(name)

    async def local(ctx: ServerRequestContext[Any]) -> list[ResourceSource]:
        name = chosen(ctx)
        view(name)
        owner = _owner(caller(ctx), channel_of(ctx))
        return [*await runtime.resource_sources(name), long_results.source(owner)]

    return _server_class()(
        "tooldeck",
        version=__version__,
        instructions="Typed tools; every result carries its provenance (source_id, as_of) in _meta.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_subscriptions_listen=ListenHandler(bus),
        **upstream_handlers(upstream, local),
    )


def _progress_token(meta: Any) -> str | int | None:
    """The ``progressToken`` of a request's ``_meta`` (MCP: a string or an integer)."""
    token = meta.get("progressToken", meta.get("progress_token"))
    return token if isinstance(token, str | int) and not isinstance(token, bool) else None


def _progress_sender(session: Any) -> Callable[[ToolEvent], Awaitable[None]]:
    """Sends a call's ``progress`` events as ``notifications/progress`` on its request."""

    async def send(event: ToolEvent) -> None:
        report = progress_data(event)
        if report is not None:
            await session.report_progress(*report)

    return send


_pending: set[asyncio.Task[None]] = set()
"""Notifications under way (a task needs a reference until it ends)."""


async def _tell(connections: list[Any], bus: InMemorySubscriptionBus) -> None:
    """Tell clients the tool list changed.

    2026-07-28 clients listening (``subscriptions/listen``) get a ``ToolsListChanged``
    event; earlier ones, on each connection that listed the tools and is still open, a
    ``notifications/tools/list_changed``.
    """
    from mcp.server.subscriptions import ToolsListChanged

    await bus.publish(ToolsListChanged())
    for connection in connections:
        with contextlib.suppress(Exception):  # closed meanwhile
            await connection.send_tool_list_changed()


def _server_class() -> type[Server[Any]]:
    from mcp.server import Server
    from mcp.server.lowlevel.server import NotificationOptions

    class ToolsServer(Server[Any]):
        """The SDK's ``Server`` announcing ``tools.listChanged`` (stdio and HTTP alike)."""

        def create_initialization_options(
            self, notification_options: Any = None, *args: Any, **kw: Any
        ) -> Any:
            options = notification_options or NotificationOptions(tools_changed=True)
            return super().create_initialization_options(options, *args, **kw)

    return ToolsServer


def _owner(user: str | None, channel: str) -> str:
    """Whose a kept long result is: the principal and the client's channel together."""
    return f"{user or ANONYMOUS}\x00{channel}"


_channels: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def _channel(session: Any, modern: bool) -> str:
    """The channel of an MCP call: ``mcp:<random id>`` per client connection.

    A 2026-07-28 exchange has no lasting connection (each request brings its own), so
    its channel is plain ``mcp``: the approval id, handed only to the client that made
    the call, and the repeat of the same call are what bind an answer to it.
    """
    if modern:
        return "mcp"
    channel = _channels.get(session)
    if channel is None:
        channel = _channels[session] = f"mcp:{secrets.token_hex(8)}"
    return channel


def create_mcp_http_app(
    runtime: Runtime, authorized: Callable[[Runtime, str], bool]
) -> tuple[Any, StreamableHTTPSessionManager]:
    """The streamable HTTP endpoint (an ASGI app) and its session manager.

    The caller runs ``manager.run()`` for the application's lifetime. Requests failing
    ``authorized(runtime, authorization_header)`` get 401. ``Host`` and ``Origin`` are
    checked for every route of the app by ``server.guard.RequestGuard`` (the SDK's own
    DNS-rebinding check is off so that ``server.allowed_hosts``/``allowed_origins``
    apply here too).
    """
    from mcp.server.streamable_http_manager import (
        StreamableHTTPASGIApp,
        StreamableHTTPSessionManager,
    )
    from mcp.server.transport_security import TransportSecuritySettings

    manager = StreamableHTTPSessionManager(
        app=create_mcp_server(runtime),
        security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    return _GuardedEndpoint(runtime, authorized, StreamableHTTPASGIApp(manager)), manager


class _GuardedEndpoint:
    """An ASGI app (a class, so Starlette routes every method to it) checking the API key."""

    def __init__(
        self, runtime: Runtime, authorized: Callable[[Runtime, str], bool], endpoint: Any
    ) -> None:
        self.runtime, self.authorized, self.endpoint = runtime, authorized, endpoint

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        from starlette.responses import JSONResponse

        headers = dict(scope.get("headers") or [])
        if not self.authorized(self.runtime, headers.get(b"authorization", b"").decode("latin-1")):
            response = JSONResponse(
                {
                    "detail": "missing or wrong API key: send 'Authorization: Bearer <server.api_key>'"
                },
                status_code=401,
                headers={"WWW-Authenticate": "Bearer"},
            )
            await response(scope, receive, send)
            return
        await self.endpoint(scope, receive, send)


async def serve_stdio(
    runtime: Runtime,
    profile: str | None = None,
    *,
    on_reload: Callable[[ToolsReload], None] | None = None,
    search_tools: bool | None = None,
) -> None:
    """Serve ``profile``'s view over stdin/stdout until the client disconnects.

    With ``on_reload``, the user's tools reload when their files change
    (``Runtime.watch_tools``), and the client gets ``notifications/tools/list_changed``.
    ``search_tools``: see ``create_mcp_server``. When the client goes, the approvals it
    asked for that nobody decided expire (``ApprovalStore.expire_pending``): they leave
    ``tooldeck approvals``' list instead of waiting there.
    """
    from mcp.server.stdio import stdio_server

    channel = f"mcp:stdio-{secrets.token_hex(8)}"
    server = create_mcp_server(
        runtime, profile, stdio=True, search_tools=search_tools, channel=channel
    )
    watcher = asyncio.create_task(runtime.watch_tools(on_reload)) if on_reload else None
    try:
        async with stdio_server() as (read_stream, write_stream), runtime.serving():
            await server.run(read_stream, write_stream, server.create_initialization_options())
    except* (BrokenPipeError, ConnectionResetError):  # the client left while we wrote
        # nobody reads stdout any more: point it at /dev/null so that the interpreter's
        # last flush does not print the same error (Python's docs, "Note on SIGPIPE")
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    finally:
        if watcher is not None:
            watcher.cancel()
        with contextlib.suppress(Exception):  # the client is gone: its requests with it
            runtime.approvals.expire_pending(channel)
