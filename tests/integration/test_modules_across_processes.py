"""A module changed by ``tooldeck modules`` in a terminal is served at once by the running
``tooldeck serve`` and by a desktop client's ``tooldeck mcp`` (issue 55): install, a new
version, a rollback and a disable, each seen by both within seconds, without a restart.
"""

from __future__ import annotations

import asyncio
import re
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client, StdioServerParameters

from deadlines import scaled
from integration.processes import Server, env_for, free_port, tooldeck

pytestmark = [pytest.mark.anyio, pytest.mark.integration]


async def until(what: str, check: Any) -> Any:
    """``await check()`` until it is truthy (its value), within ``scaled(15)`` seconds."""
    deadline = time.monotonic() + scaled(15)
    while True:
        value = await check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {scaled(15):g} s: {what}")
        await asyncio.sleep(0.2)


async def test_a_module_changed_in_a_terminal_is_served_by_running_processes(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    config = project / "tooldeck.toml"
    config.write_text("[builtin]\nenabled = false\n")
    data = tmp_path / "data"
    env = env_for(data)

    def cli(*args: str) -> str:
        done = tooldeck("modules", *args, cwd=project, env=env)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        return done.stdout

    server = Server(data, free_port(), cwd=project)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "tooldeck", "mcp", "--config", str(config)],
        env=env,
        cwd=str(project),
    )
    try:
        async with (
            httpx.AsyncClient(base_url=server.url, timeout=30) as rest,
            Client(params) as desktop,
        ):

            async def greeting() -> str | None:
                answer = await rest.post("/api/tools/execute/greeter_hello", json={"name": "Bo"})
                return answer.json()["data"]["greeting"] if answer.status_code == 200 else None

            async def listed() -> list[str]:
                return [t.name for t in (await desktop.list_tools()).tools]

            assert "greeter_hello" not in await listed()
            assert (await rest.post("/api/tools/execute/greeter_hello", json={})).status_code == 404
            assert "no modules yet" in cli("list")

            cli("new", "greeter")
            assert "passed" in cli("validate", "greeter")
            v1 = re.search(r"greeter (v1-\w+) is active", cli("install", "greeter", "--yes"))
            assert v1 is not None
            assert await until("REST serves v1", greeting) == "Hello, Bo"
            await until("the desktop client lists it", lambda: _has(listed, "greeter_hello"))
            called = await desktop.call_tool("greeter_hello", {"name": "Cy"})
            assert not called.is_error and called.structured_content == {"greeting": "Hello, Cy"}

            cli("new", "greeter")  # a copy of v1
            tools = tmp_path / "tools.py"
            tools.write_text(
                "from pydantic import Field\n\nfrom tooldeck import tool\n\n\n@tool\n"
                'def greeter_hello(name: str = Field(examples=["Ada"])) -> dict:\n'
                '    """Greets someone, warmly."""\n'
                '    return {"greeting": f"Welcome, {name}"}\n'
            )
            cli("edit", "greeter", "tools.py", "--from", str(tools))
            assert '+    return {"greeting": f"Welcome, {name}"}' in cli("diff", "greeter")
            cli("validate", "greeter")
            cli("install", "greeter", "--yes")

            async def welcomed() -> bool:
                return await greeting() == "Welcome, Bo"

            await until("REST serves v2", welcomed)
            cli("rollback", "greeter", v1.group(1), "--yes")

            async def back() -> bool:
                return await greeting() == "Hello, Bo"

            await until("REST serves v1 again", back)
            assert v1.group(1) in cli("list")

            cli("disable", "greeter")

            async def gone() -> bool:
                return await greeting() is None and "greeter_hello" not in await listed()

            await until("neither serves it once disabled", gone)
    finally:
        server.stop()


async def _has(listed: Any, name: str) -> bool:
    return name in await listed()


def test_a_change_that_needs_approval_is_not_made_without_it(tmp_path: Path) -> None:
    """Off a terminal and without --yes, an install waits for a person (exit 1, the
    command that approves it said); nothing is installed."""
    env = env_for(tmp_path / "data")
    new = tooldeck("modules", "new", "greeter", cwd=tmp_path, env=env)
    assert new.returncode == 0, new.stderr
    assert tooldeck("modules", "validate", "greeter", cwd=tmp_path, env=env).returncode == 0
    refused = tooldeck("modules", "install", "greeter", cwd=tmp_path, env=env)
    assert refused.returncode == 1
    assert "confirmation_required" in refused.stderr and "approvals approve" in refused.stderr
    listed = tooldeck("modules", "list", cwd=tmp_path, env={**env, "COLUMNS": "200"})
    assert "none (disabled or not installed)" in listed.stdout, listed.stdout
    unknown = tooldeck("modules", "validate", "nothing", cwd=tmp_path, env=env)
    assert unknown.returncode == 2 and "no module 'nothing'; modules: greeter" in unknown.stderr
