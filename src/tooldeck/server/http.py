"""ToolResult → HTTP: the status code follows the error type; the body is always the envelope."""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from collections.abc import Awaitable, Iterator
from contextlib import contextmanager
from typing import Any

from fastapi import HTTPException, Request, Response
from opentelemetry import context as otel_context
from opentelemetry import propagate
from pydantic import BaseModel
from pydantic_core import PydanticSerializationError
from starlette.types import ASGIApp, Receive, Scope, Send

from tooldeck.core.context import ToolContext
from tooldeck.core.result import ToolResult
from tooldeck.exceptions import ConfigError, RunEngineError, RunNotFoundError, RunStateError
from tooldeck.observability.audit import AuditStore
from tooldeck.observability.redact import redact, redact_text  # redact: for pack routes
from tooldeck.providers.base import ToolsProvider
from tooldeck.providers.receipts import key_problem
from tooldeck.runtime import Runtime
from tooldeck.server.identity import principal_from_headers

__all__ = [
    "IDEMPOTENCY_KEY",
    "PROFILE",
    "STATUS_BY_ERROR",
    "TIME_SCHEMA",
    "TOOL_RESPONSES",
    "USER",
    "Problem",
    "RedactedAccessLog",
    "TraceContextMiddleware",
    "audit_of",
    "call_context",
    "caller_of",
    "is_approver",
    "problems",
    "redact",
    "result_response",
    "run_errors",
    "runtime_of",
    "tool_response",
    "unless_client_leaves",
    "view_of",
]

STATUS_BY_ERROR = {
    "not_found": 404,
    "validation": 422,
    "timeout": 504,
    "circuit_open": 503,
    "unavailable": 503,
    "execution": 500,
    "denied": 403,
    "cancelled": 499,
    "confirmation_required": 409,
}
"""HTTP status of an error result, by ``error.type``; success is 200."""


class Problem(BaseModel):
    """The body of an HTTP error that is not a tool's (an unknown id, a malformed body)."""

    detail: str
    """What is wrong and how to fix it."""


_WHY = {
    400: "The body is not valid JSON, or a value cannot be read (the detail says which).",
    404: "No such object (the detail names it).",
    409: "The object is in a state that does not allow this.",
}


def problems(*codes: int, **why: str) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` for HTTP errors answered with a ``Problem`` body.

    ``why`` gives a route's own description of a code (``e404="No run has this id."``).
    The body is JSON even on a route whose own responses are another media type (an
    event stream), so the media type is stated.
    """
    json_body = {"application/json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
    return {
        code: {
            "model": Problem,
            "description": why.get(f"e{code}") or _WHY[code],
            "content": json_body,
        }
        for code in codes
    }


TOOL_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"model": ToolResult, "description": "ToolResult, status success"},
    **{
        status: {
            "model": ToolResult | Problem if status == 404 else ToolResult,
            "description": f"ToolResult, error {kind}",
        }
        for kind, status in {
            "denied": 403,
            "not_found (a Problem for an unknown profile)": 404,
            "confirmation_required": 409,
            "validation (or arguments that are not a JSON object)": 422,
            "execution": 500,
            "circuit_open or unavailable": 503,
            "timeout": 504,
        }.items()
    },
}
"""OpenAPI ``responses`` of an endpoint that answers a tool's ``ToolResult``."""

PROFILE: dict[str, Any] = {
    "name": "profile",
    "in": "query",
    "required": False,
    "description": "The profile whose view of the tools applies (default: every tool).",
    "schema": {"type": "string"},
}
USER: dict[str, Any] = {
    "name": "X-User",
    "in": "header",
    "required": False,
    "description": "The caller, read only when server.trust_user_header is set (behind an "
    "authenticating proxy).",
    "schema": {"type": "string"},
}
IDEMPOTENCY_KEY: dict[str, Any] = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "description": "Run a call of a tool with side effects at most once: a repeated key "
    "(same caller, tool and arguments) answers the stored result, marked by the response "
    "header Idempotent-Replayed (docs/exactly-once.md). 1 to 255 printable ASCII "
    "characters, e.g. a UUID.",
    "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[ -~]+$"},
}
"""OpenAPI parameters of the profile (``?profile=``), the caller (``X-User``) and the
idempotency key."""

TIME_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {"type": "string", "maxLength": 0},
        {"type": "string", "pattern": r"^\s*\d+(\.\d+)?\s*[smhdw]\s*$"},
        {"type": "string", "format": "date"},
        {"type": "string", "format": "date-time"},
    ]
}
"""A point in time as the audit endpoints read it: empty (no bound), a duration back
from now, or an ISO date or date-time."""


def result_response(result: ToolResult) -> Response:
    """The JSON response for ``result``, with the status of its error type.

    A stored result answered for a repeated ``Idempotency-Key`` carries the header
    ``Idempotent-Replayed: true`` (Stripe's name for it).

    Text that UTF-8 cannot carry (a lone surrogate a caller sent, echoed in an error)
    is sent as JSON unicode escapes instead of failing the response.
    """
    status = 200 if result.error is None else STATUS_BY_ERROR.get(result.error.type.value, 500)
    try:
        content = result.model_dump_json()
    except PydanticSerializationError:
        content = json.dumps(result.model_dump(mode="json"), ensure_ascii=True)
    replayed = {"Idempotent-Replayed": "true"} if result.metadata.replay_of else None
    return Response(
        content=content, status_code=status, media_type="application/json", headers=replayed
    )


async def unless_client_leaves(request: Request, call: Awaitable[ToolResult]) -> ToolResult | None:
    """``await call``, cancelled if the client disconnects first; None then.

    A REST client that closes its connection (its own time-out, Ctrl-C, a closed
    tab) no longer wants the result: the call is cancelled, as an MCP client's
    ``notifications/cancelled`` cancels one (an async tool is cancelled, a sandboxed
    one's processes are killed, a thread is abandoned), and the audit records it as
    ``cancelled``. A call with an ``Idempotency-Key`` runs on regardless
    (``providers.receipts`` shields it), so the client's retry gets its stored result.
    The body must have been read: the watch reads the next ASGI message, which is
    ``http.disconnect`` when the client goes (uvicorn sends it at once).

    The watch is a task started at the loop's next turn, as a new task's first step
    would be: a call that finishes without waiting (an in-memory tool) is over before
    then and costs no task (1-2 µs of a ~90 µs request, measured in process).
    """
    task = asyncio.current_task()
    assert task is not None, "called from a request handler"
    loop = asyncio.get_running_loop()
    gone = False
    watcher: asyncio.Task[None] | None = None

    async def watch() -> None:
        nonlocal gone
        while (await request.receive())["type"] != "http.disconnect":
            continue
        gone = True
        task.cancel()

    def start() -> None:
        nonlocal watcher
        watcher = loop.create_task(watch())

    starting = loop.call_soon(start)
    try:
        return await call
    except asyncio.CancelledError:
        if not gone:
            raise
        task.uncancel()
        return None
    finally:
        starting.cancel()
        if watcher is not None:
            watcher.cancel()


async def tool_response(request: Request, call: Awaitable[ToolResult]) -> Response:
    """``call``'s ToolResult as the response (``result_response``), cancelled if the client leaves.

    Every REST route that runs a tool answers through it, so a client that goes away
    cancels its call wherever it called (``unless_client_leaves``: audited
    ``cancelled``, issue 55). Then 499 (nginx's "client closed request"): nobody reads it.
    """
    result = await unless_client_leaves(request, call)
    return Response(status_code=499) if result is None else result_response(result)


def runtime_of(request: Request) -> Runtime:
    """The application's runtime."""
    return request.app.state.runtime  # type: ignore[no-any-return]


def audit_of(request: Request) -> AuditStore:
    """The runtime's audit store.

    Raises:
        HTTPException: 404 when auditing is off (history, stats and metrics read it).
    """
    store = runtime_of(request).audit
    if store is None:
        raise HTTPException(
            status_code=404,
            detail="audit is disabled ([audit] enabled = false); "
            "history, stats and /metrics read the audit store",
        )
    return store


def view_of(request: Request) -> ToolsProvider:
    """The provider stack of the request's ``?profile=`` (all tools without one).

    Raises:
        HTTPException: 404 for an unknown profile, naming the configured ones.
    """
    try:
        return runtime_of(request).view(request.query_params.get("profile"))
    except ConfigError as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from None


def caller_of(request: Request) -> str | None:
    """The caller's identity: ``X-User`` when ``server.trust_user_header`` is set, else None.

    The header is anyone's to send; it names a principal only behind a proxy that
    authenticates users and sets it (docs/deploy.md). Untrusted, calls are ``anonymous``.
    """
    trusted = runtime_of(request).settings.server.trust_user_header
    return principal_from_headers(trusted, request.headers)


def is_approver(request: Request) -> bool:
    """Whether the caller is in ``[approvals] approvers``.

    An approver sees and decides every user's approvals and runs and reads every
    user's audit records; everyone else only their own (``providers.approvals.visible_to``).
    """
    return (caller_of(request) or "anonymous") in runtime_of(request).settings.approvals.approvers


def call_context(request: Request) -> ToolContext:
    """A context for a REST call: request headers, ``?profile=`` and the caller.

    Headers read: ``X-Request-ID``, ``X-Session-ID``, ``Idempotency-Key``.

    Raises:
        HTTPException: 422 when ``Idempotency-Key`` is not 1 to 255 printable ASCII
            characters (``providers.receipts.key_problem``).
    """
    headers = request.headers
    key = headers.get("idempotency-key")
    problem = None if key is None else key_problem(key)
    if problem is not None:
        raise HTTPException(status_code=422, detail=f"Idempotency-Key header: {problem}")
    return runtime_of(request).context(
        request_id=headers.get("x-request-id"),
        idempotency_key=key,
        session_id=headers.get("x-session-id"),
        user=caller_of(request),
        channel="rest",
        profile=request.query_params.get("profile"),
    )


_TRACE_HEADERS = (b"traceparent", b"tracestate", b"baggage")


class TraceContextMiddleware:
    """ASGI middleware: a request's W3C ``traceparent`` becomes the parent of its tool spans.

    A client that traces (an agent calling ``/api/tools/execute/...``) sees each
    ``execute_tool`` span under its own; requests without the header cost one scan
    of their headers.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Attach the extracted context for the request's lifetime."""
        carrier = (
            {
                k.decode("latin-1"): v.decode("latin-1")
                for k, v in scope["headers"]
                if k in _TRACE_HEADERS
            }
            if scope["type"] == "http"
            else None
        )
        if not carrier:
            await self.app(scope, receive, send)
            return
        token = otel_context.attach(propagate.extract(carrier))
        try:
            await self.app(scope, receive, send)
        finally:
            otel_context.detach(token)


class RedactedAccessLog(logging.Filter):
    """A filter for uvicorn's access log: credentials in request lines become ``***``.

    ``?api_key=…`` or ``?token=…`` in a URL would otherwise land in the server's log
    as sent; ``tooldeck serve`` installs it on the access handler. The redacted forms
    of the last 256 short arguments (a client's address, a path) are kept: a server's
    lines repeat, and redacting a path costs ~8 µs (``_redacted_line``).
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """Redact the request line's arguments; never drops a record."""
        if isinstance(record.args, tuple):
            record.args = tuple(
                (_redacted_line(a) if len(a) <= 512 else redact_text(a))
                if isinstance(a, str)
                else a
                for a in record.args
            )
        return True


@functools.lru_cache(maxsize=256)
def _redacted_line(text: str) -> str:
    """``redact_text(text)``, remembered for the access log's repeated arguments."""
    return redact_text(text)


@contextmanager
def run_errors() -> Iterator[None]:
    """Run errors as HTTP statuses (the ``/api/runs`` routes and a run's approvals).

    ``RunNotFoundError`` → 404, ``RunStateError`` (an illegal transition) → 409,
    ``PermissionError`` → 403, ``RunEngineError`` (Temporal unreachable) → 503.
    """
    try:
        yield
    except RunEngineError as exc:
        raise HTTPException(status_code=503, detail=str(exc)) from None
    except RunNotFoundError as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from None
    except RunStateError as exc:
        raise HTTPException(status_code=409, detail=str(exc)) from None
    except PermissionError as exc:
        raise HTTPException(status_code=403, detail=str(exc)) from None
