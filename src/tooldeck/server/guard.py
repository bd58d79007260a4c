"""What a request must be before any route sees it: the browser-facing defences.

A tool server on 127.0.0.1 is reachable by every web page its user opens. A page
cannot read a cross-origin answer, but it can *send*: a ``text/plain`` POST is a
"simple request" the browser sends without asking (no CORS preflight), and a page
served from a hostname the attacker later points at 127.0.0.1 (DNS rebinding) is
even same-origin with the server. ``RequestGuard`` closes both, on every route
(REST, UI, ``/mcp``, ``/metrics``), in this order:

1. **Host** (421): the ``Host`` header names this server: an IP literal (a rebinding
   page cannot make the browser send one that is not its own origin), ``localhost``,
   the address the server binds, or a name in ``server.allowed_hosts``.
2. **Origin** (403): a browser's ``Origin``, when present, is the server's own
   (``scheme://host[:port]`` of the request) or listed in ``server.allowed_origins``.
   ``Origin: null`` (sandboxed frames, ``file://`` pages) is refused. Clients that are
   not browsers send no ``Origin`` and pass.
3. **Body type** (415): a request that carries a body carries JSON
   (``application/json`` or ``application/*+json``), so no form or ``text/plain``
   POST reaches a tool.
4. **Body size** (413): at most ``server.max_body_bytes`` (default 1 MiB), counted as
   the body arrives, chunked or not; a route that takes files (``POST
   /api/documents/upload``) has its own limit, still counted the same way.

These are the rules of MCP's streamable HTTP transport (``Host`` and ``Origin``
validation against DNS rebinding) applied to the whole server, plus the body rules
that make a cross-origin "simple request" useless.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["GuardRules", "RequestGuard"]

_WILDCARD_BINDS = ("0.0.0.0", "::", "")
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


@dataclass(frozen=True, kw_only=True)
class GuardRules:
    """What ``RequestGuard`` accepts (built from ``[server]`` by ``from_settings``)."""

    hosts: frozenset[str]
    """Host names accepted besides IP literals (lower case, no port); ``*`` accepts any."""
    origins: frozenset[str]
    """Cross-origin browser origins accepted, e.g. ``https://app.example.com``."""
    max_body_bytes: int
    """Largest request body, in bytes."""
    large_bodies: Mapping[str, int] = field(default_factory=dict)
    """Paths with a limit of their own (uploads), in bytes."""

    @classmethod
    def build(
        cls,
        *,
        bind_host: str,
        allowed_hosts: Iterable[str] = (),
        allowed_origins: Iterable[str] = (),
        max_body_bytes: int = 1 << 20,
        large_bodies: Mapping[str, int] | None = None,
    ) -> GuardRules:
        """Rules for a server bound to ``bind_host`` plus the configured names.

        Args:
            bind_host: The interface the server binds (``127.0.0.1``, a name, ``0.0.0.0``).
            allowed_hosts: Extra names clients use for the server (``tools.example.com``).
            allowed_origins: Web apps on other origins allowed to call the API.
            max_body_bytes: Body limit in bytes.
            large_bodies: Paths that take more (``{"/api/documents/upload": bytes}``).
        """
        hosts = {"localhost", *(h.lower().rstrip(".") for h in allowed_hosts)}
        if bind_host not in _WILDCARD_BINDS and not _is_ip(bind_host):
            hosts.add(bind_host.lower())
        return cls(
            hosts=frozenset(hosts),
            origins=frozenset(o.rstrip("/").lower() for o in allowed_origins),
            max_body_bytes=max_body_bytes,
            large_bodies=dict(large_bodies or {}),
        )

    def body_limit(self, path: str) -> int:
        """The largest body ``path`` takes, in bytes.

        Its own limit (a ``large_bodies`` key ending in ``/`` covers every path under
        it), else ``max_body_bytes``.
        """
        own = self.large_bodies.get(path)
        if own is not None:
            return own
        under = [k for k in self.large_bodies if k.endswith("/") and path.startswith(k)]
        return self.large_bodies[max(under, key=len)] if under else self.max_body_bytes

    def host_problem(self, host: str) -> str | None:
        """Why the ``Host`` header ``host`` is refused, or None when it is accepted."""
        name = _hostname(host)
        if name is None:
            return f"malformed Host header {host!r}"
        if _is_ip(name) or name in self.hosts or "*" in self.hosts:
            return None
        return (
            f"Host {name!r} is not a name of this server (DNS-rebinding protection); "
            "add it to server.allowed_hosts if clients reach the server by that name"
        )

    def origin_problem(self, origin: str, scheme: str, host: str) -> str | None:
        """Why the browser ``Origin`` is refused for a request to ``scheme://host``."""
        normalised = origin.rstrip("/").lower()
        if normalised == f"{scheme}://{host}".lower() or normalised in self.origins:
            return None
        return (
            f"cross-origin request from {origin!r} refused; a web app on another origin "
            "must be listed in server.allowed_origins"
        )


class RequestGuard:
    """ASGI middleware enforcing ``GuardRules`` on every HTTP request (module docstring).

    Refusals are JSON ``{"detail": ...}`` with 421, 403, 415 or 413; nothing of the
    request reaches the application.
    """

    def __init__(self, app: ASGIApp, rules: GuardRules) -> None:
        self.app = app
        self.rules = rules
        self._verdicts: dict[str, str | None] = {}
        """``host_problem`` of the last Host headers seen (up to 64; a server's repeat)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the request line and headers, then the body as it is read."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        if host in self._verdicts:
            problem = self._verdicts[host]
        else:
            problem = self.rules.host_problem(host)
            if len(self._verdicts) >= 64:
                self._verdicts.clear()
            self._verdicts[host] = problem
        if problem is not None:
            await _refuse(send, 421, problem)
            return
        origin = headers.get("origin")
        if origin is not None:
            problem = self.rules.origin_problem(origin, scope.get("scheme", "http"), host)
            if problem is not None:
                await _refuse(send, 403, problem)
                return
        if scope["method"] not in _BODY_METHODS:
            await self.app(scope, receive, send)
            return
        declared = headers.get("content-length")
        chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        has_body = chunked or (declared is not None and declared.strip() not in ("", "0"))
        if has_body and not _is_json(headers.get("content-type", "")):
            await _refuse(
                send,
                415,
                f"request body must be JSON (Content-Type: application/json); "
                f"got {headers.get('content-type') or 'no Content-Type'}",
            )
            return
        limit = self.rules.body_limit(scope["path"])
        if declared is not None and declared.strip().isdigit() and int(declared) > limit:
            await _refuse(send, 413, _too_large(limit))
            return
        body = await _read_body(receive, limit)
        if body is None:
            await _refuse(send, 413, _too_large(limit))
            return
        await self.app(scope, _replay(body, receive), send)


def _too_large(limit: int) -> str:
    return f"request body larger than server.max_body_bytes={limit} bytes"


def _is_json(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        return False
    return True


def _hostname(host: str) -> str | None:
    """The name in a ``Host`` header, without port or IPv6 brackets; None if malformed."""
    host = host.strip().lower()
    if not host:
        return None
    if host.startswith("["):
        end = host.find("]")
        return host[1:end] if end > 1 else None
    name, _, port = host.partition(":")
    if port and not port.isdigit():
        return None
    return name.rstrip(".") or None


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole body, or None once it passes ``limit`` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":  # client went away: hand over what came
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()  # disconnect notifications, for streaming responses
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


async def _refuse(send: Send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
