"""Every MCP transport sees the caller REST sees (issue 53, findings 2 and 5).

On a shared server (``trust_user_header``, modules on, ``admins = ["ann"]``) REST
refused bob ``module_admin``, but over ``/mcp`` every caller was ``anonymous``, the
default module admin, so bob could build and install code that then ran for everyone.
And modern MCP clients (2026-07-28) share one channel while result URIs were
sequential: one client read another's long result. Driven with the official SDK's
client, over streamable HTTP in both protocol generations and over stdio.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
from mcp.shared.exceptions import MCPError

from integration.processes import Server, env_for, free_port

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

REPORT = '''from tooldeck import tool


@tool
def big_report(lines: int = 2_000) -> str:
    """A long access log, as text."""
    return "".join(f"line {i:07d}: {'x' * 35}\\n" for i in range(lines))
'''
DRAFT = {
    "action": "create_draft",
    "module_id": "mine",
    "files": {"module.toml": 'name = "mine"\ndescription = "d"\n', "tools.py": "X = 1\n"},
}


def config(tmp_path: Path) -> Path:
    (tmp_path / "report.py").write_text(REPORT)
    path = tmp_path / "tooldeck.toml"
    path.write_text(
        f'data_dir = "{tmp_path / "data"}"\ntools = ["report.py"]\n'
        "[builtin]\nenabled = false\n[server]\ntrust_user_header = true\n"
        '[packs.modules]\nadmin = true\nadmins = ["ann"]\n[credentials]\nuse_keyring = false\n'
    )
    return path


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("shared")
    serving = Server(None, free_port(), extra_args=["--config", str(config(tmp))], cwd=tmp)
    try:
        yield serving
    finally:
        serving.stop()


@contextlib.asynccontextmanager
async def as_user(server: Server, user: str, mode: str) -> AsyncIterator[Client]:
    """The SDK's client on ``/mcp``, its requests sent with ``X-User: user``."""
    async with create_mcp_http_client(headers={"X-User": user}) as http:
        transport = streamable_http_client(f"{server.url}/mcp", http_client=http)
        async with Client(transport, mode=mode) as client:  # type: ignore[arg-type]
            yield client


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_bob_is_bob_over_mcp_and_only_admins_change_modules(
    server: Server, mode: str
) -> None:
    async with as_user(server, "bob", mode) as bob, as_user(server, "ann", mode) as ann:
        refused = await bob.call_tool("module_admin", DRAFT)
        assert refused.is_error
        assert "'bob' is not one" in refused.content[0].text  # type: ignore[union-attr]
        allowed = await ann.call_tool("module_admin", {**DRAFT, "module_id": f"m{mode[:4]}"})
        assert not allowed.is_error, allowed.content


async def test_a_session_opened_by_ann_does_not_serve_bob(server: Server) -> None:
    async with create_mcp_http_client(headers={"X-User": "ann"}) as http:
        transport = streamable_http_client(f"{server.url}/mcp", http_client=http)
        async with Client(transport, mode="legacy") as ann:
            assert not (await ann.call_tool("big_report", {"lines": 1})).is_error
            http.headers["X-User"] = "bob"  # the same session id, another user's header
            with pytest.raises(MCPError, match="opened by another user"):
                await ann.call_tool("module_admin", DRAFT)


async def test_over_stdio_the_caller_is_anonymous_and_no_admin_here(tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "tooldeck", "mcp", "--config", str(config(tmp_path))],
        env=env_for(None),
        cwd=str(tmp_path),
    )
    async with Client(params) as client:
        refused = await client.call_tool("module_admin", DRAFT)
        assert refused.is_error
        assert "'anonymous' is not one" in refused.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_long_result_is_read_back_only_by_its_caller(server: Server, mode: str) -> None:
    async with as_user(server, "alice", mode) as alice, as_user(server, "bob", mode) as bob:
        called = await alice.call_tool("big_report", {})
        [link] = [c for c in called.content if c.type == "resource_link"]
        token = str(link.uri).removeprefix("tooldeck://results/")
        assert len(token) >= 22 and "mcp" not in token  # 128 random bits, not a counter
        with pytest.raises(MCPError, match="no resource"):
            await bob.read_resource(str(link.uri))
        read = await alice.read_resource(str(link.uri))
        assert read.contents[0].text.startswith("line 0000000")  # type: ignore[union-attr]
