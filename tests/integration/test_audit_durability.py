"""Nothing lost (issue 19): acknowledged calls survive SIGKILL; a full disk fails closed.

A real ``tooldeck serve`` (default ``[audit] durability = "ack"``) takes REST calls
from 8 threads and is killed with SIGKILL mid-stream; once the next tooldeck process
has opened the audit (it stores what the killed one left in its journal), every call
that was answered 200 must be in the audit database, found by its ``X-Request-ID``. Then the audit
database is put on a 1 MiB tmpfs and filled: a destructive tool answers
``unavailable`` without running, a read-only one still runs, and once space is free
again, so does the destructive one.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from processes import Server, env_for, free_port, tooldeck

from tooldeck.config import load_settings
from tooldeck.core.definition import ToolAnnotations
from tooldeck.core.function_tool import tool
from tooldeck.runtime import build_runtime

pytestmark = pytest.mark.integration


def test_no_acknowledged_call_is_lost_when_the_server_is_killed(tmp_path: Path) -> None:
    server = Server(tmp_path / "data", free_port())
    acknowledged: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()

    def caller() -> None:
        with httpx.Client(timeout=5) as client:
            while not stop.is_set():
                request_id = uuid.uuid4().hex
                try:
                    response = client.post(
                        f"{server.url}/api/tools/execute/get_quotes",
                        json={"symbol": "AAPL"},
                        headers={"x-request-id": request_id},
                    )
                except httpx.HTTPError:
                    return  # the server is gone
                if response.status_code == 200:
                    with lock:
                        acknowledged.append(request_id)
                        if len(acknowledged) >= 600:
                            stop.set()

    try:
        with ThreadPoolExecutor(8) as pool:
            futures = [pool.submit(caller) for _ in range(8)]
            stop.wait(60)
            server.proc.send_signal(signal.SIGKILL)  # mid-stream: callers are still sending
            stop.set()
            for future in futures:
                future.result()
    finally:
        server.proc.wait(10)
        server.log.close()
    assert len(acknowledged) >= 600
    data = tmp_path / "data"
    shown = tooldeck("audit", "--json", "-n", "1", cwd=tmp_path, env=env_for(data))
    assert shown.returncode == 0, shown.stderr  # the next start: the journal is stored
    with sqlite3.connect(tmp_path / "data" / "audit.db") as db:
        stored = {row[0] for row in db.execute("SELECT request_id FROM tool_calls")}
    missing = [r for r in acknowledged if r not in stored]
    assert missing == [], f"{len(missing)} of {len(acknowledged)} answered calls are not in the log"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mount = tmp_path / "disk"
    mount.mkdir()
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", str(mount)], check=True
    )
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.mark.parametrize("journal", [True, False], ids=["journalled", "no journal"])
def test_a_full_disk_fails_destructive_calls_closed(
    small_disk: Path, tmp_path: Path, journal: bool
) -> None:
    marker = tmp_path / "deleted"
    if not journal:  # a folder others may write in is refused: calls wait for commits
        (small_disk / "audit.journal").mkdir(mode=0o777)
        (small_disk / "audit.journal").chmod(0o777)

    @tool(annotations=ToolAnnotations(destructive=True))
    def purge() -> str:
        """Stands in for a destructive tool: leaves a mark when it runs."""
        marker.write_text("ran")
        return "purged"

    settings = load_settings(data_dir=small_disk, builtin={"enabled": False})
    runtime = build_runtime(settings)
    assert runtime.audit is not None and (runtime.audit._journal is not None) is journal
    runtime.registry.register(purge)
    stack = runtime.provider

    async def scenario() -> None:
        assert (await stack.execute("get_quotes", {"symbol": "AAPL"})).success
        filler = small_disk / "filler"
        with filler.open("wb") as fh:  # fill the disk
            try:
                while True:
                    fh.write(b"x" * 65536)
                    fh.flush()
            except OSError:
                pass
        for _ in range(3):  # calls still run, journalled in space the segment holds
            await stack.execute("get_quotes", {"symbol": "MSFT", "pad": "y" * 20_000})  # large
        assert runtime.audit is not None
        runtime.audit.flush()  # the writer's next batch: the database and fallback refuse it
        assert runtime.audit.healthy is False
        refused = await stack.execute("purge", {})
        assert refused.error is not None and refused.error.type == "unavailable"
        assert "audit" in refused.error.message and not marker.exists()
        assert (await stack.execute("get_quotes", {"symbol": "AAPL"})).success
        filler.unlink()
        for _ in range(20):  # the first write that succeeds marks the store healthy again
            assert (await stack.execute("get_quotes", {"symbol": "AAPL"})).success
            if runtime.audit.healthy:
                break
            await asyncio.sleep(0.05)
        assert runtime.audit.healthy is True
        assert (await stack.execute("purge", {})).success and marker.exists()

    try:
        asyncio.run(scenario())
    finally:
        runtime.close()
