"""``MCPToolsProvider``: the tools of one MCP server, through the official ``mcp`` SDK.

Configuration uses the standard ``mcpServers`` form of MCP clients::

    [mcp_servers.time]                         # tooldeck.toml
    command = "mcp-server-time"
    [mcp_servers.docs]
    url = "http://127.0.0.1:9000/mcp"           # streamable HTTP (transport = "sse" for SSE)
    headers = { Authorization = "Bearer ..." }

One connection per server, opened on first use and shared by every profile. A server
that cannot start, or dies, makes its tools answer ``unavailable`` (with its id and the
tail of its stderr); the next call reconnects.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from time import perf_counter
from typing import TYPE_CHECKING, Any, TextIO

from pydantic import ValidationError

from tooldeck.core.arguments import ArgumentShape, check_arguments
from tooldeck.core.context import ANONYMOUS, ToolContext, new_request_id
from tooldeck.core.credentials import CredentialStore
from tooldeck.core.definition import ToolAnnotations, ToolDefinition
from tooldeck.core.patterns import has_patterns
from tooldeck.core.result import Artifact, ToolError, ToolResult, trusted_metadata
from tooldeck.core.tool import Arguments, error_result
from tooldeck.core.validation import compile_schema
from tooldeck.exceptions import ConfigError, InvalidArgumentsError, RegistrationError
from tooldeck.providers.base import ToolsProvider, not_found
from tooldeck.providers.mcp_config import MCPServerConfig, load_mcp_servers_file, resolve_command
from tooldeck.providers.mcp_tasks import call_as_task, runs_tasks

if TYPE_CHECKING:
    from jsonschema.protocols import Validator
    from mcp import Client
    from mcp.shared.dispatcher import ProgressFnT
    from mcp_types import CallToolResult, Tool

__all__ = ["MCPServerConfig", "MCPToolsProvider", "load_mcp_servers_file", "resolve_command"]
# the configuration lives in mcp_config; re-exported here, where users import it from

_STDERR_TAIL = 2000
"""Characters of a server's stderr quoted when it fails."""


class _ServerDown(Exception):
    """The server could not be reached; the message says why."""


class MCPToolsProvider(ToolsProvider):
    """The tools of one MCP server as ``ToolDefinition``s, each call a ``tools/call``.

    Semantics:
        Definitions keep the server's ``inputSchema``, ``outputSchema`` and
        annotations, and carry ``server_id``. Arguments are checked against the
        ``inputSchema`` before they are sent, so a bad call gets the same
        ``validation`` error as a local tool. A ``CallToolResult`` becomes a
        ``ToolResult``: text content → ``output``, ``structuredContent`` → ``data``,
        images and audio → artifacts (``data:`` URIs), resource links → link artifacts,
        ``isError`` → an ``execution`` error; ``source_id``/``as_of`` in the result's
        ``_meta`` (as tooldeck's own MCP server sends) are kept. A malformed result is
        an ``execution`` error. A server that fails to start or dies gives
        ``unavailable`` (retryable) naming the server and quoting its stderr; the next
        call reconnects. A call cut off by a lost connection is retried once on a new
        connection only if the tool is annotated read-only or idempotent. A
        ``tools/list_changed`` notification refetches the list and calls
        ``tools_changed()``.

    Args:
        server_id: The server's id in configuration; also the provider id.
        config: How to reach it.
        credentials: Opens the credential store, for ``config.credential`` (on connect).
        principal: Whose credential starts the session (the server's own user).
    """

    def __init__(
        self,
        server_id: str,
        config: MCPServerConfig,
        *,
        credentials: Callable[[], CredentialStore] | None = None,
        principal: str = ANONYMOUS,
    ) -> None:
        self.id = server_id
        self.config = config
        self.principal = principal
        """Whose ``credential`` starts the session (the server's own user by default)."""
        self._credentials = credentials
        """Opens the credential store, for a ``config.credential`` (on connect only)."""
        self.last_error: str | None = None
        self._client: Client | None = None
        self._stop: asyncio.Event | None = None
        self._runner: asyncio.Task[None] | None = None
        self._lock: asyncio.Lock | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stderr: TextIO | None = None
        self._tools: dict[str, ToolDefinition] = {}
        self._validators: dict[str, tuple[Validator, ArgumentShape]] = {}
        self._patterns: dict[str, bool] = {}
        """Tools whose input schema has ``pattern`` keywords (checked in a worker thread)."""
        self._needs_tasks: frozenset[str] = frozenset()
        """Tools that run only as MCP tasks, on a server that does not take tasks."""
        self._as_tasks: frozenset[str] = frozenset()
        """Tools that run only as MCP tasks, called so (``providers.mcp_tasks``)."""
        self._listed = False

    # -- connection ----------------------------------------------------------------------

    def _with_secret(self) -> MCPServerConfig:
        """The configuration, ``{credential}`` filled from the store when it names one.

        Raises:
            ConfigError: the credential is not stored (the message says how to store
                it) or the store cannot be opened.
        """
        config = self.config
        if config.credential is None:
            return config
        secret = None
        if self._credentials is not None:
            secret = self._credentials().get(self.principal, config.credential)
        if secret is None:
            user = "" if self.principal == ANONYMOUS else f" -u {self.principal}"
            raise ConfigError(
                f"it needs the credential {config.credential!r}, which is not stored: run "
                f"tooldeck credentials set {config.credential}{user}"
            )
        return config.with_secret(secret.get_secret_value())

    def _transport(self) -> Any:
        from mcp import StdioServerParameters
        from mcp.client.sse import sse_client
        from mcp.client.stdio import stdio_client
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        config = self._with_secret()
        if config.command is not None:
            if self._stderr is None:
                self._stderr = tempfile.TemporaryFile(  # noqa: SIM115 - closed in close()
                    "w+", encoding="utf-8", errors="replace"
                )
            params = StdioServerParameters(
                command=resolve_command(config.command, config.env),
                args=config.args,
                env=config.env,
                cwd=str(config.cwd) if config.cwd else None,
            )
            return stdio_client(params, errlog=self._stderr)
        assert config.url is not None
        if config.transport == "sse":
            return sse_client(config.url, headers=config.headers or None)
        return streamable_http_client(
            config.url, http_client=create_mcp_http_client(headers=config.headers or None)
        )

    def stderr_tail(self) -> str:
        """The last ~2000 characters the server wrote to stderr (stdio servers)."""
        if self._stderr is None:
            return ""
        try:
            self._stderr.flush()
            size = self._stderr.seek(0, 2)
            self._stderr.seek(max(0, size - _STDERR_TAIL))
            return self._stderr.read().strip()
        except (OSError, ValueError):
            return ""

    async def _connected(self) -> Client:
        client = self._client
        if client is not None and self._loop is asyncio.get_running_loop():
            return client
        if self._loop is not asyncio.get_running_loop():  # a new event loop (e.g. a new CLI run)
            self._client, self._runner, self._lock = None, None, None
            self._loop = asyncio.get_running_loop()
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._client is not None:
                return self._client
            await self._disconnect()
            ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
            self._stop = asyncio.Event()
            self._runner = asyncio.create_task(self._run(ready, self._stop))
            try:
                async with asyncio.timeout(self.config.init_timeout_s):
                    client = await asyncio.shield(ready)
            except TimeoutError:
                ready.cancel()  # nobody waits for it now: no "exception never retrieved"
                await self._disconnect(cancel=True)
                raise _ServerDown(
                    f"did not initialize within {self.config.init_timeout_s:g} s"
                ) from None
            except Exception as exc:
                await self._disconnect(cancel=True)
                raise _ServerDown(self._not_found(exc) or _describe(exc)) from None
            self._client = client
            self.last_error = None
            await self._list_tools(client)
            return client

    async def _run(self, ready: asyncio.Future[Client], stop: asyncio.Event) -> None:
        from mcp import Client

        try:
            async with Client(
                self._transport(), message_handler=self._on_message, mode=self.config.protocol
            ) as client:
                ready.set_result(client)
                listener = asyncio.create_task(self._listen(client))
                try:
                    await stop.wait()
                finally:
                    listener.cancel()
                    with contextlib.suppress(BaseException):
                        await listener
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else _ServerDown("cancelled"))
            if not isinstance(exc, Exception):
                raise
        finally:
            self._client = None

    async def _disconnect(self, cancel: bool = False) -> None:
        """End the session; ``cancel`` interrupts one still initializing."""
        runner, stop = self._runner, self._stop
        self._client, self._runner = None, None
        if runner is None or stop is None:
            return
        stop.set()
        if cancel:
            runner.cancel()
        try:
            async with asyncio.timeout(10):
                await asyncio.shield(runner)
        except TimeoutError:
            runner.cancel()
        except BaseException:  # failed or cancelled as asked: nothing left to release
            if not runner.done():
                raise

    async def _listen(self, client: Client) -> None:
        """Refetch the tool list on each change the server announces (2026-07-28 servers).

        Servers on earlier protocol versions send ``notifications/tools/list_changed``
        unasked; it arrives in ``_on_message`` instead.
        """
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                async for _event in subscription:
                    await self._list_tools(client)
        except Exception:  # a server without subscriptions: changes show on reconnect
            return

    async def _on_message(self, message: Any) -> None:
        from mcp_types import ToolListChangedNotification

        if isinstance(message, ToolListChangedNotification):
            client = self._client
            if client is not None:
                with contextlib.suppress(Exception):
                    await self._list_tools(client)

    async def _list_tools(self, client: Client) -> None:
        tools: list[Tool] = []
        cursor: str | None = None
        for _ in range(100):
            page = await client.list_tools(cursor=cursor, cache_mode="refresh")
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        definitions = {tool.name: self._definition(tool) for tool in tools}
        as_tasks = frozenset(
            t.name
            for t in tools
            if t.execution is not None and t.execution.task_support == "required"
        )
        self._as_tasks, self._needs_tasks = (
            (as_tasks, frozenset()) if runs_tasks(client) else (frozenset(), as_tasks)
        )
        changed = self._listed and definitions != self._tools
        self._tools, self._validators, self._listed = definitions, {}, True
        self._patterns = {n: has_patterns(d.input_schema) for n, d in definitions.items()}
        if changed:
            self.tools_changed()

    def _definition(self, tool: Tool) -> ToolDefinition:
        hints = tool.annotations
        return ToolDefinition(
            name=tool.name,
            description=tool.description or tool.title or tool.name,
            input_schema=tool.input_schema,
            output_schema=tool.output_schema,
            annotations=ToolAnnotations(
                title=tool.title or (hints.title if hints else None),
                read_only=hints.read_only_hint if hints else None,
                destructive=hints.destructive_hint if hints else None,
                idempotent=hints.idempotent_hint if hints else None,
                open_world=hints.open_world_hint if hints else None,
            ),
            tags=("mcp",),
            provider=self.id,
            server_id=self.id,
        )

    # -- provider interface ----------------------------------------------------------------

    async def all_definitions(self) -> list[ToolDefinition]:
        """The server's tools; connects first if needed.

        A server that cannot be reached lists the tools it had (so they answer
        ``unavailable``), or none if it never connected; ``last_error`` says why.
        """
        if self.config.enabled:
            try:
                await self._connected()
            except _ServerDown as exc:
                self.last_error = self._down_message(str(exc))
        return list(self._tools.values())

    async def definitions(self) -> list[ToolDefinition]:
        """``all_definitions`` but those ``unavailable()`` (tools that need MCP tasks)."""
        return [d for d in await self.all_definitions() if d.name not in self._needs_tasks]

    def unavailable(self) -> dict[str, str]:
        """Tools that run only as MCP tasks, with why, on a server that takes no tasks.

        A server that declares ``capabilities.tasks.requests.tools.call`` has them
        called as tasks instead (``providers.mcp_tasks``).
        """
        return dict.fromkeys(sorted(self._needs_tasks), _NEEDS_TASKS)

    async def execute(
        self, name: str, arguments: Arguments = None, ctx: ToolContext | None = None
    ) -> ToolResult:
        """Call the tool on the server; never raises for tool failures."""
        start = perf_counter()
        request_id = (ctx and ctx.request_id) or new_request_id()
        if not self._listed:
            await self.definitions()
        definition = self._tools.get(name)
        if definition is None:
            return not_found(name, list(self._tools), ctx)
        if name in self._needs_tasks:
            return error_result(
                "unavailable",
                f"{name} on MCP server {self.id!r} {_NEEDS_TASKS}.",
                self._meta(name, request_id, start, 1),
                details={"server_id": self.id},
            )
        if self._patterns.get(name):  # a server's patterns: matched off the event loop
            parsed = await asyncio.to_thread(self._validated, definition, arguments)
        else:
            parsed = self._validated(definition, arguments)
        if isinstance(parsed, ToolResult):
            return parsed.with_metadata(request_id=request_id)
        progress = _forwarder(ctx) if ctx is not None and ctx.event_emitter is not None else None
        for attempt in (1, 2):
            try:
                client = await self._connected()
                if name in self._as_tasks:
                    called = await call_as_task(client, name, parsed, ctx)
                else:
                    called = await client.call_tool(name, parsed, progress_callback=progress)
                return self._result(called, definition, request_id, start, attempt)
            except _ServerDown as exc:
                return self._unavailable(name, str(exc), request_id, start)
            except ValidationError as exc:
                return error_result(
                    "execution",
                    f"MCP server {self.id!r} returned a malformed result for {name}: "
                    f"{exc.error_count()} problem(s), first: {exc.errors()[0]['msg']}",
                    self._meta(name, request_id, start, attempt),
                )
            except Exception as exc:
                if not _connection_lost(exc):
                    return error_result(
                        "execution",
                        f"MCP server {self.id!r} rejected the call to {name}: {_describe(exc)}",
                        self._meta(name, request_id, start, attempt),
                    )
                await self._disconnect()
                if attempt == 1 and definition.safe_to_repeat:
                    continue
                why = (
                    "the connection was lost mid-call, so the call may have run; it was not "
                    "repeated because the tool is not marked read-only or idempotent"
                    if attempt == 1
                    else "the connection was lost again after reconnecting"
                )
                return self._unavailable(name, why, request_id, start, may_have_run=True)
        raise AssertionError("unreachable")  # pragma: no cover

    # -- resources and prompts (passed through by tooldeck's MCP server) ----------------

    async def resources(self) -> list[Any]:
        """The server's resources, then its resource templates (``mcp_types`` objects).

        Empty when the server offers none, cannot be reached, or has no resources
        capability.
        """
        client = await self._reachable()
        if client is None:
            return []
        found: list[Any] = []
        for listing, attribute in (
            (client.list_resources, "resources"),
            (client.list_resource_templates, "resource_templates"),
        ):
            with contextlib.suppress(Exception):  # a server without resources says so
                found += getattr(await listing(), attribute)
        return found

    async def read_resource(self, uri: str) -> Any:
        """``resources/read`` on the server: its ``ReadResourceResult``.

        Raises:
            Exception: the server's error (an unknown URI), or it cannot be reached.
        """
        client = await self._connected()
        return await client.read_resource(uri)

    async def prompts(self) -> list[Any]:
        """The server's prompts; empty when it has none or cannot be reached."""
        client = await self._reachable()
        if client is None:
            return []
        try:
            return list((await client.list_prompts()).prompts)
        except Exception:  # a server without prompts says so
            return []

    async def get_prompt(self, name: str, arguments: dict[str, str] | None) -> Any:
        """``prompts/get`` on the server: its ``GetPromptResult``.

        Raises:
            Exception: the server's error (unknown prompt, missing argument).
        """
        client = await self._connected()
        return await client.get_prompt(name, arguments)

    async def _reachable(self) -> Client | None:
        try:
            return await self._connected()
        except _ServerDown:
            return None

    async def close(self) -> None:
        """Stop the session (and the server process, for stdio). Idempotent."""
        if self._loop is asyncio.get_running_loop():
            await self._disconnect()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    # -- helpers -----------------------------------------------------------------------

    def _validated(
        self, definition: ToolDefinition, arguments: Arguments
    ) -> dict[str, Any] | ToolResult:
        checks = self._validators.get(definition.name)
        if checks is None:
            try:
                validator = compile_schema(definition.input_schema)
            except RegistrationError:  # a server's broken schema: let the server judge the call
                validator = compile_schema({})
            checks = self._validators[definition.name] = (
                validator,
                ArgumentShape.of(definition.input_schema),
            )
        try:
            return check_arguments(
                definition.name, definition.input_schema, checks[0], arguments, checks[1]
            )
        except InvalidArgumentsError as exc:
            return error_result(
                "validation",
                exc.message,
                self._meta(definition.name, None, perf_counter(), 1),
                details=exc.details,
            )

    def _result(
        self,
        called: CallToolResult,
        definition: ToolDefinition,
        request_id: str,
        start: float,
        attempts: int,
    ) -> ToolResult:
        texts: list[str] = []
        artifacts: list[Artifact] = []
        for block in called.content:
            kind = getattr(block, "type", None)
            if kind == "text":
                texts.append(block.text)  # type: ignore[union-attr]
            elif kind in ("image", "audio"):
                mime = block.mime_type  # type: ignore[union-attr]
                artifacts.append(
                    Artifact(
                        kind="image" if kind == "image" else "file",
                        uri=f"data:{mime};base64,{block.data}",  # type: ignore[union-attr]
                        mime_type=mime,
                    )
                )
            elif kind == "resource_link":
                artifacts.append(
                    Artifact(
                        kind="link",
                        uri=str(block.uri),  # type: ignore[union-attr]
                        mime_type=block.mime_type,  # type: ignore[union-attr]
                        name=block.name,  # type: ignore[union-attr]
                    )
                )
            elif kind == "resource":
                resource = block.resource  # type: ignore[union-attr]
                text = getattr(resource, "text", None)
                if text is not None:
                    texts.append(text)
                else:
                    artifacts.append(
                        Artifact(
                            kind="file",
                            uri=f"data:{resource.mime_type or 'application/octet-stream'};base64,"
                            f"{getattr(resource, 'blob', '')}",
                            mime_type=resource.mime_type,
                            name=str(resource.uri),
                        )
                    )
        output = "\n".join(texts) or None
        meta = called.meta or {}
        metadata = self._meta(definition.name, request_id, start, attempts)
        if called.is_error:
            return ToolResult(
                status="error",
                error=ToolError(
                    type="execution",
                    message=output or f"{definition.name} failed on MCP server {self.id!r}",
                    details={"server_id": self.id},
                ),
                artifacts=artifacts,
                metadata=metadata,
            )
        data = called.structured_content
        if data is not None and output is not None and _same_json(output, data):
            output = None  # the text block is the data serialised (MCP spec): keep it once
        return ToolResult(
            status="success",
            data=data,
            output=output,
            source_id=_text(meta.get("source_id")),
            as_of=_text(meta.get("as_of")),
            artifacts=artifacts,
            metadata=metadata,
        )

    def _not_found(self, exc: BaseException) -> str | None:
        """For a command that does not exist: where it was looked for, and the fix."""
        missing = exc
        while isinstance(missing, BaseExceptionGroup) and len(missing.exceptions) == 1:
            missing = missing.exceptions[0]
        command = self.config.command
        if not isinstance(missing, FileNotFoundError) or command is None:
            return None
        path = (self.config.env or {}).get("PATH") or os.environ.get("PATH", "")
        return (
            f"command {command!r} was not found on PATH ({path}) nor in "
            f"{Path(sys.executable).parent}; install it there (pip install ...) or give "
            "its absolute path"
        )

    def _down_message(self, why: str) -> str:
        tail = self.stderr_tail()
        return f"MCP server {self.id!r} is unavailable: {why}." + (
            f" Its stderr ends with:\n{tail}" if tail else ""
        )

    def _unavailable(
        self, name: str, why: str, request_id: str, start: float, *, may_have_run: bool = False
    ) -> ToolResult:
        self.last_error = self._down_message(why)
        details: dict[str, Any] = {"server_id": self.id, "stderr_tail": self.stderr_tail()}
        if may_have_run:
            details["may_have_run"] = True
        return error_result(
            "unavailable",
            f"{name} cannot run now: {self.last_error} The next call will try to reconnect.",
            self._meta(name, request_id, start, 1),
            details=details,
            retryable=True,
        )

    def _meta(self, name: str, request_id: str | None, start: float, attempts: int) -> Any:
        meta = trusted_metadata(
            name, None, request_id or new_request_id(), round((perf_counter() - start) * 1000, 3)
        )
        update: dict[str, Any] = {"provider": self.id}
        if attempts != 1:
            update["attempts"] = attempts
        return meta.model_copy(update=update)


def _connection_lost(exc: BaseException) -> bool:
    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED

    if isinstance(exc, MCPError):
        return exc.code == CONNECTION_CLOSED
    return isinstance(exc, OSError | EOFError | ConnectionError) or type(exc).__module__.startswith(
        "anyio"
    )


def _forwarder(ctx: ToolContext) -> ProgressFnT:
    """An upstream call's ``notifications/progress``, reported to ``ctx``'s follower."""

    async def forward(progress: float, total: float | None, message: str | None) -> None:
        ctx.report_progress(progress, total, message)

    return forward


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in exc.exceptions)
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


_NEEDS_TASKS = (
    "runs only as an MCP task (execution.taskSupport = required), and the server does not "
    "declare that it takes tools/call as a task (capabilities.tasks.requests.tools.call)"
)


def _same_json(text: str, data: Any) -> bool:
    try:
        return bool(json.loads(text) == data)
    except ValueError:
        return False


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
