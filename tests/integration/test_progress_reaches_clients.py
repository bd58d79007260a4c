"""A tool's ``ctx.report_progress`` reaches whoever follows the call (issue 32, part 4).

Before, a tool's reports had no follower on any entry point: 0 of 4 reached an MCP
client. Here: the official SDK's client over stdio and over ``tooldeck serve``'s
``/mcp`` (``notifications/progress``), through tooldeck proxying another MCP server,
a run's event stream (``tool_call.progress``), and ``tooldeck call`` on a terminal.
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from processes import Server, free_port
from scripted_openai import ScriptedModel, text, tool_calls

from deadlines import scaled
from tooldeck.agent.contracts import ChatRequest
from tooldeck.config import load_settings
from tooldeck.runtime import build_runtime

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

TOOLS = '''
import asyncio
import time

from tooldeck import ToolContext, tool


@tool
async def count_pages(pages: int, ctx: ToolContext, pause: float = 0.05) -> dict:
    """Count a document's pages, one at a time.

    Args:
        pages: How many pages.
        pause: Seconds per page.
    """
    for page in range(1, pages + 1):
        await asyncio.sleep(pause)
        ctx.report_progress(page, pages, f"page {page}")
    return {"pages": pages}


@tool
async def scan_pages(pages: int, ctx: ToolContext, pause: float = 0.05) -> dict:
    """Scan a document's pages, reporting as FastMCP's tools do (awaited).

    Args:
        pages: How many pages.
        pause: Seconds per page.
    """
    for page in range(1, pages + 1):
        await asyncio.sleep(pause)
        await ctx.report_progress(page, pages, f"page {page}")
    return {"pages": pages}


@tool
def read_pages(pages: int, ctx: ToolContext, pause: float = 0.05) -> dict:
    """Read a document's pages in a worker thread, one at a time.

    Args:
        pages: How many pages.
        pause: Seconds per page.
    """
    for page in range(1, pages + 1):
        time.sleep(pause)
        ctx.report_progress(page, pages, f"page {page}")
    return {"pages": pages}
'''

EXPECTED = [(float(p), 4.0, f"page {p}") for p in range(1, 5)]


@pytest.fixture
def tools(tmp_path: Path) -> Path:
    path = tmp_path / "pages.py"
    path.write_text(TOOLS)
    return path


def stdio(tmp_path: Path, *args: str) -> Client:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "tooldeck", "mcp", *args],
        env={"TOOLDECK_DATA_DIR": str(tmp_path / "data"), "PATH": os.environ["PATH"]},
        cwd=str(tmp_path),
    )
    return Client(params)


async def reports_of(client: Client, tool: str) -> tuple[list[tuple[Any, ...]], Any]:
    seen: list[tuple[Any, ...]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    result = await client.call_tool(tool, {"pages": 4}, progress_callback=on_progress)
    return seen, result


async def test_an_mcp_client_over_stdio_gets_every_report_before_the_result(
    tools: Path, tmp_path: Path
) -> None:
    async with stdio(tmp_path, "--tools", str(tools)) as client:
        # async tool; awaited reports (issue 55, item 12: "NoneType can't be used in
        # 'await' expression"); def tool in a thread
        for name in ("count_pages", "scan_pages", "read_pages"):
            seen, result = await reports_of(client, name)
            assert not result.is_error and result.structured_content == {"pages": 4}
            assert seen == EXPECTED, name
        # a client that asks for no progress gets none, and the call is the same
        plain = await client.call_tool("count_pages", {"pages": 2})
        assert plain.structured_content == {"pages": 2}


async def test_progress_over_streamable_http_and_through_a_proxied_server(
    tools: Path, tmp_path: Path
) -> None:
    port = free_port()
    server = Server(tmp_path / "data", port, extra_args=["--tools", str(tools)])
    try:
        async with Client(f"{server.url}/mcp") as client:
            seen, result = await reports_of(client, "read_pages")
            assert not result.is_error and seen == EXPECTED
    finally:
        server.stop()
    # tooldeck in front of another MCP server (here tooldeck itself, over stdio): the
    # upstream's notifications/progress come through to the client
    config = tmp_path / "proxy.toml"
    upstream = [sys.executable, "-m", "tooldeck", "mcp", "--tools", str(tools)]
    config.write_text(
        f"[builtin]\nenabled = false\n[mcp_servers.pages]\ncommand = {upstream[0]!r}\n"
        f"args = {upstream[1:]!r}\n"
    )
    async with stdio(tmp_path, "--config", str(config)) as client:
        seen, result = await reports_of(client, "count_pages")
        assert not result.is_error and result.structured_content == {"pages": 4}
        assert seen == EXPECTED


async def test_a_run_streams_its_calls_progress(tools: Path) -> None:
    model = ScriptedModel(
        [tool_calls(("call_1", "read_pages", {"pages": 4})), text("The document has 4 pages.")]
    )
    with model.serve() as base_url:
        settings = load_settings(
            builtin={"enabled": False},
            tools=[str(tools)],
            agent={"model": "scripted", "base_url": base_url},
        )
        runtime = build_runtime(settings)
        try:
            run = await runtime.runs.start(ChatRequest(question="How many pages?"), user="ana")
            run = await runtime.runs.wait(run.run_id)
            events = [e async for e in runtime.runs.events(run.run_id)]
        finally:
            await runtime.aclose()
    assert run.state == "completed", run.error
    calls = [(e.type, e.data) for e in events if e.type.startswith("tool_call.")]
    assert calls[0][0] == "tool_call.started" and calls[-1][0] == "tool_call.completed"
    progress = [d for kind, d in calls if kind == "tool_call.progress"]
    assert [(d["call_id"], d["progress"], d["total"], d["message"]) for d in progress] == [
        ("call_1", p, 4, f"page {p}") for p in range(1, 5)
    ]


def test_tooldeck_call_draws_a_bar_on_a_terminal_and_prints_only_the_result(
    tools: Path, tmp_path: Path
) -> None:
    command = [sys.executable, "-m", "tooldeck", "call", "count_pages", "pages=4", "pause=0.4"]
    command += ["--tools", str(tools)]
    env = {**os.environ, "TOOLDECK_DATA_DIR": str(tmp_path / "data"), "COLUMNS": "100"}
    main, other = pty.openpty()  # stderr is a terminal, as in a shell
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=other, stdin=other, env=env, cwd=tmp_path
    )
    os.close(other)
    screen = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # the process closed its side
            break
        if not chunk:
            break
        screen += chunk
    stdout, _ = process.communicate(timeout=scaled(60))
    os.close(main)
    assert process.returncode == 0, screen.decode(errors="replace")
    drawn = screen.decode(errors="replace")
    assert "count_pages: page 2" in drawn and "2/4" in drawn, drawn
    assert b'"pages": 4' in stdout and b"page 2" not in stdout  # the bar stays on stderr
    # piped (no terminal), nothing is drawn
    piped = subprocess.run(command, capture_output=True, env=env, cwd=tmp_path, timeout=120)
    assert piped.returncode == 0 and b"page" not in piped.stderr
