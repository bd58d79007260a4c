"""Side effects exactly once, through real processes (issue 31, part 3).

A tool with a real effect (one line appended to ``effects.txt`` per call, then a pause
before it answers: the window where a failure loses the acknowledgement) is called
through ``tooldeck serve`` and ``tooldeck mcp``; the failure is injected after the
effect and before the answer reaches the client: the client's connection dropped, the
MCP session closed, the server killed with SIGKILL. The client then repeats the call
with the same key. Across every round the effect happens once per key, never twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import uuid
from functools import partial
from pathlib import Path

import httpx
import pytest
from processes import BIN, Server, free_port

from deadlines import wait_until

SIDE_EFFECT_TOOL = '''
import time
from pathlib import Path

from tooldeck import tool

EFFECTS = Path(__file__).parent / "effects.txt"


@tool
def send_note(key: str, pause_s: float = 0.0) -> dict:
    """Send a note (one line in effects.txt), then wait before answering.

    Args:
        key: Which note.
        pause_s: Seconds to wait after sending.
    """
    with EFFECTS.open("a") as out:
        out.write(key + "\\n")
        out.flush()
    time.sleep(pause_s)
    return {"sent": key}
'''


def project(folder: Path, extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tools.py").write_text(SIDE_EFFECT_TOOL)
    config = folder / "tooldeck.toml"
    config.write_text('tools = ["./tools.py"]\n' + extra)
    return config


def sent(folder: Path) -> list[str]:
    path = folder / "effects.txt"
    return path.read_text().splitlines() if path.exists() else []


@pytest.mark.integration
def test_rest_client_retrying_after_a_dropped_connection_sends_once(tmp_path: Path) -> None:
    project(tmp_path)
    server = Server(None, free_port(), cwd=tmp_path)
    rounds = 100
    try:
        url = f"{server.url}/api/tools/execute/send_note"
        for n in range(rounds):
            key = str(uuid.uuid4())
            body = {"key": f"note-{n}", "pause_s": 0.1}
            with pytest.raises(httpx.ReadTimeout):  # the answer is lost on the way back
                httpx.post(url, json=body, headers={"Idempotency-Key": key}, timeout=0.05)
            retry = httpx.post(url, json=body, headers={"Idempotency-Key": key}, timeout=30)
            assert retry.status_code == 200, retry.text
            assert retry.json()["data"] == {"sent": f"note-{n}"}
            assert retry.headers["Idempotent-Replayed"] == "true"
        plain = httpx.post(url, json={"key": "unkeyed"}, timeout=30)
        assert "Idempotent-Replayed" not in plain.headers
    finally:
        assert server.stop() == 0
    assert sent(tmp_path) == [*(f"note-{n}" for n in range(rounds)), "unkeyed"]


@pytest.mark.integration
def test_a_server_killed_after_the_effect_never_runs_it_again(tmp_path: Path) -> None:
    """SIGKILL between the effect and the answer; a new server on the same data dir.

    Every retry answers either the stored result (the kill came after the receipt was
    written) or "may or may not have taken effect" (it came before); none runs it again.
    """
    project(tmp_path, "[receipts]\nlease_s = 1.0\n")
    outcomes: list[str] = []
    for n in range(5):
        server = Server(None, free_port(), cwd=tmp_path)
        key = str(uuid.uuid4())
        body = {"key": f"kill-{n}", "pause_s": 0.05 * (n % 3)}
        url = f"{server.url}/api/tools/execute/send_note"
        with httpx.Client() as client:
            with contextlib.suppress(httpx.ReadTimeout):
                client.post(url, json=body, headers={"Idempotency-Key": key}, timeout=0.02)
            wait_until(lambda n=n: f"kill-{n}" in sent(tmp_path), "the effect")  # type: ignore[misc]
            os.kill(server.proc.pid, signal.SIGKILL)
            server.proc.wait()
            server.log.close()
        again = Server(None, free_port(), cwd=tmp_path)
        try:
            url = f"{again.url}/api/tools/execute/send_note"
            wait_until(partial(_retry, url, body, key, outcomes), "a retry to be answered")
        finally:
            assert again.stop() == 0
    assert sent(tmp_path) == [f"kill-{n}" for n in range(5)]
    assert set(outcomes) <= {"replayed", "in_doubt"} and len(outcomes) == 5


def _retry(url: str, body: dict[str, object], key: str, outcomes: list[str]) -> bool:
    """Repeat the call; note ``replayed`` or ``in_doubt``; False while the lease lasts."""
    reply = httpx.post(url, json=body, headers={"Idempotency-Key": key}, timeout=30)
    data = reply.json()
    if data["status"] == "success":
        assert reply.headers["Idempotent-Replayed"] == "true"
        outcomes.append("replayed")
        return True
    details = data["error"]["details"] or {}
    if details.get("receipt") == "in_doubt":
        assert "may or may not have taken effect" in data["error"]["message"]
        outcomes.append("in_doubt")
        return True
    assert data["error"]["type"] == "unavailable", data  # the first call's lease is not over
    return False


@pytest.mark.integration
@pytest.mark.anyio
async def test_an_mcp_session_closed_mid_call_answers_the_retry_from_the_receipt(
    tmp_path: Path,
) -> None:
    from mcp import Client, StdioServerParameters

    config = project(tmp_path)
    params = StdioServerParameters(
        command=str(BIN / "tooldeck"),
        args=["mcp", "--config", str(config)],
        cwd="/",
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    for n in range(3):
        meta = {"idempotencyKey": str(uuid.uuid4())}
        arguments = {"key": f"mcp-{n}", "pause_s": 0.5}
        async with Client(params) as client:
            call = asyncio.create_task(client.call_tool("send_note", arguments, meta=meta))
            await asyncio.to_thread(
                wait_until, lambda n=n: f"mcp-{n}" in sent(tmp_path), "the effect"
            )
            call.cancel()  # the connection goes away before the answer
        async with Client(params) as client:
            retry = await client.call_tool("send_note", arguments, meta=meta)
            refused = await client.call_tool("send_note", arguments, meta={"idempotencyKey": 7})
        assert refused.is_error
        assert "_meta.idempotencyKey: it must be a string" in refused.content[0].text  # type: ignore[union-attr]
        assert not retry.is_error, retry.content
        assert retry.structured_content == {"sent": f"mcp-{n}"}
    assert sent(tmp_path) == ["mcp-0", "mcp-1", "mcp-2"]
