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
import json
import secrets
import time
import weakref
from typing import TYPE_CHECKING, Any

from tooldeck.core.confirmation import (
    ConfirmationDecision,
    ConfirmationRequest,
    arguments_hash,
)
from tooldeck.core.context import ANONYMOUS, ToolEvent, new_request_id
from tooldeck.core.pack import ResourceSource
from tooldeck.core.progress import EventRelay, progress_data
from tooldeck.core.result import trusted_metadata
from tooldeck.core.tool import error_result
from tooldeck.core.tool_search import SEARCH_TOOLS, DeferredTools, ToolIndex
from tooldeck.core.tool_vectors import text_embedder
from tooldeck.exceptions import ConfigError
from tooldeck.exporters.mcp import to_mcp, to_mcp_result
from tooldeck.providers.approvals import Decider
from tooldeck.providers.base import ToolsProvider
from tooldeck.providers.mcp import MCPToolsProvider
from tooldeck.providers.receipts import key_problem
from tooldeck.providers.registry import ToolRegistry
from tooldeck.runtime import Runtime, ToolsReload
from tooldeck.server.console_proof import proves
from tooldeck.server.identity import principal_from_headers
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

_CONFIRM_SCHEMA = {
    "type": "object",
    "properties": {
        "approve": {"type": "boolean", "title": "Run this call?", "default": False},
        "reason": {"type": "string", "title": "Reason (shown to the model if you deny)"},
    },
    "required": ["approve"],
}


def create_mcp_server(
    runtime: Runtime,
    profile: str | None = None,
    *,
    stdio: bool = False,
    search_tools: bool | None = None,
) -> Server[Any]:
    """An MCP ``Server`` serving ``runtime.view(profile)``.

    With ``stdio``, the server has one client, its parent process: every request is on
    one channel (``mcp:stdio-<random>``), so a run's data flow and its approvals are
    those of that client, whatever the protocol version.

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
    only_client = f"mcp:stdio-{secrets.token_hex(8)}" if stdio else None
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
            await _apply_answers(runtime, params, channel, user)
        modes = _elicitation_modes(ctx)
        confirm = None
        if "form" in modes and not modern:
            confirm = _elicitation(ctx)
        elif "url" in modes and not modern:  # the console's page; None when it is down
            confirm = _url_elicitation(ctx, runtime)
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
                return _ask_for_confirmation(details)
            link = await _console_link(runtime, details["approval_id"]) if "url" in modes else None
            if link is not None:
                return _ask_on_the_page(details, link)
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


def _ask_for_confirmation(details: dict[str, Any]) -> InputRequiredResult:
    """A 2026-07-28 ``InputRequiredResult`` eliciting approval of a pending call.

    The client asks its user and repeats the call with the answer under the
    approval id; ``_apply_answers`` records it and the confirming provider consumes it.
    """
    import mcp_types as types

    request = types.ElicitRequest(
        params=types.ElicitRequestFormParams(
            message=f"Allow {details.get('tool')} with arguments "
            f"{json.dumps(details.get('arguments', {}))}?"
            + (f" {details['reason']}" if details.get("reason") else ""),
            requested_schema=_CONFIRM_SCHEMA,
        )
    )
    return types.InputRequiredResult(input_requests={f"confirm:{details['approval_id']}": request})


def _ask_on_the_page(details: dict[str, Any], link: str) -> InputRequiredResult:
    """A 2026-07-28 ``InputRequiredResult`` sending the user to the approval's page.

    The client opens ``link`` for its user and repeats the call; the repeat waits
    until the person decided there (``_apply_answers``).
    """
    import mcp_types as types

    request = types.ElicitRequest(
        params=types.ElicitRequestURLParams(message=_page_message(details), url=link)
    )
    return types.InputRequiredResult(
        input_requests={f"confirm-url:{details['approval_id']}": request}
    )


def _page_message(details: dict[str, Any]) -> str:
    why = f" ({details['reason']})" if details.get("reason") else ""
    return (
        f"Approve or deny {details.get('tool')} with arguments "
        f"{json.dumps(details.get('arguments', {}))} on this page.{why}"
    )


def _owner(user: str | None, channel: str) -> str:
    """Whose a kept long result is: the principal and the client's channel together."""
    return f"{user or ANONYMOUS}\x00{channel}"


async def _apply_answers(
    runtime: Runtime, params: CallToolRequestParams, channel: str, user: str | None
) -> None:
    """Record the user's answers to ``_ask_for_confirmation`` as decisions.

    An answer counts only for an approval this session asked for, for this caller
    (``user``), attached to the repeat of that same call (tool and arguments): a
    client cannot decide another client's or another user's approval, nor one of its
    own for a different call. An answer to
    ``_ask_on_the_page`` is not a decision: accepted (the page was opened), the call
    waits until the person decides on the page or the approval expires; declined, the
    call is denied.
    """
    call_hash = arguments_hash(params.name, params.arguments or {})
    for key, answer in (params.input_responses or {}).items():
        kind, _, approval_id = key.partition(":")
        if kind not in ("confirm", "confirm-url"):
            continue
        approval = runtime.approvals.get(approval_id)
        if (
            approval is None
            or approval.request.channel != channel
            or approval.request.principal != (user or ANONYMOUS)
            or approval.request.tool != params.name
            or approval.request.arguments_hash != call_hash
        ):
            continue
        if kind == "confirm-url" and getattr(answer, "action", None) == "accept":
            left = max(0.0, approval.request.expires_at - time.time())
            with contextlib.suppress(TimeoutError, KeyError):  # undecided: asked again
                await runtime.approvals.decided(approval_id, left)
            continue
        content = getattr(answer, "content", None) or {}
        approved = getattr(answer, "action", None) == "accept" and (
            kind == "confirm" and content.get("approve") is True
        )
        reason = content.get("reason") or (None if approved else "declined in the MCP client")
        decision = ConfirmationDecision(
            approved=approved, message=None if approved else str(reason), approver="mcp-client"
        )
        by = Decider(principal=approval.request.principal, channel=channel)
        with contextlib.suppress(KeyError, ValueError):  # expired or already decided
            runtime.approvals.decide(approval.request.approval_id, decision, by)


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


def _elicitation_modes(ctx: ServerRequestContext[Any]) -> frozenset[str]:
    """The elicitation modes the client declared: ``form``, ``url`` (MCP 2025-11-25).

    An empty ``elicitation`` object is form mode (as clients declared it before URL
    mode existed).
    """
    capabilities = ctx.session.client_capabilities
    declared = capabilities.elicitation if capabilities is not None else None
    if declared is None:
        return frozenset()
    if declared.form is None and declared.url is None:
        return frozenset({"form"})
    return frozenset(m for m in ("form", "url") if getattr(declared, m) is not None)


def _url_elicitation(ctx: ServerRequestContext[Any], runtime: Runtime) -> Any:
    """Asks through the console's page for one approval (URL-mode elicitation).

    The page link carries the approval's secret (``ApprovalStore.link``) in its
    fragment; the client shows it to its user only (never to the model). The call waits
    until the person decides there (or the approval expires), then the client is told
    the elicitation is complete. None (nobody asked) when the console does not answer
    for this approval: it is not running, or not on this project's approvals.
    """

    async def confirm(request: ConfirmationRequest) -> ConfirmationDecision | None:
        store = runtime.approvals
        page = await _console_link(runtime, request.approval_id)
        if page is None:
            return None
        answer = await ctx.session.elicit_url(
            _page_message(request.as_dict()),
            page,
            request.approval_id,
            related_request_id=ctx.request_id,
        )
        if answer.action != "accept":
            return ConfirmationDecision(
                approved=False, message=f"user chose {answer.action}", approver="mcp-client"
            )
        try:
            decided = await store.decided(
                request.approval_id, max(0.0, request.expires_at - time.time())
            )
        except (TimeoutError, KeyError):
            return ConfirmationDecision(approved=False, message="nobody decided in time")
        with contextlib.suppress(Exception):  # a courtesy; the result follows anyway
            await ctx.session.send_elicit_complete(request.approval_id, ctx.request_id)
        return decided.decision

    return confirm


async def _console_link(runtime: Runtime, approval_id: str) -> str | None:
    """The console page that decides ``approval_id``, its secret in the fragment.

    None when the console (``[approvals] console_url``, default
    ``http://127.0.0.1:<server.port>``) does not show that approval: it is not
    running, serves another project's approvals, or is not this project's own (it
    must first prove it reads the project's ``console.key``, ``server.console_proof``,
    before the API key and the approval's token are sent to it).
    """
    import httpx

    settings = runtime.settings
    console = settings.approvals.console_url or f"http://127.0.0.1:{settings.server.port}"
    console = console.rstrip("/")
    port = httpx.URL(console).port or (443 if console.startswith("https:") else 80)
    try:
        async with httpx.AsyncClient(timeout=2.0) as client:
            if not await proves(client, console, port, settings.data_dir):
                return None
            token = runtime.approvals.link(approval_id)
            headers = {"x-approval-token": token}
            if settings.server.api_key is not None:
                key = settings.server.api_key.get_secret_value()
                headers["authorization"] = f"Bearer {key}"
            answer = await client.get(f"{console}/api/approvals/{approval_id}", headers=headers)
    except httpx.HTTPError:
        return None
    if answer.status_code != 200:
        return None
    return f"{console}/tools/approvals#approval={approval_id}&token={token}"


def _elicitation(ctx: ServerRequestContext[Any]) -> Any:
    async def confirm(request: ConfirmationRequest) -> ConfirmationDecision:
        why = request.reason or (request.description.splitlines() or [""])[0]
        answer = await ctx.session.elicit_form(
            f"Allow {request.tool} with arguments {json.dumps(dict(request.arguments))}? ({why})",
            _CONFIRM_SCHEMA,
            related_request_id=ctx.request_id,
        )
        content = answer.content or {}
        approved = answer.action == "accept" and content.get("approve") is True
        reason = content.get("reason")
        return ConfirmationDecision(
            approved=approved,
            message=(str(reason) if reason else None)
            or (None if approved else f"user chose {answer.action}"),
            approver="mcp-client",
        )

    return confirm


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
    ``search_tools``: see ``create_mcp_server``.
    """
    from mcp.server.stdio import stdio_server

    server = create_mcp_server(runtime, profile, stdio=True, search_tools=search_tools)
    watcher = asyncio.create_task(runtime.watch_tools(on_reload)) if on_reload else None
    try:
        async with stdio_server() as (read_stream, write_stream), runtime.serving():
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        if watcher is not None:
            watcher.cancel()
