"""Upstream MCP servers' resources, prompts and progress through tooldeck (issue 32,
parts 4 and 5), with a server nobody here wrote: npm's ``server-everything``
(``make npm-servers`` installs it, pinned), behind ``tooldeck mcp``, driven by the
official SDK's client."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

EVERYTHING = Path(__file__).parents[1] / ".npm/node_modules/.bin/mcp-server-everything"


@pytest.fixture
def config(tmp_path: Path) -> Path:
    if not EVERYTHING.exists():
        if os.environ.get("TOOLDECK_REQUIRE_NPM") == "1":
            pytest.fail(f"{EVERYTHING} is missing: run make npm-servers")
        pytest.skip("npm's server-everything is not installed (make npm-servers)")
    path = tmp_path / "tooldeck.toml"
    path.write_text(
        f'[builtin]\nenabled = false\n[mcp_servers.everything]\ncommand = "{EVERYTHING}"\n'
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
