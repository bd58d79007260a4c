"""``--reload``: an edit to your tools file is served without a restart.

Over MCP stdio (``tooldeck mcp --reload``) with the official SDK client, which gets
``notifications/tools/list_changed``; over REST from ``tooldeck serve --reload``. A file
saved half-written (a syntax error) keeps the previous tools serving.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from processes import Server, free_port

from deadlines import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

ONE = '''from tooldeck import tool


@tool
def alpha(text: str) -> dict:
    """First tool."""
    return {"alpha": text}
'''

TWO = (
    ONE
    + '''

@tool
def beta(n: int) -> dict:
    """Second tool, added while serving."""
    return {"beta": n * 2}
'''
)


def save(path: Path, text: str) -> None:
    """Write ``text`` with a modification time the watcher cannot mistake for the last."""
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text)
    os.utime(path, ns=(before + 2_000_000_000, before + 2_000_000_000))


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_mcp_clients_are_told_and_see_the_new_tool(tmp_path: Path, mode: str) -> None:
    """``legacy``: a session's notification; ``auto`` (2026-07-28): a listen stream's event."""
    tools = tmp_path / "tools.py"
    save(tools, ONE)
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLDECK_")}
    env["TOOLDECK_DATA_DIR"] = str(tmp_path / "data")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "tooldeck", "mcp", "--reload", "./tools.py"],
        cwd=str(tmp_path),
        env=env,
    )
    async with Client(params, message_handler=on_message, mode=mode) as client:
        assert "alpha" in [t.name for t in (await client.list_tools()).tools]
        with anyio.fail_after(15):
            if mode == "legacy":
                save(tools, TWO)
                await changed.wait()
            else:
                async with client.listen(tools_list_changed=True) as events:
                    save(tools, TWO)
                    async for event in events:
                        assert type(event).__name__ == "ToolsListChanged"
                        break
        names = [t.name for t in (await client.list_tools()).tools]
        assert "beta" in names and "alpha" in names
        result = await client.call_tool("beta", {"n": 21})
        assert not result.is_error and result.structured_content == {"beta": 42}

        save(tools, TWO + "\ndef broken(:\n")  # saved mid-edit
        await anyio.sleep(2.5)
        result = await client.call_tool("beta", {"n": 1})
        assert not result.is_error, "a file that does not import must not drop the tools"


def test_serve_reload_swaps_the_tools_and_says_so(tmp_path: Path) -> None:
    tools = tmp_path / "tools.py"
    save(tools, ONE)
    server = Server(tmp_path / "data", free_port(), ["--reload", "./tools.py"], cwd=tmp_path)
    try:
        assert httpx.post(f"{server.url}/api/tools/execute/beta", json={"n": 1}).status_code == 404
        save(tools, TWO.replace("First tool.", "First tool, described better."))
        wait_until(
            lambda: (
                httpx.post(f"{server.url}/api/tools/execute/beta", json={"n": 2}).status_code == 200
            ),
            "the reloaded tool beta to answer",
        )
        answer = httpx.post(f"{server.url}/api/tools/execute/beta", json={"n": 2})
        assert answer.json()["data"] == {"beta": 4}
        listed = httpx.get(f"{server.url}/api/tools").json()
        alpha = next(t for t in listed if t["name"] == "alpha")
        assert alpha["description"].startswith("First tool, described better.")

        save(tools, ONE.replace("def alpha", "def alpha(:"))
        time.sleep(2.5)
        assert httpx.post(f"{server.url}/api/tools/execute/beta", json={"n": 3}).status_code == 200
    finally:
        server.stop()
    log = Path(server.log.name).read_text()
    assert "tools reloaded: +beta ~alpha" in log
    assert "tools not reloaded (the previous ones still serve)" in log
    assert "tools.py:5: SyntaxError" in log
