"""Tool search for large registries (issue 32, part 1), through the real entry points.

The model agent against a scripted OpenAI-compatible server: past ``[agent]
defer_tools_over`` tools, a turn is sent ``search_tools`` and the always-visible tools
only; what a search finds is sent from the next turn on and can be called.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from processes import Server, free_port
from scripted_openai import ScriptedModel, text, tool_calls

from portfolio import user_portfolio
from tooldeck.agent.contracts import ChatRequest
from tooldeck.config import load_settings
from tooldeck.runtime import build_runtime

pytestmark = [pytest.mark.anyio, pytest.mark.integration]


def sent_names(request: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools", [])]


async def test_a_run_over_many_tools_searches_then_calls_what_it_found() -> None:
    model = ScriptedModel(
        [
            tool_calls(("s1", "search_tools", {"query": "stock quote price of a symbol"})),
            tool_calls(("q1", "get_quotes", {"symbols": ["AAPL"]})),
            text("AAPL trades at $228.42 [tool:quotes:v1]."),
        ]
    )
    with model.serve() as base_url:
        settings = load_settings(
            agent={
                "model": "scripted",
                "base_url": base_url,
                "defer_tools_over": 5,
                "always_visible": ["get_positions"],
            },
            brokerage={"data_path": user_portfolio()},  # the user's file, not example data
        )
        runtime = build_runtime(settings)
        try:
            every = [d.name for d in await runtime.view(None).definitions()]
            run = await runtime.runs.start(ChatRequest(question="AAPL price?"), user="ana")
            run = await runtime.runs.wait(run.run_id)
            assert runtime.audit is not None
            runtime.audit.flush()
            audited = {(r.tool_name, r.request_id, r.run_id) for r in runtime.audit.query()}
        finally:
            await runtime.aclose()
    assert {("search_tools", "s1", run.run_id), ("get_quotes", "q1", run.run_id)} <= audited
    assert len(every) > 5 and "get_quotes" in every
    assert run.state == "completed", run.error
    first, second, third = model.requests
    assert sent_names(first) == ["search_tools", "get_positions"]  # not the other tools
    assert "get_quotes" in sent_names(second) and len(sent_names(second)) <= 2 + 5
    assert sent_names(third) == sent_names(second)  # found tools stay for the run
    found = json.loads(
        next(m for m in second["messages"] if m.get("tool_call_id") == "s1")["content"].split(
            "\n["
        )[0]
    )
    assert found["tools"][0]["name"] == "get_quotes"
    assert [(c.name, c.status) for c in run.answer.tool_calls] == [
        ("search_tools", "success"),
        ("get_quotes", "success"),
    ]


async def test_under_the_threshold_every_tool_is_sent() -> None:
    model = ScriptedModel([text("Nothing to look up.")])
    with model.serve() as base_url:
        runtime = build_runtime(load_settings(agent={"model": "scripted", "base_url": base_url}))
        try:
            count = len(await runtime.view(None).definitions())
            run = await runtime.runs.start(ChatRequest(question="Hello?"), user="ana")
            await runtime.runs.wait(run.run_id)
        finally:
            await runtime.aclose()
    assert count <= 40  # the default threshold; the default tools are all sent
    assert len(sent_names(model.requests[0])) == count
    assert "search_tools" not in sent_names(model.requests[0])


CONFIG = """
[agent]
defer_tools_over = 5
always_visible = ["get_positions"]
"""


async def test_an_mcp_session_lists_search_then_what_it_found(tmp_path: Path) -> None:
    """``tooldeck mcp --search-tools`` over stdio, the official SDK's client (legacy
    sessions get ``tools/list_changed``)."""
    config = tmp_path / "tooldeck.toml"
    config.write_text(CONFIG)
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "tooldeck", "mcp", "--search-tools", "--config", str(config)],
        env={"TOOLDECK_DATA_DIR": str(tmp_path / "data"), "PATH": os.environ["PATH"]},
    )
    async with Client(params, message_handler=on_message, mode="legacy") as client:
        listed = [t.name for t in (await client.list_tools()).tools]
        assert listed == ["search_tools", "get_positions"]
        found = await client.call_tool("search_tools", {"query": "stock quotes"})
        assert not found.is_error
        first = found.structured_content["tools"][0]  # type: ignore[index]
        assert first["name"] == "get_quotes" and "symbols" in first["input_schema"]["properties"]
        with anyio.fail_after(10):
            await changed.wait()
        listed = [t.name for t in (await client.list_tools()).tools]
        assert listed[:2] == ["search_tools", "get_positions"] and "get_quotes" in listed
        # any tool of the view can be called, listed or not
        hidden = await client.call_tool("get_activity", {})
        assert not hidden.is_error
    audit = subprocess.run(
        [sys.executable, "-m", "tooldeck", "audit", "--json"],
        env={"TOOLDECK_DATA_DIR": str(tmp_path / "data"), "PATH": os.environ["PATH"]},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    records = [json.loads(line) for line in audit.stdout.splitlines()]
    assert [r["tool_name"] for r in records][::-1] == ["search_tools", "get_activity"]


async def test_over_http_one_clients_finds_are_not_listed_to_another(tmp_path: Path) -> None:
    config = tmp_path / "tooldeck.toml"
    config.write_text(CONFIG + "[server]\nmcp_search_tools = true\n")
    server = Server(tmp_path / "data", free_port(), extra_args=["--config", str(config)])
    try:
        async with Client(f"{server.url}/mcp", mode="legacy") as ana:
            assert await ana.call_tool("search_tools", {"query": "transfers"})
            ana_list = [t.name for t in (await ana.list_tools()).tools]
            async with Client(f"{server.url}/mcp", mode="legacy") as bob:
                bob_list = [t.name for t in (await bob.list_tools()).tools]
        assert "get_transfers" in ana_list
        assert bob_list == ["search_tools", "get_positions"]
    finally:
        server.stop()
