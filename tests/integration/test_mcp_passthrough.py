"""Upstream MCP servers' resources, prompts, progress and tasks through tooldeck (issue
32, parts 4 and 5), with a server nobody here wrote: npm's ``server-everything``
(``make npm-servers`` installs it, pinned), behind ``tooldeck mcp``, driven by the
official SDK's client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from processes import everything_server

pytestmark = [pytest.mark.anyio, pytest.mark.integration]


@pytest.fixture
def config(tmp_path: Path) -> Path:
    everything = everything_server()
    path = tmp_path / "tooldeck.toml"
    path.write_text(
        f'[builtin]\nenabled = false\n[mcp_servers.everything]\ncommand = "{everything}"\n'
        'args = ["stdio"]\n[profiles.none]\nmcp_servers = []\n'
    )
    return path


def tooldeck_mcp(config: Path, tmp_path: Path, *args: str) -> Client:
    return Client(
        StdioServerParameters(
            command=sys.executable,
            args=["-m", "tooldeck", "mcp", "--config", str(config), *args],
            env={"TOOLDECK_DATA_DIR": str(tmp_path / "data"), "PATH": os.environ["PATH"]},
        )
    )


async def test_resources_and_prompts_of_an_upstream_server_pass_through(
    config: Path, tmp_path: Path
) -> None:
    async with tooldeck_mcp(config, tmp_path) as client:
        resources = (await client.list_resources()).resources
        uris = [str(r.uri) for r in resources]
        assert "demo://resource/static/document/architecture.md" in uris
        read = await client.read_resource("demo://resource/static/document/architecture.md")
        assert "Architecture" in read.contents[0].text  # type: ignore[union-attr]
        templates = (await client.list_resource_templates()).resource_templates
        assert any("{resourceId}" in t.uri_template for t in templates)
        dynamic = await client.read_resource("demo://resource/dynamic/text/7")
        assert dynamic.contents  # a template's resource, found by trying the servers
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        assert {"simple-prompt", "args-prompt"} <= set(prompts)
        got = await client.get_prompt("args-prompt", {"city": "Lisbon", "state": "PT"})
        assert "Lisbon" in str(got.messages[0].content)
        with pytest.raises(MCPError, match="no prompt 'nope'; prompts: args-prompt"):
            await client.get_prompt("nope")
        with pytest.raises(MCPError, match="no resource"):
            await client.read_resource("file:///etc/passwd")
    async with tooldeck_mcp(config, tmp_path, "--profile", "none") as client:
        assert (await client.list_resources()).resources == []  # not in this view
        assert (await client.list_prompts()).prompts == []


async def test_an_upstream_tools_progress_reaches_the_client(config: Path, tmp_path: Path) -> None:
    seen: list[Any] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    async with tooldeck_mcp(config, tmp_path) as client:
        result = await client.call_tool(
            "trigger-long-running-operation",
            {"duration": 1, "steps": 4},
            progress_callback=on_progress,
        )
    assert not result.is_error
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]


async def test_a_tool_that_runs_only_as_an_mcp_task_is_called_as_one(
    config: Path, tmp_path: Path
) -> None:
    """``simulate-research-query`` (taskSupport required): tools/call with a task, then
    tasks/get until done (each stage a progress report), then tasks/result."""
    messages: list[str | None] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        messages.append(message)

    async with tooldeck_mcp(config, tmp_path) as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        assert "simulate-research-query" in listed  # no longer "unavailable"
        result = await client.call_tool(
            "simulate-research-query", {"topic": "tide pools"}, progress_callback=on_progress
        )
    assert not result.is_error, result.content
    assert "Research Report: tide pools" in result.content[0].text  # type: ignore[union-attr]
    assert "Analyzing content..." in messages and "Generating report..." in messages


async def test_an_mcp_task_cancelled_by_its_caller_is_cancelled_upstream(config: Path) -> None:
    """The call's timeout cancels it here, and tasks/cancel ends the task on the server."""
    import asyncio

    from tooldeck.config import load_settings
    from tooldeck.runtime import build_runtime

    runtime = build_runtime(load_settings(config, policy={"timeout_s": 1.5, "max_attempts": 1}))
    try:
        provider = runtime.mcp["everything"]
        began = asyncio.get_running_loop().time()
        result = await runtime.view(None).execute("simulate-research-query", {"topic": "x"})
        assert result.error is not None and result.error.type == "timeout"
        assert asyncio.get_running_loop().time() - began < 4  # not the task's 4 s
        import mcp_types as types

        client = await provider._connected()  # the same session: its tasks are its own

        listed = await client.session.send_request(types.ListTasksRequest(), types.ListTasksResult)
        assert [t.status for t in listed.tasks] == ["cancelled"]
    finally:
        await runtime.aclose()


async def test_the_knowledge_packs_documents_are_resources(tmp_path: Path) -> None:
    """A document nobody here wrote (a README that ships in ``temporalio``), added with
    ``tooldeck docs add``, read back over MCP as ``tooldeck://documents/<id>``."""
    import subprocess

    import temporalio

    readme = Path(temporalio.__file__).parent / "contrib/aws/s3driver/README.md"
    config = tmp_path / "tooldeck.toml"
    config.write_text(
        "[knowledge]\nenabled = true\n[builtin]\nenabled = false\n"
        '[profiles.quotes]\ntools = ["get_quotes"]\n'
    )
    env = {**os.environ, "TOOLDECK_DATA_DIR": str(tmp_path / "data")}
    added = subprocess.run(
        [sys.executable, "-m", "tooldeck", "docs", "add", str(readme), "--config", str(config)],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    async with tooldeck_mcp(config, tmp_path) as client:
        documents = [
            r
            for r in (await client.list_resources()).resources
            if str(r.uri).startswith("tooldeck://documents/")
        ]
        assert len(documents) == 1 and documents[0].mime_type == "text/markdown"
        read = await client.read_resource(str(documents[0].uri))
        text = read.contents[0].text  # type: ignore[union-attr]
        assert text.startswith("# ") and "S3" in text
        with pytest.raises(MCPError, match="no resource"):
            await client.read_resource("tooldeck://documents/nope")
    async with tooldeck_mcp(config, tmp_path, "--profile", "quotes") as client:
        assert (await client.list_resources()).resources == []  # no document tools here


async def test_an_upstream_tool_without_arguments_takes_none(config: Path, tmp_path: Path) -> None:
    """Issue 55, item 14: server-everything's tools without parameters (``properties: {}``
    at the root, as the SDKs write them) take no argument, say so to MCP clients and go
    to OpenAI strict (they were non-strict and took any key)."""
    async with tooldeck_mcp(config, tmp_path) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        bare = sorted(n for n, t in tools.items() if t.input_schema.get("properties") == {})
        assert bare, sorted(tools)  # the upstream server has such tools
        assert all(tools[n].input_schema.get("additionalProperties") is False for n in bare)
        refused = await client.call_tool(bare[0], {"surprise": 1})
        assert refused.is_error and "unexpected argument" in str(refused.content[0])
    listed = subprocess.run(
        [sys.executable, "-m", "tooldeck", "tools", "--format", "openai", "--config", str(config)],
        capture_output=True, text=True, timeout=120,
        env={"TOOLDECK_DATA_DIR": str(tmp_path / "data"), "PATH": os.environ["PATH"]},
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    exported = {t["function"]["name"]: t["function"] for t in json.loads(listed.stdout)}
    assert all(exported[n].get("strict") is True for n in bare), bare
