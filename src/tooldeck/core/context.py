"""What a tool call knows about its caller: ids, profile, services, progress events.

Every field is optional so a tool can be called with no context at all::

    await registry.execute("get_quotes", {"symbol": "AAPL"})            # no context
    await registry.execute("get_quotes", '{"symbol":"AAPL"}', ToolContext(profile="demo"))
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import os
import time
from collections.abc import Awaitable, Callable, Generator, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar, cast

from tooldeck.core.confirmation import ConfirmationCallback
from tooldeck.exceptions import ServiceNotFoundError

__all__ = [
    "EMPTY_CONTEXT",
    "PROGRESS_MESSAGE_CHARS",
    "EventEmitter",
    "ServiceContainer",
    "ToolContext",
    "ToolEvent",
    "new_request_id",
    "principal_of",
]

ANONYMOUS = "anonymous"
"""The principal of calls that name no user: a server without identities, ``tooldeck
call``, a stdio MCP client (its own user's machine). It owns every record made without
a user (approvals, runs, audit rows) and uses the credentials stored for it."""

T = TypeVar("T")


class ServiceContainer:
    """Shared dependencies (HTTP client, clock, audit store, ...) looked up by type.

    Seed 002: tools called through the API get the same dependencies as tools called
    by an agent, because every entry point hands the same container to ``ToolContext``.

    Example:
        >>> services = ServiceContainer()
        >>> services.register(dict, {"region": "eu"})
        >>> services.get(dict)["region"]
        'eu'
    """

    __slots__ = ("_factories", "_items")

    def __init__(self, items: Mapping[type[Any], Any] | None = None) -> None:
        self._items: dict[type[Any], Any] = dict(items or {})
        self._factories: dict[type[Any], Callable[[], Any]] = {}

    def register(self, kind: type[T], instance: T) -> None:
        """Register ``instance`` as the service for type ``kind`` (replaces any previous)."""
        self._items[kind] = instance

    def register_factory(self, kind: type[T], factory: Callable[[], T]) -> None:
        """Register a service built by ``factory()`` on first ``get`` (e.g. an HTTP client)."""
        self._items.pop(kind, None)
        self._factories[kind] = factory

    def created(self) -> list[Any]:
        """The service instances that exist now (factories not yet called are skipped)."""
        return list(self._items.values())

    def get(self, kind: type[T]) -> T:
        """Return the service registered for ``kind``.

        Raises:
            ServiceNotFoundError: nothing was registered for ``kind``; the message lists
                the types that are registered.
        """
        try:
            return cast(T, self._items[kind])
        except KeyError:
            factory = self._factories.pop(kind, None)
            if factory is not None:
                instance = self._items[kind] = factory()
                return cast(T, instance)
            known = ", ".join(sorted(k.__name__ for k in {**self._items, **self._factories}))
            known = known or "none"
            raise ServiceNotFoundError(
                f"no service registered for {kind.__name__}; registered: {known}. "
                f"Register it with services.register({kind.__name__}, instance)."
            ) from None

    def get_optional(self, kind: type[T]) -> T | None:
        """Return the service registered for ``kind``, or None."""
        return self.get(kind) if kind in self else None

    def __contains__(self, kind: object) -> bool:
        return kind in self._items or kind in self._factories


PROGRESS_MESSAGE_CHARS = 500
"""Most characters of a progress report's message (``ToolContext.report_progress``)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolEvent:
    """A progress event a tool emits while it runs (e.g. ``{"done": 3, "total": 10}``)."""

    type: str
    """Event name, e.g. ``progress``, ``log``."""
    data: Mapping[str, Any]
    """JSON-able payload."""
    request_id: str | None = None
    """The call the event belongs to."""
    timestamp: float = field(default_factory=time.time)
    """Unix time in seconds."""


EventEmitter = Callable[[ToolEvent], Awaitable[None] | None]
"""Receives progress events; sync or async."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolContext:
    """The caller's side of one call (seed 003 ``ToolContext``, seed 002 services).

    Semantics:
        Frozen; derive with ``ctx.derive(request_id=...)``. ``deadline`` is an absolute
        time on the ``time.monotonic()`` clock (the asyncio loop clock); the timeout
        policy uses the earlier of it and the tool's own timeout.
    """

    session_id: str | None = None
    """Conversation or client session."""
    run_id: str | None = None
    """Agent run the call belongs to."""
    request_id: str | None = None
    """Id for this call, e.g. an OpenAI ``tool_call_id``; generated when None."""
    idempotency_key: str | None = None
    """The caller's key for a call that must run at most once (REST ``Idempotency-Key``,
    MCP ``_meta.idempotencyKey``; a run's calls get one from the run). The receipts
    layer (``providers.receipts``) replaces it with the key of this exact call
    (principal, caller's key, tool, arguments), which is what the tool sees: pass it
    on to an API that takes idempotency keys. None: the caller asked for none."""
    user: str | None = None
    """Principal making the call."""
    channel: str | None = None
    """The entry point and connection the call came through (``rest``, ``cli``,
    ``mcp:<session>``): a pending approval can be decided only there (``ApprovalStore``)."""
    profile: str | None = None
    """Profile whose view of the tools applies."""
    settings: Mapping[str, Any] = field(default_factory=dict)
    """Free-form settings for tools."""
    services: ServiceContainer = field(default_factory=ServiceContainer)
    """Shared dependencies, looked up by type."""
    event_emitter: EventEmitter | None = None
    """Receives progress events from ``emit``."""
    output_dir: Path | None = None
    """Where tools may write files they return as artifacts."""
    deadline: float | None = None
    """Absolute ``time.monotonic()`` time by which the call must finish."""
    confirm: ConfirmationCallback | None = None
    """Asks a human to approve calls of tools that need confirmation; None: nobody to
    ask now, so such calls return ``confirmation_required`` (approve them later)."""
    approve_at: str | None = None
    """Where a person approves a call that returned ``confirmation_required`` (a
    command, a page), told to the model in the error message; ``{approval_id}`` in it
    is replaced with the approval's id. None: the message says only that a person
    must approve."""

    def derive(self, **changes: Any) -> ToolContext:
        """Return a copy with ``changes`` applied (``dataclasses.replace``, in half the time).

        Raises:
            TypeError: a name in ``changes`` is not a field.
        """
        return _derive(self, changes)

    async def emit(self, type: str, **data: Any) -> None:
        """Send a progress event to the emitter, if any; emitter errors are swallowed."""
        if self.event_emitter is None:
            return
        try:
            outcome = self.event_emitter(
                ToolEvent(type=type, data=data, request_id=self.request_id)
            )
            if inspect.isawaitable(outcome):
                await outcome
        except Exception:  # a broken progress listener must not fail the tool call
            return

    def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> Awaitable[None]:
        """Tell whoever follows the call how far it is: ``ctx.report_progress(3, 10, "page 3")``.

        The report is sent when called; the value returned may be awaited or not
        (``await ctx.report_progress(...)``, FastMCP's and the MCP SDK's form, works too).

        Callable from an async tool and from the worker thread a plain ``def`` tool
        runs in; never blocks, never raises. ``progress`` should grow with each report
        (MCP's ``notifications/progress`` asks it); ``total`` is what it counts to,
        None when unknown; ``message`` is cut to ``PROGRESS_MESSAGE_CHARS`` (a report
        may carry a stranger's text: a sandboxed script's, an upstream task's status).
        Without a follower (``event_emitter`` None) it does nothing. The entry points'
        followers are ``core.progress.EventRelay``; an async emitter of your own is
        scheduled on the running loop (called from a thread without one, the report
        is dropped).
        """
        emitter = self.event_emitter
        if emitter is None:
            return _REPORTED
        data: dict[str, Any] = {"progress": progress}
        if total is not None:
            data["total"] = total
        if message is not None:
            data["message"] = (
                message[:PROGRESS_MESSAGE_CHARS] if isinstance(message, str) else message
            )
        try:
            outcome = emitter(ToolEvent(type="progress", data=data, request_id=self.request_id))
        except Exception:  # a broken progress listener must not fail the tool call
            return _REPORTED
        if inspect.isawaitable(outcome):
            _schedule(outcome)
        return _REPORTED


class _Reported:
    """What ``report_progress`` returns: already done, so awaiting it (or not) is the same."""

    __slots__ = ()

    def __await__(self) -> Generator[None, None, None]:
        return
        yield  # a generator that ends at once: the await returns None


_REPORTED = _Reported()


_scheduled: set[asyncio.Future[Any]] = set()
"""Reports an async emitter is sending (a task needs a reference until it ends)."""


def _schedule(outcome: Awaitable[Any]) -> None:
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # no running loop in this thread
        if inspect.iscoroutine(outcome):
            outcome.close()
        return
    future = asyncio.ensure_future(outcome, loop=loop)
    _scheduled.add(future)
    future.add_done_callback(_scheduled.discard)


def _derive_function() -> Callable[[ToolContext, dict[str, Any]], ToolContext]:
    """``derive`` written out field by field, built once at import.

    ``dataclasses.replace`` costs ~3.8 µs a call (it re-runs ``__init__`` with every
    field); this ~1 µs, and every call derives a context at least once.
    """
    names = [f.name for f in fields(ToolContext)]
    body = [
        "def derive(self, changes):",
        "    new = _new(ToolContext)",
        "    take = changes.pop",
        *(f"    _set_{i}(new, take({n!r}, self.{n}))" for i, n in enumerate(names)),
        "    if changes:",
        "        raise TypeError(f'ToolContext has no field {sorted(changes)[0]!r}')",
        "    return new",
    ]
    scope: dict[str, Any] = {"_new": object.__new__, "ToolContext": ToolContext}
    for i, n in enumerate(names):  # each slot's own setter: half object.__setattr__'s cost
        scope[f"_set_{i}"] = vars(ToolContext)[n].__set__
    exec("\n".join(body), scope)  # our own field names, fixed at import
    return cast(Callable[[ToolContext, dict[str, Any]], ToolContext], scope["derive"])


_derive = _derive_function()


EMPTY_CONTEXT = ToolContext()
"""Shared context used when a caller passes none."""


_ID_PREFIX = os.urandom(4).hex()
_ID_COUNTER = itertools.count(1)


def new_request_id() -> str:
    """A process-unique call id: 8 random hex digits, ``-``, a hex counter (~0.2 µs).

    ``uuid4`` costs ~2 µs, a noticeable share of a whole call; the random prefix keeps
    ids from different processes apart.
    """
    return f"{_ID_PREFIX}-{next(_ID_COUNTER):x}"


def principal_of(ctx: ToolContext | None) -> str:
    """Whose call ``ctx`` is: its ``user``, else ``ANONYMOUS``."""
    return (ctx.user if ctx is not None else None) or ANONYMOUS
