"""A result larger than the model's budget: head and tail shown, the rest read page by page
(issue 32, part 6). A 5 MB result, a run against a scripted OpenAI-compatible model."""

from __future__ import annotations

import re
from typing import Any

import pytest
from scripted_openai import ScriptedModel, text, tool_calls

from tooldeck.agent.calls import RunTools
from tooldeck.agent.contracts import ChatRequest
from tooldeck.agent.pages import PAGE_CHARS, ReadResult
from tooldeck.config import load_settings
from tooldeck.core import ToolContext, tool
from tooldeck.core.result import DEFAULT_MAX_LLM_CHARS
from tooldeck.providers import ToolRegistry
from tooldeck.runtime import build_runtime

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

REPORT = "".join(f"line {i:07d}: {'x' * 35}\n" for i in range(100_000))  # 5,000,000 chars
assert len(REPORT) == 5_000_000

TOOLS = '''
from tooldeck import tool


@tool
def big_report(lines: int = 100_000) -> str:
    """The whole access log, as text.

    Args:
        lines: How many of its lines.
    """
    return "".join(f"line {i:07d}: {'x' * 35}\\n" for i in range(lines))
'''

MARKER = re.compile(r"…\[characters (\d+) to (\d+) of (\d+) left out; request_id=([^\]]+)\]…")


def tool_content(request: dict[str, Any], call_id: str) -> str:
    return next(m["content"] for m in request["messages"] if m.get("tool_call_id") == call_id)


async def test_the_model_sees_head_and_tail_and_reads_the_middle(tmp_path: Any) -> None:
    seen: dict[str, Any] = {}

    def after_report(body: dict[str, Any]) -> dict[str, Any]:
        shown = tool_content(body, "c1")
        seen["shown"] = shown
        head, end, total, request_id = MARKER.search(shown).groups()  # type: ignore[union-attr]
        seen["marker"] = (int(head), int(end), int(total), request_id)
        return tool_calls(("r1", "read_result", {"request_id": request_id, "offset": int(head)}))

    def after_page(body: dict[str, Any]) -> dict[str, Any]:
        seen["page"] = tool_content(body, "r1")
        return text("The log is long; its lines are numbered.")

    (tmp_path / "report.py").write_text(TOOLS)
    model = ScriptedModel([tool_calls(("c1", "big_report", {})), after_report, after_page])
    with model.serve() as base_url:
        settings = load_settings(
            builtin={"enabled": False},
            tools=[str(tmp_path / "report.py")],
            agent={"model": "scripted", "base_url": base_url},
        )
        runtime = build_runtime(settings)
        try:
            run = await runtime.runs.start(ChatRequest(question="How long is the log?"), user="ana")
            run = await runtime.runs.wait(run.run_id)
            assert runtime.audit is not None
            runtime.audit.flush()
            audited = [(r.tool_name, r.request_id) for r in runtime.audit.query(run_id=run.run_id)]
        finally:
            await runtime.aclose()
    assert run.state == "completed", run.error
    assert sorted(audited) == [("big_report", "c1"), ("read_result", "r1")]
    shown = seen["shown"]
    assert len(shown) < DEFAULT_MAX_LLM_CHARS + 200  # the model's view stays in budget
    head, end, total, request_id = seen["marker"]
    assert (total, request_id) == (5_000_000, "c1")
    assert shown.startswith(REPORT[:head]) and shown.endswith(REPORT[end:])
    assert "line 0099999" in shown  # the tail: the end of a log is often what matters
    assert seen["page"].startswith(REPORT[head : head + PAGE_CHARS])
    assert f"next offset: {head + PAGE_CHARS}" in seen["page"]
    names = [[t["function"]["name"] for t in r.get("tools", [])] for r in model.requests]
    assert "read_result" not in names[0] and "read_result" in names[1]


async def test_every_byte_of_a_5_mb_result_is_reachable_and_only_in_its_own_run() -> None:
    @tool
    def big_report() -> str:
        """The whole access log."""
        return REPORT

    tools = RunTools(ToolRegistry([big_report]), ToolContext(run_id="run-1"), _quiet)
    await tools.execute("big_report", {}, call_id="c1")
    pager = ReadResult(tools.result)
    read, offset = [], 0
    while offset is not None:
        page = await pager.execute({"request_id": "c1", "offset": offset})
        assert page.success and len(page.to_llm()) < DEFAULT_MAX_LLM_CHARS
        read.append(REPORT[page.data["offset"] : page.data["end"]])  # type: ignore[index]
        assert page.output.startswith(read[-1])  # type: ignore[union-attr]
        offset = page.data["next_offset"]  # type: ignore[index]
    assert "".join(read) == REPORT and len(read) == -(-len(REPORT) // PAGE_CHARS)
    # another run's pager cannot name this run's result
    other = ReadResult(RunTools(ToolRegistry([big_report]), ToolContext(), _quiet).result)
    refused = await other.execute({"request_id": "c1"})
    assert refused.error is not None and refused.error.type == "validation"
    assert "no result of this run" in refused.error.message
    past = await pager.execute({"request_id": "c1", "offset": 5_000_001})
    assert past.error is not None and "offset" in past.error.message


async def _quiet(type: str, data: dict[str, Any]) -> None:
    return None


async def test_an_mcp_client_gets_head_and_tail_and_reads_the_whole_result(tmp_path: Any) -> None:
    """``tooldeck mcp`` over stdio, then ``tooldeck serve``'s /mcp with two sessions,
    driven by the official SDK's client: the text a client's model sees stays in budget,
    the resource link gives every byte, and only to the session that made the call."""
    import os
    import sys

    from mcp import Client, StdioServerParameters
    from mcp.shared.exceptions import MCPError
    from processes import Server, free_port

    (tmp_path / "report.py").write_text(TOOLS)
    env = {"TOOLDECK_DATA_DIR": str(tmp_path / "data"), "PATH": os.environ["PATH"]}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "tooldeck", "mcp", "--tools", str(tmp_path / "report.py")],
        env=env,
    )
    async with Client(params) as client:
        called = await client.call_tool("big_report", {})
        shown = called.content[0].text  # type: ignore[union-attr]
        assert len(shown) < DEFAULT_MAX_LLM_CHARS + 400 and MARKER.search(shown)
        [link] = [c for c in called.content if c.type == "resource_link"]
        assert shown.startswith(REPORT[:1000]) and str(link.uri) in shown
        read = await client.read_resource(str(link.uri))
        assert read.contents[0].text == REPORT  # type: ignore[union-attr]
        assert str(link.uri) not in [str(r.uri) for r in (await client.list_resources()).resources]

    server = Server(
        tmp_path / "data", free_port(), extra_args=["--tools", str(tmp_path / "report.py")]
    )
    try:
        async with (
            Client(f"{server.url}/mcp", mode="legacy") as mine,
            Client(f"{server.url}/mcp", mode="legacy") as other,
        ):
            # the SDK's client takes server-sent events of 1 MiB at most: 10,000 lines here
            called = await mine.call_tool("big_report", {"lines": 10_000})
            [link] = [c for c in called.content if c.type == "resource_link"]
            with pytest.raises(MCPError, match="no resource"):
                await other.read_resource(str(link.uri))  # another session's result
            read = await mine.read_resource(f"{link.uri}?offset=100000&limit=1000")
            assert read.contents[0].text == REPORT[100_000:101_000]  # type: ignore[union-attr]
            with pytest.raises(MCPError, match="no resource"):
                await mine.read_resource(f"{link.uri}?offset=oops")
    finally:
        server.stop()
