"""``ToolRegistry``: the local provider. Explicit registration, lookup, safe execution.

Example::

    registry = ToolRegistry()
    registry.register(QuoteTool(), aliases=("quote",))
    result = await registry.execute("get_quote", '{"symbol": "AAPL"}')
    tools = registry.export("openai")
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import re
import sys
import threading
import traceback
from asyncio import _get_running_loop, _set_running_loop
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass
from typing import Any

from tooldeck.core.context import ToolContext, new_request_id
from tooldeck.core.definition import ToolDefinition
from tooldeck.core.function_tool import FunctionTool
from tooldeck.core.names import safe_tool_name
from tooldeck.core.result import ToolResult, trusted_metadata
from tooldeck.core.tool import Arguments, BaseTool, Tool, error_result
from tooldeck.exceptions import DuplicateToolError, RegistrationError
from tooldeck.providers.base import ToolsProvider, not_found

__all__ = ["ToolRegistry"]

_NAME = re.compile(r"^[A-Za-z0-9_.\-/]{1,128}$")


async def _ready(result: ToolResult) -> ToolResult:
    return result


@dataclass(frozen=True, slots=True)
class _Entry:
    tool: Tool
    definition: ToolDefinition
    guarded: bool
    """True unless the tool runs ``BaseTool.execute``, which never raises."""


class ToolRegistry(ToolsProvider):
    """Local tools, registered explicitly by name (seed 000 decision 5: no auto-discovery).

    Semantics:
        A tool answers to its name, its registration aliases and its format-safe alias
        (``crm.search`` → ``crm_search``, see ``core.names.safe_tool_name``), so a model
        call under the exported name reaches it. ``execute`` never raises: an unknown
        name gives ``not_found`` with the closest names, everything else is the tool's
        own envelope (see ``BaseTool.execute``).

    Args:
        tools: Tools (or plain functions, wrapped in ``FunctionTool``) to register.
        id: Provider id reported in definitions and result metadata.
    """

    def __init__(
        self, tools: Iterable[Tool | Callable[..., Any]] = (), *, id: str = "local"
    ) -> None:
        self.id = id
        self._entries: dict[str, _Entry] = {}
        self._lookup: dict[str, _Entry] = {}
        for item in tools:
            self.register(item)

    def register(
        self, tool: Tool | Callable[..., Any], name: str | None = None, aliases: Iterable[str] = ()
    ) -> Tool:
        """Register ``tool`` under ``name`` (default: its own) and ``aliases``.

        Returns:
            The registered tool (a ``FunctionTool`` when a function was given).

        Raises:
            RegistrationError: the name is not 1–128 characters of ``A-Za-z0-9_.-/``, or
                the tool's schema cannot be built.
            DuplicateToolError: the name, an alias or the safe alias is taken; the message
                names both tools.
        """
        if not isinstance(tool, Tool):
            if not callable(tool):
                raise RegistrationError(f"cannot register {tool!r}: not a Tool nor a function")
            tool = FunctionTool(tool)
        definition = tool.definition
        canonical = name or definition.name
        names = [canonical, *aliases]
        for n in names:
            if not _NAME.match(n):
                raise RegistrationError(
                    f"invalid tool name {n!r}: use 1-128 characters from A-Z a-z 0-9 _ . - /"
                )
        claimed = list(dict.fromkeys([*names, *(safe_tool_name(n) for n in names)]))
        for n in claimed:
            other = self._lookup.get(n)
            if other is not None:
                raise DuplicateToolError(
                    f"tool name {n!r} of {type(tool).__name__} ({canonical!r}) is already taken by "
                    f"{type(other.tool).__name__} ({other.definition.name!r}); register one of them "
                    f"under another name or alias, e.g. name='{self.id}.{canonical}'"
                )
        entry = _Entry(
            tool=tool,
            guarded=type(tool).execute is not BaseTool.execute,
            definition=definition.model_copy(
                update={
                    "name": canonical,
                    "provider": self.id,
                    "aliases": tuple(n for n in claimed if n != canonical),
                }
            ),
        )
        self._entries[canonical] = entry
        for n in claimed:
            self._lookup[n] = entry
        if isinstance(tool, BaseTool):
            tool.provider_id = self.id
            if canonical != tool.name:
                tool.name = canonical
                tool.__dict__.pop("_definition", None)
            elif tool.__dict__.get("_definition") is definition:  # one definition, not two
                tool.__dict__["_definition"] = entry.definition
        self.tools_changed()
        return tool

    def unregister(self, name: str) -> Tool:
        """Remove the tool registered under the canonical ``name``, with its aliases.

        Raises:
            RegistrationError: no tool has that canonical name; the message lists them.
        """
        entry = self._entries.pop(name, None)
        if entry is None:
            raise RegistrationError(
                f"no tool named {name!r} to unregister; registered: {', '.join(self._entries)}"
            )
        for alias in [n for n, e in self._lookup.items() if e is entry]:
            del self._lookup[alias]
        self.tools_changed()
        return entry.tool

    def get(self, name: str) -> Tool | None:
        """The tool answering to ``name`` (name or alias), or None."""
        entry = self._lookup.get(name)
        return entry.tool if entry else None

    @property
    def names(self) -> list[str]:
        """Canonical names, in registration order."""
        return list(self._entries)

    def list_definitions(self) -> list[ToolDefinition]:
        """Definitions of every tool, in registration order (sync form of ``definitions``)."""
        return [e.definition for e in self._entries.values()]

    async def definitions(self) -> list[ToolDefinition]:
        """Definitions of every tool, in registration order."""
        return self.list_definitions()

    def export(
        self, format: str, *, strict: bool = True, query: str | None = None, limit: int = 10
    ) -> list[dict[str, Any]]:
        """The tools in a wire format (see ``tooldeck.exporters.export``).

        Formats: ``openai``, ``openai-responses``, ``anthropic``, ``gemini``, ``mcp``;
        with ``query``, only the ``limit`` tools that match it best.
        """
        from tooldeck.exporters import export

        return export(self.list_definitions(), format, strict=strict, query=query, limit=limit)

    def execute(
        self, name: str, arguments: Arguments = None, ctx: ToolContext | None = None
    ) -> Coroutine[Any, Any, ToolResult]:
        """Run tool ``name``; never raises. Awaitable like every provider's ``execute``.

        Returns:
            The tool's ``ToolResult``; ``not_found`` with the closest names when no tool
            answers to ``name``.

        Semantics:
            ``BaseTool.execute``'s coroutine is returned directly (it never raises),
            saving a coroutine frame per call on the hot path; a tool with its own
            ``execute`` runs guarded, so a broken one still gives an envelope.
        """
        entry = self._lookup.get(name) if type(name) is str else None
        if entry is None:
            return _ready(self.not_found(name, ctx))
        if not entry.guarded:
            return entry.tool.execute(arguments, ctx)
        return self._guarded(entry, name, arguments, ctx)

    async def _guarded(
        self, entry: _Entry, name: str, arguments: Arguments, ctx: ToolContext | None
    ) -> ToolResult:
        try:
            return await entry.tool.execute(arguments, ctx)
        except Exception as exc:  # a Tool that broke the never-raise contract
            meta = trusted_metadata(name, None, (ctx and ctx.request_id) or new_request_id(), None)
            return error_result(
                "execution",
                f"{name} failed: {type(exc).__name__}: {exc}",
                meta,
                details={"exception": type(exc).__name__, "traceback": traceback.format_exc()},
            )

    def execute_sync(
        self, name: str, arguments: Arguments = None, ctx: ToolContext | None = None
    ) -> ToolResult:
        """``execute`` for synchronous code, on an event loop kept for the calling thread.

        The loop lives as long as the thread (closed when the thread ends, or at exit),
        so a call costs tens of microseconds rather than the milliseconds of an
        ``asyncio.run`` per call, and what a tool keeps bound to its loop (an HTTP
        client, a subprocess) stays usable from one call to the next.

        Raises:
            RuntimeError: called from a thread that is running an event loop; ``await
                execute(...)`` there instead.
        """
        if _get_running_loop() is None:
            return _thread_loop().run(self.execute(name, arguments, ctx))
        raise RuntimeError("execute_sync() called inside a running event loop; use await execute()")

    def not_found(self, name: str, ctx: ToolContext | None = None) -> ToolResult:
        """The ``not_found`` result for ``name``, naming the closest tools."""
        return not_found(name, self._entries, ctx, self._lookup)


class _ThreadLoop:
    """An event loop owned by one thread: closed when that thread's locals go.

    ``run`` is ``run_until_complete`` without what a loop that runs once per call
    does not need: ``run_forever``'s setup and its second pass to stop (about 11 µs
    a call against 7 µs; benchmarks/overhead.py (g)). It runs the task's first step
    itself (a tool that never waits is done there, without the selector's poll: 7.1
    against 6.1 µs), then turns the loop's own ``_run_once`` until the task is done,
    then while callbacks the call left are ready (an abandoned async generator's
    ``aclose``, scheduled by the finalizer hook), with the loop set as running and the
    async generator hooks installed for the duration, as ``run_forever`` does. A
    loop without ``_run_once`` (another loop implementation) runs the public way.
    """

    def __init__(self) -> None:
        self.loop = loop = asyncio.new_event_loop()
        self._run_once: Callable[[], None] | None = getattr(loop, "_run_once", None)
        if self._run_once is not None:  # bound once: each access makes a new method object
            self._ready: collections.deque[asyncio.Handle] = loop._ready  # type: ignore[attr-defined]
            self._hooks = (loop._asyncgen_firstiter_hook, loop._asyncgen_finalizer_hook)  # type: ignore[attr-defined]

    def run(self, coro: Coroutine[Any, Any, ToolResult]) -> ToolResult:
        """Run ``coro`` to its end on this thread's loop; its result (or exception)."""
        loop, run_once = self.loop, self._run_once
        if run_once is None:
            return loop.run_until_complete(coro)
        ready = self._ready
        idle = not ready
        task = loop.create_task(coro)
        hooks = sys.get_asyncgen_hooks()
        sys.set_asyncgen_hooks(*self._hooks)
        _set_running_loop(loop)
        try:
            if idle and len(ready) == 1:  # the task's first step: run it without polling I/O
                ready.popleft()._run()
            while not task.done():
                run_once()
            left = 100
            while ready and left:  # what the call left ready (an async generator's aclose)
                run_once()  # nothing waits on a timer here: something is ready
                left -= 1
        except BaseException:  # Ctrl-C inside a tool: the task ends at the next run
            task.cancel()
            raise
        finally:
            _set_running_loop(None)
            sys.set_asyncgen_hooks(*hooks)
        return task.result()

    def close(self) -> None:
        """Close the loop unless it is closed or running (at exit, or when the thread goes)."""
        if not self.loop.is_closed() and not self.loop.is_running():
            self.loop.close()

    __del__ = close


_LOOPS = threading.local()


def _thread_loop() -> _ThreadLoop:
    """The calling thread's own event loop for ``execute_sync`` (made on first use)."""
    held: _ThreadLoop | None = getattr(_LOOPS, "held", None)
    if held is None or held.loop.is_closed():
        held = _LOOPS.held = _ThreadLoop()
        if threading.current_thread() is threading.main_thread():
            atexit.register(held.close)
    return held
