"""``web``: a real HTTP server on 127.0.0.1, the SSRF guard, search backends."""

from __future__ import annotations

import pytest

from tooldeck.packs.builtin import AddressGuard, WebTool
from tooldeck.packs.builtin.config import SearchConfig, WebConfig

from .conftest import LocalServer

pytestmark = pytest.mark.anyio

pytest.importorskip("trafilatura")

PAGE = b"""<!doctype html><html><head><title>Tool layers compared</title></head><body>
<nav><a href="/home">Home</a></nav>
<article><h1>Tool layers compared</h1>
<p>A tool layer validates every call, runs it safely and records where each answer came from.
Provenance matters because an agent must cite the data behind its answer, and grounding checks
compare the citations with the tool results of the run.</p>
<p>Read the <a href="https://example.org/spec">specification</a> or the <a href="/guide">guide</a>.</p>
</article></body></html>"""


def web(**config: object) -> WebTool:
    return WebTool(WebConfig(allow_hosts=["127.0.0.1"], **config))  # type: ignore[arg-type]


async def test_fetch_extracts_title_main_text_and_links(server: LocalServer) -> None:
    server.raw("GET", "/article", PAGE, **{"content-type": "text/html; charset=utf-8"})
    result = await web().execute(
        {"action": "fetch", "url": f"{server.url}/article", "extract_links": True}
    )
    assert result.success, result.error
    data = result.data
    assert data["title"] == "Tool layers compared"
    assert "Provenance matters" in data["content"] and "Home" not in data["content"]
    assert {"url": "https://example.org/spec", "text": "specification"} in data["links"]
    assert {"url": f"{server.url}/guide", "text": "guide"} in data["links"]
    assert server.seen[-1]["headers"]["Host"] == f"127.0.0.1:{server.port}"


async def test_fetch_follows_redirects_caps_size_and_chars(server: LocalServer) -> None:
    server.raw("GET", "/old", b"", status=302, location="/text")
    server.raw("GET", "/text", b"hello " * 1000, **{"content-type": "text/plain"})
    result = await web(max_bytes=600).execute(
        {"action": "fetch", "url": f"{server.url}/old", "max_chars": 100}
    )
    assert result.data["final_url"] == f"{server.url}/text"
    assert result.data["content"] == ("hello " * 17)[:100] and result.data["truncated"] is True
    server.raw("GET", "/loop", b"", status=302, location="/loop")
    looping = await web(max_redirects=3).execute({"action": "fetch", "url": f"{server.url}/loop"})
    assert looping.error is not None and "more than 3 redirects" in looping.error.message


async def test_redirect_to_a_private_address_is_refused(server: LocalServer) -> None:
    server.raw(
        "GET", "/bounce", b"", status=302, location="http://169.254.169.254/latest/meta-data/"
    )
    result = await web().execute({"action": "fetch", "url": f"{server.url}/bounce"})
    assert result.error is not None and result.error.type == "denied"
    assert "169.254.169.254" in result.error.message


async def test_http_errors_and_binary_types(server: LocalServer) -> None:
    server.raw("GET", "/boom", b"no", status=503)
    boom = await web().execute({"action": "fetch", "url": f"{server.url}/boom"})
    assert boom.error is not None and boom.error.retryable and "HTTP 503" in boom.error.message
    server.raw("GET", "/img", b"\x89PNG", **{"content-type": "image/png"})
    image = await web().execute({"action": "fetch", "url": f"{server.url}/img"})
    assert image.error is not None and "image/png" in image.error.message


SSRF = [
    "http://127.0.0.1/",
    "http://localhost:8765/api/tools",
    "http://127.1/",
    "http://2130706433/",
    "http://0x7f000001/",
    "http://0.0.0.0/",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://10.0.0.5/",
    "http://172.16.3.4/",
    "http://192.168.1.1/admin",
    "http://169.254.169.254/latest/meta-data/",
    "http://100.64.0.1/",
    "http://[fe80::1]/",
    "http://[fc00::1]/",
    "http://224.0.0.1/",
    "http://[64:ff9b::7f00:1]/",  # NAT64 of 127.0.0.1
    "http://[64:ff9b::a9fe:a9fe]/",  # NAT64 of the metadata address
    "http://[64:ff9b:1::a00:1]/",  # local-use NAT64 of 10.0.0.1
    "http://[2002:7f00:1::]/",  # 6to4 of 127.0.0.1
    "http://[2002:c0a8:101::1]/",  # 6to4 of 192.168.1.1
    "http://[::127.0.0.1]/",  # IPv4-compatible
    "http://[::ffff:127.0.0.1]/",  # IPv4-mapped
    "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/",  # Teredo, client 127.0.0.1
]


@pytest.mark.parametrize("url", SSRF)
async def test_non_public_addresses_are_denied_by_default(url: str) -> None:
    result = await WebTool(WebConfig()).execute({"action": "fetch", "url": url})
    assert result.error is not None and result.error.type == "denied", result
    assert "web.allow_hosts" in result.error.message


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://example.org/x", "gopher://127.0.0.1/", "http:///nohost"]
)
async def test_other_schemes_are_validation_errors(url: str) -> None:
    result = await WebTool(WebConfig()).execute({"action": "fetch", "url": url})
    assert result.error is not None and result.error.type == "validation"


def test_allow_list_takes_hosts_addresses_and_ranges() -> None:
    import ipaddress

    guard = AddressGuard(["10.0.0.0/8", "intranet.local", "::1"])
    assert guard.allowed("x", ipaddress.ip_address("10.1.2.3"))
    assert guard.allowed("intranet.local", ipaddress.ip_address("192.168.0.9"))
    assert guard.allowed("x", ipaddress.ip_address("::1"))
    assert not guard.allowed("x", ipaddress.ip_address("192.168.0.9"))
    assert guard.allowed("x", ipaddress.ip_address("93.184.216.34"))


async def test_search_unconfigured_says_how_to_configure() -> None:
    result = await WebTool(WebConfig()).execute({"action": "search", "query": "mcp"})
    assert result.error is not None and result.error.type == "unavailable"
    assert 'backend = "searxng"' in result.error.message and "brave" in result.error.message


async def test_searxng_and_brave_backends(server: LocalServer) -> None:
    server.json("GET", "/search", {"results": [
        {"title": "MCP", "url": "https://modelcontextprotocol.io", "content": "The protocol"},
        {"title": "Two", "url": "https://two.example", "content": "2"},
    ]})  # fmt: skip
    searx = WebTool(WebConfig(search=SearchConfig(backend="searxng", url=server.url)))
    found = await searx.execute({"action": "search", "query": "model context", "num_results": 1})
    assert found.data == {"query": "model context", "backend": "searxng", "results": [
        {"title": "MCP", "url": "https://modelcontextprotocol.io", "snippet": "The protocol"}]}  # fmt: skip
    assert "q=model+context" in server.seen[-1]["path"] and "format=json" in server.seen[-1]["path"]
    server.json("GET", "/res/v1/web/search", {"web": {"results": [
        {"title": "B", "url": "https://b.example", "description": "brave result"}]}})  # fmt: skip
    brave = WebTool(WebConfig(search=SearchConfig(backend="brave", url=server.url, api_key="k3y")))  # type: ignore[arg-type]
    answer = await brave.execute({"action": "search", "query": "x"})
    assert answer.data["results"] == [
        {"title": "B", "url": "https://b.example", "snippet": "brave result"}
    ]
    assert server.seen[-1]["headers"]["X-Subscription-Token"] == "k3y"
    server.json("GET", "/res/v1/web/search", {"message": "bad key"}, status=401)
    refused = await brave.execute({"action": "search", "query": "x"})
    assert refused.error is not None and "check the API key" in refused.error.message
