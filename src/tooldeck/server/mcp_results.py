"""Results too long for a client's model, over MCP: head and tail, and the rest as a resource.

An MCP client (a desktop app) shows a tool's text content to its model; a 5 MB result
would fill its context. ``LongResults.shorten`` sends the head and tail with the
marker ``ToolResult.to_llm`` puts between them, and a ``resource_link`` to
``tooldeck://results/<token>``, whose ``resources/read`` gives the whole text (the
marker's offsets are into it), or a page of it with ``?offset=N&limit=M`` (characters;
a client whose transport bounds a message, as the official SDK's 1 MiB server-sent
event does, reads page by page). ``structuredContent`` stays whole: it is for
programs, and the tool's ``outputSchema`` describes all of it.

The whole texts are kept in memory, the newest first, within ``max_results`` and
``max_chars``; each is readable only by the owner that made the call (the principal
and its client's channel: the stdio client, or the HTTP session), and its URI carries
128 random bits, so that a client sharing a channel (2026-07-28 clients have no lasting
session) cannot guess another's.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from typing import Any

from tooldeck.core.result import DEFAULT_MAX_LLM_CHARS, ToolResult

__all__ = ["PAGE_LIMIT", "PREFIX", "LongResults"]

PREFIX = "tooldeck://results/"
"""The URIs of kept results: ``PREFIX + token`` (22 URL-safe characters, 128 random bits)."""


class LongResults:
    """The whole text of recent long results, by URI, each bound to its owner.

    Args:
        max_results: Results kept at most (the oldest go first).
        max_chars: Characters kept at most, over all results.
    """

    def __init__(self, max_results: int = 32, max_chars: int = 64_000_000) -> None:
        self.max_results = max_results
        self.max_chars = max_chars
        self._kept: OrderedDict[str, tuple[str, str, str]] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def shorten(self, result: ToolResult, wire: dict[str, Any], owner: str) -> dict[str, Any]:
        """``wire`` (``to_mcp_result(result)``), its text cut when the body is too long.

        ``owner`` names who may read the whole text back (the caller's principal and
        channel, ``server.mcp``).

        Returns ``wire`` as it is for an error or a body within ``DEFAULT_MAX_LLM_CHARS``
        (or one longer than ``max_chars``, which is not kept either: sent whole).
        """
        if result.error is not None:
            return wire
        body = result.llm_body()
        if len(body) <= DEFAULT_MAX_LLM_CHARS or len(body) > self.max_chars:
            return wire
        uri = PREFIX + secrets.token_urlsafe(16)
        text_body = result.output is not None or isinstance(result.data, str)
        mime = "text/plain" if text_body else "application/json"
        self._keep(uri, owner, body, mime)
        text = (
            f"{result.to_llm()}\n[the whole result, {len(body):,} characters: {uri} "
            f"(a page: {uri}?offset=0&limit={PAGE_LIMIT})]"
        )
        link = {
            "type": "resource_link",
            "uri": uri,
            "name": f"{result.metadata.tool_name} result",
            "mimeType": mime,
            "size": len(body.encode()),
        }
        content = [{"type": "text", "text": text}, *wire["content"][1:], link]
        return {**wire, "content": content}

    def read(self, uri: str, owner: str) -> dict[str, Any] | None:
        """``{"uri", "mimeType", "text"}`` of a kept result, or of a page of it.

        ``uri`` is a link's, or one with ``?offset=N&limit=M`` (characters; ``limit``
        at most ``PAGE_LIMIT``). None if the result is gone, is another owner's, or
        the page is not one (numbers, offset within the text).
        """
        base, _, query = uri.partition("?")
        with self._lock:
            kept = self._kept.get(base)
        if kept is None or kept[0] != owner:
            return None
        text = kept[1]
        if query:
            page = _page(query, len(text))
            if page is None:
                return None
            text = text[page[0] : page[0] + page[1]]
        return {"uri": uri, "mimeType": kept[2], "text": text}

    def source(self, owner: str) -> _OwnResults:
        """The kept results as a pack-like resource source, read as ``owner``."""
        return _OwnResults(self, owner)

    def _keep(self, uri: str, owner: str, body: str, mime: str) -> None:
        with self._lock:
            old = self._kept.pop(uri, None)
            if old is not None:
                self._chars -= len(old[1])
            self._kept[uri] = (owner, body, mime)
            self._chars += len(body)
            while len(self._kept) > self.max_results or self._chars > self.max_chars:
                _, (_, gone, _) = self._kept.popitem(last=False)
                self._chars -= len(gone)


PAGE_LIMIT = 500_000
"""Most characters one page read returns."""


def _page(query: str, length: int) -> tuple[int, int] | None:
    """(offset, limit) of ``offset=N&limit=M``; None when malformed or past the end."""
    fields = dict(part.partition("=")[::2] for part in query.split("&"))
    try:
        offset = int(fields.get("offset", "0"))
        limit = int(fields.get("limit", str(PAGE_LIMIT)))
    except ValueError:
        return None
    if not 0 <= offset <= length or limit < 1:
        return None
    return offset, min(limit, PAGE_LIMIT)


class _OwnResults:
    """``LongResults`` as a ``core.pack.ResourceSource`` for one owner (never listed)."""

    prefix = PREFIX
    tools: frozenset[str] = frozenset()

    def __init__(self, results: LongResults, owner: str) -> None:
        self._results = results
        self._owner = owner

    def list(self, viewer: str | None) -> list[dict[str, Any]]:
        """None: a result is reached through the link its call returned."""
        return []

    def read(self, uri: str, viewer: str | None) -> dict[str, Any] | None:
        """The whole text, if this owner made the call."""
        return self._results.read(uri, self._owner)
