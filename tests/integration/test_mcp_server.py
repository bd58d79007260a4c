"""tooldeck as an MCP server, driven by the official ``mcp`` SDK client (not ours):
``tooldeck mcp`` over stdio and ``tooldeck serve``'s ``/mcp`` over streamable HTTP."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from processes import Server, free_port

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

BIN = Path(sys.executable).parent

CONFIG = f"""
[brokerage]
enabled = true  # the demo data beside an MCP server: said explicitly
[mcp_servers.time]
command = "{BIN / "mcp-server-time"}"

[profiles.support]
tools = ["get_positions", "get_quotes", "get_transfers"]
mcp_servers = ["time"]
confirm = ["get_transfers"]

[profiles.local_only]
mcp_servers = []
"""


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "tooldeck.toml"
    path.write_text(CONFIG)
    return path


def stdio(config: Path, tmp_path: Path, *args: str, **kwargs: Any) -> Client:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "tooldeck", "mcp", "--config", str(config), *args],
        env={"TOOLDECK_DATA_DIR": str(tmp_path / "data")},
    )
    return Client(params, **kwargs)


async def test_stdio_lists_the_profile_view_and_calls_with_provenance(
    config: Path, tmp_path: Path
) -> None:
    async with stdio(config, tmp_path, "--profile", "support") as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert names == [
            "get_positions",
            "get_quotes",
            "get_transfers",
            "get_current_time",
            "convert_time",
        ]
        listed = {t.name: t for t in (await client.list_tools()).tools}
        positions = listed["get_positions"]
        assert positions.input_schema["additionalProperties"] is False  # undeclared: refused
        assert positions.meta == {"source_id": "tool:positions:v1"}
        result = await client.call_tool("get_positions", {"symbol": "AAPL"})
        assert not result.is_error
        assert result.meta is not None and result.meta["source_id"] == "tool:positions:v1"
        # the text block is the structured content serialised, nothing else (MCP spec)
        assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]
        first_id = result.meta["request_id"]
        assert result.meta["as_of"]
        assert result.structured_content is not None
        assert result.structured_content["positions"][0]["symbol"] == "AAPL"

        proxied = await client.call_tool("get_current_time", {"timezone": "UTC"})  # via upstream
        assert not proxied.is_error and proxied.structured_content["timezone"] == "UTC"  # type: ignore[index]

        hidden = await client.call_tool("get_activity", {})
        assert hidden.is_error and hidden.meta["error_type"] == "not_found"  # type: ignore[index]

        bad = await client.call_tool("get_positions", {"symbol": 42})
        assert bad.is_error and bad.meta["error_type"] == "validation"  # type: ignore[index]
        assert "symbol" in bad.content[0].text  # type: ignore[union-attr]

        typo = await client.call_tool("get_positions", {"symbol": "AAPL", "acount": "joint"})
        assert typo.is_error and "did you mean 'account'" in typo.content[0].text  # type: ignore[union-attr]

        pending = await client.call_tool("get_transfers", {})  # no elicitation support
        assert pending.is_error and pending.meta["error_type"] == "confirmation_required"  # type: ignore[index]
        assert pending.meta["error"]["details"]["approval_id"]  # type: ignore[index]

    async with stdio(config, tmp_path, "--profile", "support") as client:  # a second session
        again = await client.call_tool("get_positions", {"symbol": "AAPL"})
        assert again.meta is not None and again.meta["request_id"] != first_id


async def test_confirmation_uses_elicitation_when_the_client_supports_it(
    config: Path, tmp_path: Path
) -> None:
    asked: list[str] = []

    async def elicit(ctx: Any, params: Any) -> Any:
        import mcp_types as types

        asked.append(params.message)
        approve = len(asked) == 1
        return types.ElicitResult(
            action="accept", content={"approve": approve, "reason": "" if approve else "no"}
        )

    async with stdio(
        config, tmp_path, "--profile", "support", elicitation_callback=elicit
    ) as client:
        approved = await client.call_tool("get_transfers", {})
        assert not approved.is_error
        assert approved.meta["source_id"] == "tool:transfers:v1"  # type: ignore[index]
        denied = await client.call_tool("get_transfers", {})
        assert denied.is_error and denied.meta["error_type"] == "denied"  # type: ignore[index]
    assert len(asked) == 2 and "get_transfers" in asked[0]


async def test_unknown_profile_fails_at_start(config: Path, tmp_path: Path) -> None:
    with pytest.raises(Exception):  # noqa: B017,PT011 - the server exits before the handshake
        async with stdio(config, tmp_path, "--profile", "nope") as client:
            await client.list_tools()


async def test_streamable_http_endpoint_of_tooldeck_serve(config: Path, tmp_path: Path) -> None:
    port = free_port()
    server = Server(tmp_path / "data", port, extra_args=["--config", str(config)])
    try:
        async with Client(f"{server.url}/mcp") as client:
            names = [t.name for t in (await client.list_tools()).tools]
            assert "get_activity" in names and "get_current_time" in names  # no profile: all
            result = await client.call_tool("get_quotes", {"symbols": ["AAPL"]})
            assert not result.is_error
            assert result.meta["source_id"] == "tool:quotes:v1"  # type: ignore[index]
        async with Client(f"{server.url}/mcp?profile=local_only") as client:
            names = [t.name for t in (await client.list_tools()).tools]
            assert "get_activity" in names and "get_current_time" not in names
            hidden = await client.call_tool("get_current_time", {"timezone": "UTC"})
            assert hidden.is_error and hidden.meta["error_type"] == "not_found"  # type: ignore[index]
        async with Client(f"{server.url}/mcp?profile=nope") as client:
            with pytest.raises(
                MCPError, match=r"unknown profile 'nope'; profiles: local_only, support"
            ):
                await client.list_tools()
    finally:
        server.stop()


async def test_a_desktop_launch_finds_mcp_servers_installed_beside_tooldeck(
    tmp_path: Path,
) -> None:
    """As Claude Desktop starts it: cwd ``/``, a PATH without tooldeck's environment; an
    upstream server named by its command alone (installed beside tooldeck) still starts."""
    config = tmp_path / "tooldeck.toml"
    config.write_text(
        '[mcp_servers.time]\ncommand = "mcp-server-time"\n'
        "[builtin]\nenabled = false\n[knowledge]\nenabled = false\n"
    )
    params = StdioServerParameters(
        command=str(BIN / "tooldeck"),
        args=["mcp", "--config", str(config)],
        cwd="/",
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    async with Client(params) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert "get_current_time" in names, names
        now = await client.call_tool("get_current_time", {"timezone": "UTC"})
        assert not now.is_error
