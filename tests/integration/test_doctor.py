"""``tooldeck doctor`` launches the server as a desktop client does (issue 26, item 4)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from processes import Server, confirming_project, free_port, tooldeck


def doctor(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd / "home"), "COLUMNS": "200"}
    return tooldeck("doctor", *args, cwd=cwd, env=env, timeout=300)


@pytest.mark.integration
@pytest.mark.anyio
async def test_doctor_reports_what_a_desktop_client_gets(tmp_path: Path) -> None:
    config = confirming_project(
        tmp_path,
        '[mcp_servers.time]\ncommand = "mcp-server-time"\n'
        '[mcp_servers.gone]\ncommand = "mcp-server-that-is-not-installed"\n',
    )
    done = doctor(cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "MCP server gone did not start" in done.stderr
    assert "'mcp-server-that-is-not-installed' was not found on PATH" in done.stderr
    assert "get_current_time" in done.stdout  # found beside tooldeck's Python, bare PATH
    assert "delete_note ask a person first" in done.stdout
    assert "packs off (your own tools are served alone" in done.stdout

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    config.write_text(  # "." is the project, though the client starts the server in /
        'tools = ["./tools.py"]\n[mcp_servers.time]\ncommand = "mcp-server-time"\n'
        '[mcp_servers.git]\ncommand = "mcp-server-git"\nargs = ["--repository", "."]\n'
    )
    done = doctor("--with", "builtin", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"reaches files, git, shell and python under {tmp_path.resolve()}" in done.stdout
    pasted = json.loads(done.stdout[done.stdout.index("{") :])["mcpServers"]["tooldeck"]
    params = StdioServerParameters(
        command=pasted["command"], args=pasted["args"], cwd="/", env={"PATH": "/usr/bin:/bin"}
    )
    async with Client(params) as client:  # what the user pastes works as printed
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert {"delete_note", "get_current_time", "git_status", "files"} <= names


@pytest.mark.integration
def test_doctor_says_whether_the_approval_page_is_up(tmp_path: Path) -> None:
    """Issue 55, item 6: URL-mode approval silently needed ``tooldeck serve``."""
    port = free_port()
    config = confirming_project(tmp_path, f"[server]\nport = {port}\n")
    done = doctor(cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    said = " ".join(done.stdout.split())
    assert f"sent to http://127.0.0.1:{port}, which is not running now" in said, said
    assert f"start `tooldeck serve --config {config.resolve()}`" in said
    server = Server(None, port, extra_args=["--config", str(config)], cwd=tmp_path)
    try:
        done = doctor(cwd=tmp_path)
    finally:
        server.stop()
    assert f"clients that open a page are sent to http://127.0.0.1:{port} (up)" in done.stdout


@pytest.mark.integration
def test_doctor_without_a_config_says_what_to_do(tmp_path: Path) -> None:
    done = doctor(cwd=tmp_path)
    assert done.returncode == 1
    assert "no tooldeck.toml here or above" in done.stderr
    assert "tooldeck init" in done.stderr and "tooldeck doctor ./tools.py" in done.stderr
    (tmp_path / "tooldeck.toml").write_text("[nosuchtable]\n")
    done = doctor(cwd=tmp_path)  # the server exits at once: its own words are shown
    assert done.returncode == 1
    assert "did not answer tools/list (it stopped)" in done.stderr
    assert "nosuchtable" in done.stderr


@pytest.mark.integration
@pytest.mark.anyio
async def test_doctor_checks_a_tools_py_with_no_config(tmp_path: Path) -> None:
    """Issue 55, item 3: an existing tools.py reaches a desktop client as ``tooldeck mcp
    ./tools.py`` serves it; doctor said to run init (which refused the folder)."""
    (tmp_path / "tools.py").write_text(
        "from tooldeck import tool\n\n\n@tool\ndef shout(text: str) -> str:\n"
        '    """Shout it.\n\n    Args:\n        text: What to shout.\n    """\n'
        "    return text.upper()\n"
    )
    done = doctor("./tools.py", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "shout" in done.stdout
    pasted = json.loads(done.stdout[done.stdout.index("{") :])["mcpServers"]["tooldeck"]
    assert pasted["args"] == ["mcp", str((tmp_path / "tools.py").resolve())]
    params = StdioServerParameters(
        command=pasted["command"], args=pasted["args"], cwd="/", env={"PATH": "/usr/bin:/bin"}
    )
    async with Client(params) as client:  # what the user pastes works as printed
        result = await client.call_tool("shout", {"text": "hi"})
    assert not result.is_error and "HI" in str(result.content)


SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "Shop", "version": "1"},
    "paths": {
        "/items/{item_id}": {
            "get": {
                "operationId": "get_item",
                "summary": "One item.",
                "parameters": [
                    {
                        "name": "item_id",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "string"},
                    }
                ],
                "responses": {"200": {"description": "The item."}},
            }
        }
    },
}


@pytest.mark.integration
@pytest.mark.anyio
@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ('[openapi.shop]\nspec = "shop.json"\nbase_url = "http://127.0.0.1:9"\n', {"get_item"}),
        ('[mcp_servers.time]\ncommand = "mcp-server-time"\n',
         {"get_current_time", "convert_time"}),
    ],
)  # fmt: skip
async def test_a_project_of_imported_tools_serves_them_alone(
    tmp_path: Path, table: str, expected: set[str]
) -> None:
    """Issue 55, item 4: an OpenAPI import, or MCP servers, are the project's own tools: a
    desktop client gets them alone (it got 27 and 20 tools, with the example portfolio,
    ``shell`` and ``python``), and doctor says why; a pack asked for by its table joins."""
    (tmp_path / "shop.json").write_text(json.dumps(SPEC))
    (tmp_path / "tooldeck.toml").write_text(table)
    done = doctor(cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "your own tools are served alone" in done.stdout
    pasted = json.loads(done.stdout[done.stdout.index("{") :])["mcpServers"]["tooldeck"]
    params = StdioServerParameters(
        command=pasted["command"], args=pasted["args"], cwd="/", env={"PATH": "/usr/bin:/bin"}
    )
    async with Client(params) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert names == expected
    (tmp_path / "tooldeck.toml").write_text(table + "[builtin]\nenabled = true\n")
    async with Client(params) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert expected < names and "python" in names and "get_quotes" not in names
