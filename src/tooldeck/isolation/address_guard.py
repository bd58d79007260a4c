"""SSRF guard: a URL may be fetched only if every address it resolves to is public.

``AddressGuard.check(url)`` resolves the host and returns the vetted address; the
fetcher then connects to that address (with the original ``Host`` and TLS server name),
so a DNS answer that changes between check and connect cannot point it elsewhere.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from tooldeck.exceptions import InvalidArgumentsError, ToolDeniedError, ToolUnavailableError

__all__ = ["AddressGuard", "VettedURL"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class VettedURL:
    """A URL whose host resolved to an allowed address."""

    url: httpx.URL
    """The URL as given (normalised)."""
    address: str
    """The address to connect to."""


class AddressGuard:
    """Refuses URLs that reach private, loopback, link-local or other non-public addresses.

    Semantics:
        Only ``http`` and ``https`` URLs with a host pass. The host is resolved (IP
        literals in any form the resolver accepts, e.g. ``127.1`` or ``2130706433``,
        included) and every address must be globally routable
        (``ipaddress``'s ``is_global``). An IPv6 address that carries an IPv4 one
        (IPv4-mapped ``::ffff:0:0/96``, IPv4-compatible ``::/96``, NAT64
        ``64:ff9b::/96`` and ``64:ff9b:1::/48``, 6to4 ``2002::/16``, Teredo) is judged
        by the IPv4 address too. Unless the host name, the address or a CIDR range
        containing it is in ``allow``.

    Args:
        allow: Host names, IP addresses or CIDR ranges that may be non-public.
        setting: The setting that holds ``allow``, named in a refusal's message.
    """

    def __init__(self, allow: Sequence[str] = (), setting: str = "web.allow_hosts") -> None:
        self.setting = setting
        self.hosts: set[str] = set()
        self.networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        for item in allow:
            try:
                self.networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                self.hosts.add(item.lower().rstrip("."))

    def allowed(self, host: str, address: IPAddress) -> bool:
        """Whether ``address`` (resolved from ``host``) may be reached."""
        if host.lower().rstrip(".") in self.hosts:
            return True
        embedded = _embedded_ipv4(address)
        judged = embedded or address
        if any(judged in network or address in network for network in self.networks):
            return True
        return (
            judged.is_global
            and not judged.is_multicast
            and (embedded is None or (address.is_global and not address.is_multicast))
        )

    async def check(self, url: str | httpx.URL) -> VettedURL:
        """Resolve and vet ``url``.

        Raises:
            InvalidArgumentsError: not an http(s) URL with a host.
            ToolDeniedError: an address of the host is not allowed; the message names it
                and the ``allow_hosts`` setting.
            ToolUnavailableError: the host name does not resolve.
        """
        parsed, port = _http_url(url)
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(
                parsed.host, port, type=socket.SOCK_STREAM
            )
        except (socket.gaierror, UnicodeError) as exc:
            raise ToolUnavailableError(f"cannot resolve host {parsed.host!r}: {exc}") from None
        return self._vetted(parsed, infos)

    def check_blocking(self, url: str | httpx.URL) -> VettedURL:
        """``check`` resolving in this thread, for start-up code that has no event loop.

        Raises:
            InvalidArgumentsError, ToolDeniedError, ToolUnavailableError: as ``check``.
        """
        parsed, port = _http_url(url)
        try:
            infos = socket.getaddrinfo(parsed.host, port, type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError) as exc:
            raise ToolUnavailableError(f"cannot resolve host {parsed.host!r}: {exc}") from None
        return self._vetted(parsed, infos)

    def _vetted(self, parsed: httpx.URL, infos: Sequence[tuple[Any, ...]]) -> VettedURL:
        """The first address of ``infos``, once every one is allowed."""
        host = parsed.host
        addresses = list(dict.fromkeys(str(info[4][0]).split("%")[0] for info in infos))
        for text in addresses:
            address = ipaddress.ip_address(text)
            if not self.allowed(host, address):
                raise ToolDeniedError(
                    f"{parsed} resolves to {address}, a private, loopback, link-local or "
                    "otherwise non-public address; fetching it is refused (add the host to "
                    f"{self.setting} to permit it)",
                    details={"url": str(parsed), "address": str(address)},
                )
        return VettedURL(parsed, addresses[0])


def _http_url(url: str | httpx.URL) -> tuple[httpx.URL, int]:
    """``url`` parsed, with its port; an http(s) URL with a host, or a validation error."""
    try:
        parsed = httpx.URL(str(url))
    except (httpx.InvalidURL, TypeError) as exc:
        raise InvalidArgumentsError.for_field(
            "url", f"{url!r} is not a valid URL ({exc})"
        ) from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise InvalidArgumentsError.for_field("url", f"{url!r} is not an http(s) URL with a host")
    return parsed, parsed.port or (443 if parsed.scheme == "https" else 80)


_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
_COMPATIBLE = ipaddress.ip_network("::/96")


def _embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 transition address leads to, if any."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]  # the client; its server is public by definition
    if address in _COMPATIBLE or any(address in net for net in _NAT64):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None
