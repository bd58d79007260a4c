"""Who is calling: one principal per request, resolved the same way on every transport.

REST (``server.http.caller_of``) and MCP over HTTP (``server.mcp``) read the caller
here, from the request's headers: ``X-User`` names the principal only when
``[server] trust_user_header`` is set (behind a proxy that authenticates users and
sets it, docs/deploy.md); otherwise every caller is ``anonymous`` (None here). The API
key is checked before either reads it. Over stdio (``tooldeck mcp``) there are no
headers: the caller is the person who started the process, ``anonymous``.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["USER_HEADER", "principal_from_headers"]

USER_HEADER = "x-user"
"""The header a trusted proxy names the user in (lower case, as ASGI gives it)."""


def principal_from_headers(
    trust_user_header: bool, headers: Mapping[str, str] | None
) -> str | None:
    """The caller named by ``headers``, or None (``anonymous``).

    Args:
        trust_user_header: ``[server] trust_user_header``.
        headers: The request's headers (a case-insensitive mapping, as Starlette's);
            None for a transport without headers (stdio).

    Returns:
        ``X-User``'s value when trusted and non-empty, else None.
    """
    if not trust_user_header or headers is None:
        return None
    return headers.get(USER_HEADER) or None
