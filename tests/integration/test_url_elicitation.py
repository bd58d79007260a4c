"""URL-mode elicitation (MCP 2025-11-25): a client that can open a page, not show a form.

The stdio server hands the client a link to the console's page for that one approval
(its secret in the fragment); the person approves there, in Chromium; the call that
was waiting runs. A client that declares only URL mode is the official SDK's client
with its capability ad narrowed to ``url``.
"""

from __future__ import annotations

import asyncio
import urllib.parse
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from browser import ARTIFACTS, launch_chromium
from mcp import Client, StdioServerParameters
from mcp.client.session import ClientSession
from processes import BIN, Server, confirming_project, free_port

pytestmark = [pytest.mark.integration, pytest.mark.anyio]


@pytest.fixture
def url_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK's client, declaring URL-mode elicitation only."""
    build = ClientSession._build_capabilities

    def narrowed(self: ClientSession, version: str) -> types.ClientCapabilities:
        capabilities = build(self, version)
        if capabilities.elicitation is None:
            return capabilities
        url = types.ElicitationCapability(url=types.UrlElicitationCapability())
        return capabilities.model_copy(update={"elicitation": url})

    monkeypatch.setattr(ClientSession, "_build_capabilities", narrowed)


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, int]:
    port = free_port()
    return confirming_project(tmp_path, f"[server]\nport = {port}\n"), port


def approve_in_chromium(link: str) -> str:
    """What a person does with the link: open it, read the call, press Approve."""
    with launch_chromium() as browser:
        page = browser.new_page(viewport={"width": 390, "height": 844})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(link)
        panel = page.locator("[data-linked]")
        panel.get_by_text('"name": "groceries"').wait_for(timeout=30_000)
        panel.get_by_role("button", name="Approve").click()
        panel.get_by_text("the client's call runs now").wait_for(timeout=30_000)
        page.screenshot(path=str(ARTIFACTS / "url-elicitation-approved.png"))
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"the page scrolls sideways on a phone: {width}px"
        assert errors == [], errors
        return str(panel.inner_text())


@pytest.mark.parametrize("mode", ["auto", "legacy"])  # 2026-07-28, and 2025-11-25
async def test_the_person_approves_on_the_linked_page(
    url_only: None, project: tuple[Path, int], mode: str
) -> None:
    config, port = project
    console = Server(None, port, cwd=config.parent)
    asked: list[types.ElicitRequestURLParams] = []
    seen: list[asyncio.Task[str]] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestURLParams), params
        asked.append(params)
        seen.append(asyncio.create_task(asyncio.to_thread(approve_in_chromium, params.url)))
        return types.ElicitResult(action="accept")  # "open the page": not yet a decision

    params = StdioServerParameters(
        command=str(BIN / "tooldeck"), args=["mcp", "--config", str(config)], cwd="/"
    )
    try:
        async with Client(params, elicitation_callback=elicit, mode=mode) as client:
            result = await client.call_tool("delete_note", {"name": "groceries"})
        assert not result.is_error, result.content
        assert result.structured_content == {"deleted": "groceries"}
        shown = await seen[0]
    finally:
        console.stop()
    [request] = asked
    link = urllib.parse.urlsplit(request.url)
    assert (link.scheme, link.netloc, link.path) == (
        "http",
        f"127.0.0.1:{port}",
        "/tools/approvals",
    )
    assert link.query == "" and "token=" in link.fragment  # the secret never travels in a URL
    assert "delete_note" in request.message and "delete_note" in shown


async def test_declining_to_open_the_page_is_a_denial_and_no_console_means_the_terminal(
    url_only: None, project: tuple[Path, int]
) -> None:
    """On a 2025-11-25 connection, where the server asks in the middle of the call."""
    config, port = project

    async def decline(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="decline")

    params = StdioServerParameters(
        command=str(BIN / "tooldeck"), args=["mcp", "--config", str(config)], cwd="/"
    )
    console = Server(None, port, cwd=config.parent)
    try:
        async with Client(params, elicitation_callback=decline, mode="legacy") as client:
            denied = await client.call_tool("delete_note", {"name": "x"})
    finally:
        console.stop()
    assert denied.is_error and denied.meta["error_type"] == "denied"  # type: ignore[index]
    async with Client(params, elicitation_callback=decline, mode="legacy") as client:  # no console
        waiting = await client.call_tool("delete_note", {"name": "y"})
    assert waiting.is_error and waiting.meta["error_type"] == "confirmation_required"  # type: ignore[index]
    text = waiting.content[0].text  # type: ignore[union-attr]
    assert "approvals approve" in text and "token" not in text  # no secret for the model


async def test_a_program_on_the_consoles_port_gets_no_secret(
    url_only: None, project: tuple[Path, int]
) -> None:
    """Another local user's program listening on the console's port answers every request
    with 200 (issue 53, finding 7): it used to receive the server's API key and the
    approval's token, and the client was sent to its page. It cannot prove it reads the
    project's console.key, so the client gets the terminal command."""
    import http.server
    import threading

    config, port = project
    text = config.read_text().replace("[server]\n", '[server]\napi_key = "sk-server-key-123"\n')
    config.write_text(text)
    heard: list[str] = []

    class Impostor(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            heard.append(f"{self.path} {dict(self.headers)}")
            body = b'{"proof": "0000", "approval_id": "x"}'
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    impostor = http.server.ThreadingHTTPServer(("127.0.0.1", port), Impostor)
    threading.Thread(target=impostor.serve_forever, daemon=True).start()
    opened: list[str] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        opened.append(getattr(params, "url", ""))
        return types.ElicitResult(action="decline")

    params = StdioServerParameters(
        command=str(BIN / "tooldeck"), args=["mcp", "--config", str(config)], cwd="/"
    )
    try:
        async with Client(params, elicitation_callback=elicit, mode="legacy") as client:
            waiting = await client.call_tool("delete_note", {"name": "z"})
    finally:
        impostor.shutdown()
        impostor.server_close()
    assert opened == []  # the client was not sent to the impostor's page
    assert waiting.is_error and waiting.meta["error_type"] == "confirmation_required"  # type: ignore[index]
    assert "approvals approve" in waiting.content[0].text  # type: ignore[union-attr]
    assert heard and all("/api/console/proof" in h for h in heard), heard
    assert not any("sk-server-key-123" in h or "x-approval-token" in h.lower() for h in heard)
