"""``web``: fetch a page as readable text, or search the web (seed 000 #9: one tool).

Example::

    await tool.execute({"action": "fetch", "url": "https://example.org", "max_chars": 2000})
    await tool.execute({"action": "search", "query": "model context protocol"})
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
from pydantic import BaseModel, Field

from tooldeck.core.composite import ActionStrategy, CompositeTool
from tooldeck.core.context import ToolContext
from tooldeck.core.definition import ToolAnnotations
from tooldeck.exceptions import (
    ToolFailure,
    ToolUnavailableError,
    TransientToolError,
)
from tooldeck.isolation.address_guard import AddressGuard
from tooldeck.isolation.guarded_fetch import FetchLimits, guarded_get
from tooldeck.packs.builtin.config import SearchConfig, WebConfig
from tooldeck.packs.builtin.http_client import http_client

__all__ = ["WebTool", "extract_page"]

_TEXT_TYPES = ("text/plain", "text/markdown", "text/csv", "application/json", "application/xml")


class FetchRequest(BaseModel):
    """Arguments of ``fetch``."""

    url: str = Field(max_length=8192, description="The http(s) URL to fetch.")
    extract_links: bool = Field(False, description="Also return the page's links.")
    max_chars: int = Field(8000, ge=100, le=200_000, description="Longest text returned.")


class SearchRequest(BaseModel):
    """Arguments of ``search``."""

    query: str = Field(min_length=1, max_length=1000, description="What to search for.")
    num_results: int = Field(5, ge=1, le=20, description="How many results.")


def extract_page(html: str, url: str, extract_links: bool) -> dict[str, Any]:
    """Title, main content as Markdown, and links (absolute) of an HTML page (trafilatura).

    Raises:
        ToolUnavailableError: trafilatura is not installed.
    """
    try:
        import lxml.html
        import trafilatura
    except ImportError:
        raise ToolUnavailableError(
            "web fetch needs trafilatura: pip install 'tooldeck[builtin]'", retryable=False
        ) from None
    content = trafilatura.extract(
        html, url=url, output_format="markdown", include_links=False, favor_recall=True
    )
    metadata = trafilatura.extract_metadata(html, default_url=url)
    title = metadata.title if metadata is not None else None
    links: list[dict[str, str]] = []
    if extract_links or title is None or not content:
        try:
            document = lxml.html.fromstring(html)
        except Exception:  # lxml refuses some inputs (empty, XML declarations)
            document = None
        if document is not None:
            document.make_links_absolute(url)
            if title is None:
                found = document.findtext(".//title")
                title = found.strip() if found else None
            if not content:
                content = " ".join(document.text_content().split())
            if extract_links:
                seen: set[str] = set()
                for anchor in document.iter("a"):
                    href = anchor.get("href") or ""
                    if href.startswith(("http://", "https://")) and href not in seen:
                        seen.add(href)
                        links.append({"url": href, "text": " ".join(anchor.text_content().split())})
    return {"title": title, "content": content or "", "links": links}


class Fetch(ActionStrategy):
    """Fetch a page."""

    name = "fetch"
    description = "Download a web page and return its main text as Markdown."
    RequestModel = FetchRequest

    def __init__(self, config: WebConfig) -> None:
        self.config = config
        self.guard = AddressGuard(config.allow_hosts)

    async def run(self, request: FetchRequest, ctx: ToolContext) -> dict[str, Any]:
        """Fetch the page (``as_of`` in the data is when it was fetched).

        Returns:
            ``{as_of, url, final_url, status_code, content_type, title, content,
            truncated, links}``.
        """
        async with http_client(ctx) as client:
            return await self._fetch(client, request)

    async def _fetch(self, client: httpx.AsyncClient, request: FetchRequest) -> dict[str, Any]:
        config = self.config
        limits = FetchLimits(
            timeout_s=config.timeout_s,
            max_bytes=config.max_bytes,
            max_redirects=config.max_redirects,
            user_agent=config.user_agent,
            setting="web.max_redirects",
        )
        fetched = await guarded_get(client, request.url, limits, self.guard)
        response = fetched.response
        content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
        text = fetched.body.decode(response.encoding or "utf-8", errors="replace")
        if content_type in ("text/html", "application/xhtml+xml", ""):
            page = extract_page(text, str(fetched.url), request.extract_links)
        elif content_type.startswith("text/") or content_type in _TEXT_TYPES:
            page = {"title": None, "content": text, "links": []}
        else:
            raise ToolFailure(
                f"{fetched.url} is {content_type}, not a text or HTML page; web fetch returns text only"
            )
        content = page["content"]
        return {
            "as_of": datetime.now(UTC).isoformat(timespec="seconds"),
            "url": request.url,
            "final_url": str(fetched.url),
            "status_code": response.status_code,
            "content_type": content_type or None,
            "title": page["title"],
            "content": content[: request.max_chars],
            "truncated": fetched.cut or len(content) > request.max_chars,
            "links": page["links"],
        }


class Search(ActionStrategy):
    """Search the web."""

    name = "search"
    description = "Search the web; returns titles, URLs and snippets."
    RequestModel = SearchRequest

    def __init__(self, config: WebConfig) -> None:
        self.config = config

    async def run(self, request: SearchRequest, ctx: ToolContext) -> dict[str, Any]:
        """Return ``{query, backend, results: [{title, url, snippet}]}``."""
        search = self.config.search
        if search.backend is None:
            raise ToolUnavailableError(
                "web search has no backend configured. Set [builtin.web.search] in "
                'tooldeck.toml: backend = "searxng" with url = "<your SearXNG instance>", '
                'or backend = "brave" with api_key = "<Brave Search API key>"',
                retryable=False,
            )
        async with http_client(ctx) as client:
            return await self._search(client, search, request)

    async def _search(
        self, client: httpx.AsyncClient, search: SearchConfig, request: SearchRequest
    ) -> dict[str, Any]:
        timeout = self.config.timeout_s
        try:
            if search.backend == "searxng":
                if not search.url:
                    raise ToolUnavailableError(
                        "web search: searxng needs [builtin.web.search] url", retryable=False
                    )
                response = await client.get(
                    f"{search.url.rstrip('/')}/search",
                    params={"q": request.query, "format": "json"},
                    timeout=timeout,
                )
                items = _json(response, "SearXNG").get("results", [])
                results = [
                    {"title": i.get("title"), "url": i.get("url"), "snippet": i.get("content")}
                    for i in items
                ]
            else:
                if search.api_key is None:
                    raise ToolUnavailableError(
                        "web search: brave needs [builtin.web.search] api_key", retryable=False
                    )
                response = await client.get(
                    f"{(search.url or 'https://api.search.brave.com').rstrip('/')}/res/v1/web/search",
                    params={"q": request.query, "count": request.num_results},
                    headers={
                        "X-Subscription-Token": search.api_key.get_secret_value(),
                        "Accept": "application/json",
                    },
                    timeout=timeout,
                )
                items = _json(response, "Brave Search").get("web", {}).get("results", [])
                results = [
                    {"title": i.get("title"), "url": i.get("url"), "snippet": i.get("description")}
                    for i in items
                ]
        except httpx.HTTPError as exc:
            raise TransientToolError(f"web search ({search.backend}) failed: {exc}") from None
        return {
            "query": request.query,
            "backend": search.backend,
            "results": results[: request.num_results],
        }


def _json(response: httpx.Response, backend: str) -> dict[str, Any]:
    if response.status_code in (401, 403):
        raise ToolUnavailableError(
            f"{backend} refused the request (HTTP {response.status_code}): check the API key "
            "or that the JSON format is enabled",
            retryable=False,
        )
    if response.status_code == 429:
        raise TransientToolError(f"{backend} rate limit hit (HTTP 429); try again later")
    if response.status_code >= 400:
        raise TransientToolError(f"{backend} answered HTTP {response.status_code}")
    try:
        data = response.json()
    except ValueError:
        raise TransientToolError(f"{backend} did not answer JSON") from None
    return data if isinstance(data, dict) else {}


class WebTool(CompositeTool):
    """Fetches pages (with an SSRF guard) and searches the web through a configured backend.

    Semantics:
        ``fetch`` checks the URL and every redirect target with ``AddressGuard``
        (non-public addresses are ``denied`` unless in ``allow_hosts``), connects to
        the vetted address, reads at most ``max_bytes``, follows at most
        ``max_redirects``, and extracts the main content of HTML as Markdown
        (trafilatura); text types are returned as they are, other types refused.
        ``search`` uses SearXNG's JSON API or the Brave Search API; with neither
        configured it answers ``unavailable`` saying how to configure one. Network
        failures and 5xx are retryable errors.
    """

    name = "web"
    source_id = "tool:web:v1"
    description = (
        "Use the web. Actions: fetch (url, extract_links, max_chars) returns a page's "
        "title and main text as Markdown; search (query, num_results) returns titles, "
        "URLs and snippets."
    )
    annotations = ToolAnnotations(title="Web", read_only=True, open_world=True)
    tags = ("builtin", "web")

    def __init__(self, config: WebConfig) -> None:
        super().__init__([Fetch(config), Search(config)])
