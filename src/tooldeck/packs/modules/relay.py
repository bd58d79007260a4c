"""A module's HTTP, sent by the server for the sandbox: to declared hosts, past the address guard.

The sandbox a module runs in has no network. Its httpx requests come to the server as
``tools.http`` calls (``_inside.py``), and ``HttpRelay`` sends each one only to a host
the manifest's ``hosts`` declares (``host`` or ``host:port``), and only past the address
guard (``isolation.address_guard``): a declared host that resolves to a private or
loopback address is refused unless ``[packs.modules] allow_hosts`` names it, so a
module cannot declare its way to the cloud's metadata service or this server. The
vetted address is the one connected to; a response is cut at ``MAX_RESPONSE_BYTES``.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

import httpx

from tooldeck.exceptions import ToolFailure
from tooldeck.isolation.address_guard import AddressGuard

__all__ = ["MAX_RESPONSE_BYTES", "HttpRelay"]

MAX_RESPONSE_BYTES = 5_000_000
"""Bytes of one relayed HTTP response a module gets."""
_DROPPED = {"host", "content-length", "transfer-encoding", "connection", "content-encoding"}


class HttpRelay:
    """Sends a sandboxed module's HTTP requests (see the module docstring).

    Args:
        allow_hosts: Host names, IPs or CIDR ranges a declared host may resolve to
            although private or loopback (``[packs.modules] allow_hosts``).
    """

    def __init__(self, allow_hosts: Sequence[str] = ()) -> None:
        self.guard = AddressGuard(allow_hosts, setting="[packs.modules] allow_hosts")
        self._client: httpx.AsyncClient | None = None

    async def send(self, hosts: Sequence[str], arguments: dict[str, Any]) -> dict[str, Any]:
        """One request (``method``, ``url``, ``headers``, base64 ``body``); a ToolResult-shaped dict.

        Returns:
            ``{"status": "success", "data": {status_code, headers, body (base64)}}``, or
            an error: ``denied`` for an undeclared or private host (the message names
            the fix), ``execution`` for a request that failed.
        """
        try:
            url = httpx.URL(str(arguments["url"]))
            if not declared(url, hosts):
                listed = ", ".join(hosts) or "none"
                return relay_error(
                    "denied",
                    f"{url.host} is not among the hosts module.toml declares ({listed}); "
                    f'add it: hosts = ["{url.host}"]',
                )
            vetted = await self.guard.check(url)
            response = await self._send(url, vetted.address, arguments)
        except ToolFailure as exc:
            return relay_error(exc.error_type, str(exc))
        except (httpx.HTTPError, KeyError, ValueError, TypeError) as exc:
            return relay_error("execution", f"{type(exc).__name__}: {exc}")
        return {"status": "success", "data": response}

    async def _send(
        self, url: httpx.URL, address: str, arguments: dict[str, Any]
    ) -> dict[str, Any]:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=30.0)
        headers = [(k, v) for k, v in arguments.get("headers", []) if k.lower() not in _DROPPED]
        headers.append(("Host", url.netloc.decode("ascii")))
        request = self._client.build_request(
            str(arguments.get("method", "GET")),
            url.copy_with(host=address),
            headers=headers,
            content=base64.b64decode(arguments.get("body", "")),
            extensions={"sni_hostname": url.host} if url.scheme == "https" else {},
        )
        response = await self._client.send(request, stream=True)
        body = bytearray()
        try:
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > MAX_RESPONSE_BYTES:
                    raise ValueError(f"the response is over {MAX_RESPONSE_BYTES} bytes")
        finally:
            await response.aclose()
        return {
            "status_code": response.status_code,
            "headers": [[k, v] for k, v in response.headers.multi_items() if k not in _DROPPED],
            "body": base64.b64encode(bytes(body)).decode(),
        }

    async def aclose(self) -> None:
        """Close the HTTP client."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def declared(url: httpx.URL, hosts: Sequence[str]) -> bool:
    """Whether the manifest's ``hosts`` declares ``url``'s host (``host`` or ``host:port``)."""
    host = url.host.lower().rstrip(".")
    port = url.port or (443 if url.scheme == "https" else 80)
    for item in hosts:
        name, _, wanted = item.lower().partition(":")
        if name.rstrip(".") == host and (not wanted or wanted == str(port)):
            return True
    return False


def relay_error(kind: str, message: str) -> dict[str, Any]:
    """A ToolResult-shaped error dict, as the sandbox's ``tools`` channel reads it."""
    return {"status": "error", "error": {"type": kind, "message": message}}
