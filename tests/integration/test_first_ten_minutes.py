"""A new user's first ten minutes: ``tooldeck init``, a tool of their own, every entry point.

In an empty folder: ``tooldeck init``, a second tool added to ``tools.py``, then that
tool called with ``tooldeck call``, over REST from ``tooldeck serve``, from its form
in the tools UI (Chromium), and over MCP stdio with the official SDK client; each call
is in this project's history (``.tooldeck/`` beside ``tooldeck.toml``, and on the UI's
History page), and in no other project's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from browser import launch_chromium
from mcp import Client, StdioServerParameters
from processes import Server, free_port

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

TOOLDECK = [sys.executable, "-m", "tooldeck"]

MORE = '''

@tool(source_id="tool:reverse:v1")
def reverse(text: str) -> dict:
    """Reverse a text.

    Args:
        text: The text to reverse.
    """
    return {"reversed": text[::-1]}
'''


def env() -> dict[str, str]:
    """The user's environment: no TOOLDECK_* settings of the test run."""
    return {k: v for k, v in os.environ.items() if not k.startswith("TOOLDECK_")}


def run_in_the_ui(url: str) -> None:
    """Run ``reverse`` from its form, then find the call on the History page."""
    from playwright.sync_api import expect

    with launch_chromium() as chromium:
        page = chromium.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(f"{url}/tools")
        page.click('a[data-tool="reverse"]')
        page.fill("#f-text", "ui")
        page.click("#run")
        expect(page.locator("#result-status")).to_have_text("success")
        expect(page.locator("#provenance")).to_contain_text("tool:reverse:v1")
        page.click('a[data-nav="history"]')
        rows = page.locator("#history tbody tr", has_text="reverse")
        expect(rows).to_have_count(3)  # the CLI call, the REST call and this one
        assert errors == []


def tooldeck(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TOOLDECK, *args], cwd=folder, env=env(), capture_output=True, text=True, timeout=120
    )


async def test_init_then_my_tool_everywhere_and_in_my_history(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    init = tooldeck(project, "init")
    assert init.returncode == 0, init.stderr
    (project / "tools.py").write_text((project / "tools.py").read_text() + MORE)

    cli = tooldeck(project, "call", "reverse", "text=abc")
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout)["data"] == {"reversed": "cba"}
    assert json.loads(tooldeck(project, "call", "word_count", "text=a b").stdout)["data"] == {
        "words": 2,
        "characters": 3,
    }

    server = Server(None, free_port(), cwd=project)  # no data dir set: the project's own
    try:
        async with httpx.AsyncClient(base_url=server.url) as http:
            rest = await http.post("/api/tools/execute/reverse", json={"text": "rest"})
            assert rest.status_code == 200 and rest.json()["source_id"] == "tool:reverse:v1"
            listed = (await http.get("/api/tools", params={"format": "openai"})).json()
            assert "reverse" in [t["function"]["name"] for t in listed]
        with ThreadPoolExecutor(1) as pool:  # Playwright's sync API wants a thread without a loop
            pool.submit(run_in_the_ui, server.url).result(timeout=120)
    finally:
        server.stop()

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "tooldeck", "mcp"], cwd=str(project), env=env()
    )
    async with Client(params) as client:
        assert "reverse" in [t.name for t in (await client.list_tools()).tools]
        result = await client.call_tool("reverse", {"text": "mcp"})
        assert not result.is_error and result.structured_content == {"reversed": "pcm"}

    history = tooldeck(project, "audit", "--json", "--tool", "reverse")
    calls = [json.loads(line) for line in history.stdout.splitlines()]
    assert sorted(c["arguments"]["text"] for c in calls) == ["abc", "mcp", "rest", "ui"]
    assert (project / ".tooldeck" / "audit.db").is_file()
    other = tmp_path / "other"
    other.mkdir()
    tooldeck(other, "init")
    assert tooldeck(other, "audit", "--json", "--tool", "reverse").stdout == ""
