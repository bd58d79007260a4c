"""A desktop client without elicitation: a person approves in a terminal (issue 26, item 2).

The server is launched the way a desktop app does it (cwd ``/``, a bare ``PATH``, the
absolute command); the client declares no elicitation, so nobody can be asked in the
session. The error tells the model the truth (a person must run this command), the
command works as printed from another folder, and the repeat of the call then runs.
"""

from __future__ import annotations

import json
import re
import shlex
import sqlite3
import subprocess
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from processes import BIN, confirming_project, interruptible, tooldeck


@pytest.mark.integration
@pytest.mark.anyio
async def test_a_terminal_approves_what_a_stdio_session_asked(tmp_path: Path) -> None:
    project = tmp_path / "project"
    config = confirming_project(project)
    home = tmp_path / "home"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home)}
    params = StdioServerParameters(
        command=str(BIN / "tooldeck"), args=["mcp", "--config", str(config)], cwd="/", env=env
    )
    errors = (tmp_path / "server.err").open("w+")
    async with Client(stdio_client(params, errlog=errors)) as client:
        asked = await client.call_tool("delete_note", {"name": "groceries"})
        assert asked.is_error
        message = asked.content[0].text  # type: ignore[union-attr]
        assert "do not repeat the call until they say they approved it" in message
        found = re.search(r"run: (.+ approve .+? [0-9a-f]{16})\.", message)
        assert found, message
        command = shlex.split(found.group(1))
        assert command[0] == str(BIN / "tooldeck")  # not on the bare PATH: spelled out
        again = await client.call_tool("delete_note", {"name": "groceries"})
        assert again.is_error  # still waiting: one pending approval, not two
        listed = tooldeck("approvals", "--json", "--config", str(config), cwd=tmp_path, env=env)
        assert [json.loads(line)["tool"] for line in listed.stdout.splitlines()] == [
            "delete_note"
        ], listed.stderr
        done = subprocess.run(
            command, cwd=home.parent, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        assert "approved delete_note" in done.stderr
        ran = await client.call_tool("delete_note", {"name": "groceries"})
        assert not ran.is_error, ran.content
        assert ran.structured_content == {"deleted": "groceries"}
        other = await client.call_tool("delete_note", {"name": "taxes"})
        assert other.is_error  # the approval covered that one call
    # the session closed: what it asked and nobody decided leaves the list (issue 55)
    listed = tooldeck("approvals", "--json", "--config", str(config), cwd=tmp_path, env=env)
    assert listed.returncode == 0 and listed.stdout == "", listed.stdout + listed.stderr
    errors.seek(0)
    said = errors.read()
    errors.close()
    assert "Traceback" not in said and "BrokenPipe" not in said, said
    with sqlite3.connect(project / ".tooldeck" / "audit.db") as db:
        decisions = db.execute("SELECT tool_name, decision, approver FROM approval_decisions")
        assert [(t, d, a.split(":")[0]) for t, d, a in decisions] == [
            ("delete_note", "approved", "terminal")
        ]


@pytest.mark.integration
def test_deny_from_the_terminal_tells_the_model_why(tmp_path: Path) -> None:
    confirming_project(tmp_path)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return tooldeck(*args, cwd=tmp_path, env=env)

    asked = json.loads(run("call", "delete_note", "name=x").stdout)
    approval_id = asked["error"]["details"]["approval_id"]
    assert "--yes" in asked["error"]["message"]
    unknown = run("approvals", "deny", "0123456789abcdef")
    assert unknown.returncode == 1 and f"waiting: {approval_id}" in unknown.stderr
    assert run("approvals", "deny", approval_id, "--reason", "keep it").returncode == 0
    denied = json.loads(run("call", "delete_note", "name=x").stdout)
    assert denied["error"]["type"] == "denied"
    assert "keep it" in denied["error"]["message"]
    assert "no call is waiting" in run("approvals").stderr


@pytest.mark.integration
def test_watch_asks_about_each_waiting_call_and_records_the_answer(tmp_path: Path) -> None:
    import signal

    from deadlines import wait_until

    confirming_project(tmp_path)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    watch = subprocess.Popen(
        [str(BIN / "tooldeck"), "approvals", "watch"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=interruptible,
    )
    try:
        assert watch.stdin is not None
        watch.stdin.write("y\n")  # the person's answer to the first question
        watch.stdin.flush()
        asked = tooldeck("call", "delete_note", "name=x", cwd=tmp_path, env=env)
        assert json.loads(asked.stdout)["error"]["type"] == "confirmation_required"

        def ran() -> bool:
            again = tooldeck("call", "delete_note", "name=x", cwd=tmp_path, env=env)
            return json.loads(again.stdout)["status"] == "success"

        wait_until(ran, "the call approved in `tooldeck approvals watch` to run")
    finally:
        watch.send_signal(signal.SIGINT)
        out, err = watch.communicate(timeout=30)
    assert "delete_note" in out and "approved delete_note" in err, out + err


SLOW_TOOL = """import time

from tooldeck import tool


@tool
def slow(seconds: float = 1.0) -> dict:
    \"\"\"Wait, then answer at length.\"\"\"
    time.sleep(seconds)
    return {"slept": seconds, "text": "x" * 200_000}
"""


@pytest.mark.integration
def test_a_client_that_stops_reading_leaves_no_traceback(tmp_path: Path) -> None:
    """The client closes its end while a result is on its way (issue 55, item 6): the
    server ends quietly, exit 0, no BrokenPipeError traceback on stderr."""
    (tmp_path / "tools.py").write_text(SLOW_TOOL)
    (tmp_path / "tooldeck.toml").write_text('tools = ["./tools.py"]\n')
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    server = subprocess.Popen(
        [str(BIN / "tooldeck"), "mcp"], cwd=tmp_path, env=env, preexec_fn=interruptible,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert server.stdin is not None and server.stdout is not None

    def send(message: dict) -> None:
        assert server.stdin is not None
        server.stdin.write((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())
        server.stdin.flush()

    hello = {"protocolVersion": "2025-06-18", "capabilities": {},
             "clientInfo": {"name": "leaves", "version": "1"}}  # fmt: skip
    send({"id": 1, "method": "initialize", "params": hello})
    assert b'"id":1' in server.stdout.readline()
    send({"method": "notifications/initialized"})
    send({"id": 2, "method": "tools/call", "params": {"name": "slow", "arguments": {}}})
    server.stdout.close()  # gone before the answer
    try:
        server.wait(timeout=3)  # the answer met a closed pipe; stdin is still open
    except subprocess.TimeoutExpired:
        server.stdin.close()  # or it noticed nothing yet: the client's end closes too
        server.wait(timeout=30)
    assert server.stderr is not None
    said = server.stderr.read().decode()
    server.stderr.close()
    if not server.stdin.closed:
        server.stdin.close()
    assert server.returncode == 0, said
    assert "Traceback" not in said and "BrokenPipe" not in said, said
