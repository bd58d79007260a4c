"""``MCPToolsProvider`` against real MCP server processes: mcp-server-time, mcp-server-git,
and a fixture server that misbehaves on purpose (tests/integration/mcp_fixture_server.py)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from deadlines import wait_until_async
from tooldeck.providers import MCPServerConfig, MCPToolsProvider, PolicyConfig
from tooldeck.providers.composite import CompositeToolsProvider
from tooldeck.providers.mcp import load_mcp_servers_file

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

FIXTURE = str(Path(__file__).with_name("mcp_fixture_server.py"))
BIN = Path(sys.executable).parent


def time_server() -> MCPToolsProvider:
    return MCPToolsProvider("time", MCPServerConfig(command=str(BIN / "mcp-server-time")))


def fixture(*args: str, protocol: str = "auto") -> MCPToolsProvider:
    return MCPToolsProvider(
        "fx",
        MCPServerConfig(
            command=sys.executable,
            args=[FIXTURE, *args],
            init_timeout_s=20,
            protocol=protocol,  # type: ignore[arg-type]
        ),
    )


def kill_children() -> None:
    """SIGKILL the MCP server processes this test process started.

    multiprocessing's own helpers (the fork server and resource tracker that other
    tests' isolated parsers use) are children too, and are left alone.
    """
    out = subprocess.run(
        ["pgrep", "-P", str(os.getpid())], capture_output=True, text=True, check=False
    ).stdout.split()
    for pid in out:
        with contextlib.suppress(OSError):
            if b"multiprocessing" in Path(f"/proc/{pid}/cmdline").read_bytes():
                continue
            os.kill(int(pid), signal.SIGKILL)


async def test_time_server_definitions_and_calls() -> None:
    async with time_server() as provider:
        definitions = {d.name: d for d in await provider.definitions()}
        assert set(definitions) == {"get_current_time", "convert_time"}
        current = definitions["get_current_time"]
        assert current.server_id == current.provider == "time"
        assert current.input_schema["required"] == ["timezone"]
        assert current.output_schema is not None
        assert current.annotations.read_only is True

        result = await provider.execute("get_current_time", {"timezone": "Europe/Paris"})
        assert result.success and result.data["timezone"] == "Europe/Paris"
        assert (
            result.metadata.provider == "time" and result.metadata.tool_name == "get_current_time"
        )

        invalid = await provider.execute("get_current_time", {})
        assert invalid.error is not None and invalid.error.type == "validation"
        assert "timezone" in invalid.error.message

        failed = await provider.execute("get_current_time", {"timezone": "Mars/Olympus"})
        assert failed.error is not None and failed.error.type == "execution"
        assert "Mars/Olympus" in failed.error.message


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A real git repository with one untracked file."""
    path = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    (path / "notes.txt").write_text("hello\n")
    return path


async def test_git_server_on_a_real_repository(repo: Path) -> None:
    config = MCPServerConfig(command=str(BIN / "mcp-server-git"), args=["--repository", str(repo)])
    async with MCPToolsProvider("git", config) as provider:
        names = {d.name for d in await provider.definitions()}
        assert {"git_status", "git_add", "git_commit", "git_log"} <= names
        status = await provider.execute("git_status", {"repo_path": str(repo)})
        assert status.success and "notes.txt" in (status.output or "")


async def test_results_map_to_the_envelope() -> None:
    async with fixture() as provider:
        echo = await provider.execute("echo", {"text": "hi"})
        assert (echo.data, echo.output) == ({"text": "hi"}, "hi")
        assert (echo.source_id, echo.as_of) == ("tool:echo:v1", "2026-11-20")  # from _meta
        picture = await provider.execute("picture", {})
        assert picture.output == "a pixel"
        assert picture.artifacts[0].kind == "image"
        assert picture.artifacts[0].uri.startswith("data:image/png;base64,iVBOR")
        failed = await provider.execute("fail", {})
        assert failed.error is not None and failed.error.type == "execution"
        assert failed.error.message == "it broke"
        unknown = await provider.execute("ech", {})
        assert unknown.error is not None and unknown.error.type == "not_found"
        assert "'echo'" in unknown.error.message


async def test_upstream_tools_take_strict_nulls_and_refuse_undeclared_arguments() -> None:
    async with fixture() as provider:
        # what OpenAI strict mode makes a model send for "not given"
        nulls = await provider.execute("echo", '{"text": null}')
        assert nulls.success and nulls.data == {"text": ""}
        typo = await provider.execute("echo", {"txet": "hi"})
        assert typo.error is not None and typo.error.type == "validation"
        assert "txet: unexpected argument (did you mean 'text'?)" in typo.error.message
    async with time_server() as provider:
        result = await provider.execute(
            "convert_time",
            {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Europe/Oslo"},
        )
        assert result.success
        wrong = await provider.execute("get_current_time", {"timezone": "UTC", "tz": "x"})
        assert wrong.error is not None and "tz: unexpected argument" in wrong.error.message


async def test_an_upstream_schema_whose_refs_double_exports_bounded_in_every_format() -> None:
    """2^40 objects if its $refs were inlined: every listing would stall (a stranger's schema)."""
    from google.genai import types

    from tooldeck.exporters import export

    async with fixture("--nested") as provider:
        nested = next(d for d in await provider.definitions() if d.name == "nested")
        begin = time.perf_counter()
        exported = {fmt: export([nested], fmt) for fmt in ("openai", "anthropic", "gemini", "mcp")}
        assert time.perf_counter() - begin < 20  # unbounded: hours
        for fmt, tools in exported.items():
            assert len(json.dumps(tools)) < 2_000_000, fmt
        types.FunctionDeclaration.model_validate(exported["gemini"][0])
        assert "not expanded: the schema is too large" in json.dumps(exported["gemini"])
        # past strict mode's 10 levels: non-strict, its $defs kept (issue 55, item 14)
        assert "strict" not in exported["openai"][0]["function"]
        # calls are still checked against the real schema, refs and all
        ok = await provider.execute("nested", {"tree": {"left": {"right": {}}}})
        assert ok.success, ok.error
        wrong = await provider.execute("nested", {"tree": {"left": 5}})
        assert wrong.error is not None and wrong.error.type == "validation"


async def test_a_tool_that_needs_mcp_tasks_is_listed_unavailable_with_the_reason() -> None:
    async with fixture(protocol="legacy") as provider:  # 2025-11-25: tools carry execution
        assert "tasky" not in [d.name for d in await provider.definitions()]
        assert "tasky" in [d.name for d in await provider.all_definitions()]
        assert "MCP task" in provider.unavailable()["tasky"]
        tasky = await provider.execute("tasky", {})
        assert tasky.error is not None and tasky.error.type == "unavailable"
        assert "taskSupport = required" in tasky.error.message and not tasky.error.retryable
        assert (await provider.execute("echo", {"text": "hi"})).output == "hi"


async def test_a_pushy_task_server_is_polled_at_a_floor_and_its_messages_cut() -> None:
    """pollInterval 0 and 10,000-character status messages from a server written to push."""
    from tooldeck.core.context import ToolContext

    reports: list[dict[str, Any]] = []

    async def follow(event: Any) -> None:
        reports.append(event.data)

    async with fixture("--raw-tasks") as provider:
        assert [d.name for d in await provider.definitions()] == ["pushy"]  # it takes tasks
        ctx = ToolContext(event_emitter=follow)
        result = await provider.execute("pushy", {"polls": 3}, ctx)
        assert result.success and result.output == "pushed through", result.error
        at_once = await provider.execute("pushy", {"polls": 0})
        assert at_once.output == "at once"  # a task request answered at once
    await asyncio.sleep(0.1)
    messages = [r.get("message") or "" for r in reports]
    assert messages and all(len(m) <= 500 for m in messages)
    assert [r["progress"] for r in reports] == list(range(1, len(reports) + 1))


async def test_a_task_made_after_its_call_was_cancelled_is_cancelled_too(tmp_path: Path) -> None:
    """The call times out while the server is still answering tools/call (2 s): once the
    task's id arrives, tasks/cancel goes out for it."""
    log = tmp_path / "requests.log"
    async with fixture("--raw-tasks", f"--log={log}") as provider:
        assert [d.name for d in await provider.definitions()] == ["pushy"]  # connected
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.5):
                await provider.execute("pushy", {"polls": -2})

        async def cancelled() -> bool:
            return "tasks/cancel" in log.read_text()

        await wait_until_async(cancelled, "tasks/cancel to reach the server", 10)
    assert log.read_text().split().count("tasks/get") == 0  # never polled: cancelled


async def test_malformed_result_is_an_execution_error() -> None:
    async with fixture("--raw") as provider:
        assert [d.name for d in await provider.definitions()] == ["weird"]
        result = await provider.execute("weird", {})
        assert result.error is not None and result.error.type == "execution"
        assert "malformed result" in result.error.message
        assert (await provider.execute("weird", {})).error is not None  # still serving


async def test_list_changed_refetches_and_reaches_wrappers() -> None:
    provider = fixture()
    view = CompositeToolsProvider([provider]).filtered()
    async with view, provider:
        assert "extra" not in [d.name for d in await view.definitions()]
        assert (await view.execute("grow", {})).success

        async def listed() -> bool:
            return "extra" in [d.name for d in await view.definitions()]

        await wait_until_async(listed, "the new tool after notifications/tools/list_changed")
        assert (await view.execute("extra", {})).output == "extra!"


async def test_killed_server_read_only_call_reconnects_transparently() -> None:
    async with time_server() as provider:
        assert (await provider.execute("get_current_time", {"timezone": "UTC"})).success
        kill_children()
        await asyncio.sleep(0.2)
        again = await provider.execute("get_current_time", {"timezone": "UTC"})
        assert again.success and again.metadata.attempts == 2


async def test_killed_mid_call_is_unavailable_then_next_call_succeeds() -> None:
    async with fixture() as provider:
        assert (await provider.execute("echo", {"text": "a"})).success
        call = asyncio.create_task(provider.execute("slow_write", {"seconds": 5}))
        await asyncio.sleep(0.5)
        kill_children()
        cut = await asyncio.wait_for(call, 10)
        assert cut.error is not None and cut.error.type == "unavailable" and cut.error.retryable
        assert "not repeated" in cut.error.message and "'fx'" in cut.error.message
        after = await provider.execute("slow_write", {"seconds": 0})
        assert after.success and after.output == "written"


async def test_server_that_cannot_start_reports_id_and_stderr(tmp_path: Path) -> None:
    config = MCPServerConfig(command="sh", args=["-c", "echo 'boom: no config' >&2; exit 3"])
    async with MCPToolsProvider("broken", config) as provider:
        assert await provider.definitions() == []
        assert provider.last_error is not None
        assert "'broken'" in provider.last_error and "boom: no config" in provider.last_error
    missing = MCPServerConfig(command=str(tmp_path / "no-such-server"))
    async with MCPToolsProvider("ghost", missing) as provider:
        assert await provider.definitions() == []
        assert "'ghost'" in (provider.last_error or "")


async def test_stack_keeps_working_when_one_server_is_down() -> None:
    broken = MCPToolsProvider("broken", MCPServerConfig(command="sh", args=["-c", "exit 1"]))
    root = CompositeToolsProvider([time_server(), broken]).with_policies(
        PolicyConfig(max_attempts=1)
    )
    async with root:
        assert [d.name for d in await root.definitions()] == ["get_current_time", "convert_time"]
        assert (await root.execute("get_current_time", {"timezone": "UTC"})).success


async def test_init_timeout(tmp_path: Path) -> None:
    config = MCPServerConfig(command="sleep", args=["30"], init_timeout_s=0.5)
    async with MCPToolsProvider("sleepy", config) as provider:
        assert await provider.definitions() == []
        assert "did not initialize within 0.5 s" in (provider.last_error or "")


def test_init_timeout_leaves_nothing_on_stderr() -> None:
    script = (
        "import asyncio, gc\n"
        "from tooldeck.providers import MCPServerConfig, MCPToolsProvider\n"
        "async def main():\n"
        "    config = MCPServerConfig(command='sleep', args=['30'], init_timeout_s=0.5)\n"
        "    async with MCPToolsProvider('sleepy', config) as provider:\n"
        "        assert await provider.definitions() == []\n"
        "    gc.collect()\n"
        "asyncio.run(main())\n"
        "gc.collect()\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert "never retrieved" not in run.stderr and "_ServerDown" not in run.stderr, run.stderr


def test_mcp_servers_json_file(tmp_path: Path) -> None:
    path = tmp_path / "claude_desktop_config.json"
    path.write_text(
        '{"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]},'
        ' "docs": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"X": "1"}}}}'
    )
    servers = load_mcp_servers_file(path)
    assert servers["time"].transport == "stdio" and servers["time"].args == ["mcp-server-time"]
    assert servers["docs"].transport == "http" and servers["docs"].headers == {"X": "1"}
    path.write_text('{"mcpServers": {"bad": {"args": ["x"]}}}')
    with pytest.raises(ValueError, match=r"mcpServers\.bad.*command"):
        load_mcp_servers_file(path)


async def test_a_call_cut_mid_way_is_not_repeated_by_the_policy(tmp_path: Path) -> None:
    """A nested ``tooldeck mcp`` runs ``python`` that appends a line, and is killed
    mid-call: the policy (3 attempts by default) must not send it again."""
    from tooldeck.config import load_settings
    from tooldeck.runtime import build_runtime

    tmp_path.chmod(0o755)
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)  # the sandbox runs the code as nobody
    inner = tmp_path / "inner.toml"
    inner.write_text(
        f'[builtin]\nroots = ["{shared}"]\n[policy.tools.python]\nrequires_confirmation = false\n'
    )
    settings = load_settings(
        None,
        data_dir=tmp_path / "data",
        mcp_servers={
            "inner": {
                "command": sys.executable,
                "args": ["-m", "tooldeck", "mcp", "--config", str(inner)],
                "env": {"TOOLDECK_DATA_DIR": str(tmp_path / "inner-data")},
                "init_timeout_s": 30,
                "prefix": "inner",
            }
        },
    )
    runtime = build_runtime(settings)
    await runtime.start()
    try:
        code = (
            f"open({str(shared / 'log.txt')!r}, 'a').write('ran\\n')\n"
            "import time; time.sleep(30)\nresult = 'done'"
        )
        call = asyncio.create_task(
            runtime.provider.execute("inner_python", {"code": code}, runtime.context())
        )

        async def started() -> bool:
            return (shared / "log.txt").exists()

        await wait_until_async(started, "the sandboxed call to write its first line")
        kill_children()
        result = await asyncio.wait_for(call, 30)
    finally:
        await runtime.aclose()
    assert result.error is not None and result.error.type == "unavailable", result
    assert result.error.retryable and result.error.may_have_run
    assert "may have run" in result.error.message
    assert result.metadata.attempts == 1
    assert (shared / "log.txt").read_text() == "ran\n"  # exactly once
