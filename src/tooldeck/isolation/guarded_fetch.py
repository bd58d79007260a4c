"""GET a URL past the address guard, every redirect hop checked again, the body capped.

Shared by what fetches a URL someone else gave: the ``web`` tool, ``tooldeck docs add
URL``. The vetted address is the one connected to (``Host`` and the TLS server name
stay the URL's), so a DNS answer that changes between the check and the connection
cannot lead elsewhere.

Example::

    async with httpx.AsyncClient() as client:
        fetched = await guarded_get(client, "https://example.org", FetchLimits(), AddressGuard())
        fetched.body[:100]
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from tooldeck.exceptions import InvalidArgumentsError, ToolFailure, TransientToolError
from tooldeck.isolation.address_guard import AddressGuard

__all__ = ["FetchLimits", "Fetched", "guarded_get"]


@dataclass(frozen=True, kw_only=True)
class FetchLimits:
    """What one fetch may take."""

    timeout_s: float = 15.0
    """Seconds per HTTP request (each redirect hop is one)."""
    max_bytes: int = 5_000_000
    """Bytes of the body read; the rest is dropped and ``Fetched.cut`` set."""
    max_redirects: int = 5
    """Redirects followed, each target checked like the first URL."""
    user_agent: str = "tooldeck/1.0"
    """The ``User-Agent`` header."""
    setting: str = "max_redirects"
    """The setting that holds ``max_redirects``, named when there are more."""


@dataclass(frozen=True, kw_only=True)
class Fetched:
    """A fetched response."""

    url: httpx.URL
    """The final URL, after redirects."""
    response: httpx.Response
    """Its status and headers (the body is in ``body``)."""
    body: bytes
    """At most ``FetchLimits.max_bytes`` of the body."""
    cut: bool
    """Whether the body was longer."""


async def guarded_get(
    client: httpx.AsyncClient, url: str, limits: FetchLimits, guard: AddressGuard
) -> Fetched:
    """GET ``url`` past ``guard`` (see the module docstring).

    Raises:
        ToolFailure: a non-public address (``ToolDeniedError``), not an http(s) URL or
            too many redirects (``InvalidArgumentsError``), an HTTP error status
            (``TransientToolError`` for 5xx), a network failure or a timeout
            (``TransientToolError``).
    """
    target: str | httpx.URL = url
    for _hop in range(limits.max_redirects + 1):
        vetted = await guard.check(target)
        response, body, cut = await _get(client, vetted.url, vetted.address, limits)
        if response.is_redirect and "location" in response.headers:
            target = vetted.url.join(response.headers["location"])
            continue
        break
    else:
        raise InvalidArgumentsError(
            f"url: more than {limits.max_redirects} redirects ({limits.setting})"
        )
    if response.status_code >= 400:
        error = TransientToolError if response.status_code >= 500 else ToolFailure
        raise error(
            f"fetching {vetted.url} failed: HTTP {response.status_code} {response.reason_phrase}",
            details={"status_code": response.status_code},
        )
    return Fetched(url=vetted.url, response=response, body=body, cut=cut)


async def _get(
    client: httpx.AsyncClient, url: httpx.URL, address: str, limits: FetchLimits
) -> tuple[httpx.Response, bytes, bool]:
    """GET ``url`` from ``address``: the response, at most ``max_bytes`` of its body, cut."""
    host_header = url.netloc.decode("ascii")
    extensions = {"sni_hostname": url.host} if url.scheme == "https" else {}
    request = client.build_request(
        "GET",
        url.copy_with(host=address),
        headers={"Host": host_header, "User-Agent": limits.user_agent},
        timeout=limits.timeout_s,
        extensions=extensions,
    )
    try:
        response = await client.send(request, stream=True, follow_redirects=False)
    except httpx.TimeoutException:
        raise TransientToolError(f"fetching {url} timed out after {limits.timeout_s:g} s") from None
    except httpx.HTTPError as exc:
        raise TransientToolError(f"fetching {url} failed: {exc}") from None
    body = bytearray()
    cut = False
    try:
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > limits.max_bytes:
                del body[limits.max_bytes :]
                cut = True
                break
    finally:
        await response.aclose()
    return response, bytes(body), cut
