"""A server killed with SIGKILL leaves no sandbox or parser process behind (issue 53, 9).

The fork servers (the python sandbox's, ``multiprocessing``'s for parsers) and the
jobs they run used to go on after the server died: a 1.9 GB parse kept running.
A real process runs a sandboxed job and an isolated call, is killed with SIGKILL, and
every process it started is gone within seconds.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from deadlines import scaled

pytestmark = [pytest.mark.integration]

SCRIPT = """
import asyncio, os, time
from tooldeck.core.isolated import IsolatedProcesses, ProcessLimits
from tooldeck.isolation.sandbox import Sandbox, SandboxLimits

async def main():
    sandbox = Sandbox(preload=("json",), env={"PATH": os.environ["PATH"]}, spares=1)
    await sandbox.start()
    limits = SandboxLimits(timeout_s=600, cpu_s=600)
    asyncio.get_running_loop().create_task(sandbox.run("while True: pass", cwd=None, limits=limits))
    pool = IsolatedProcesses(1)
    asyncio.get_running_loop().run_in_executor(
        None, lambda: pool.call(time.sleep, 600, limits=ProcessLimits(timeout_s=600))
    )
    await asyncio.sleep(2)
    print("ready", flush=True)
    await asyncio.sleep(600)

if __name__ == "__main__":
    asyncio.run(main())
"""


def descendants(pid: int) -> set[int]:
    """Every process under ``pid`` (from /proc's children lists)."""
    found: set[int] = set()
    todo = [pid]
    while todo:
        current = todo.pop()
        for task in Path(f"/proc/{current}/task").glob("*"):
            try:
                children = (task / "children").read_text().split()
            except OSError:
                continue
            for child in map(int, children):
                if child not in found:
                    found.add(child)
                    todo.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_killed_server_leaves_no_sandbox_or_parser_running(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(SCRIPT)
    server = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None and server.stdout.readline().strip() == "ready"
        started = descendants(server.pid)
        assert len(started) >= 3, started  # the fork servers and the jobs they run
        os.kill(server.pid, signal.SIGKILL)
        server.wait()
        deadline = time.monotonic() + scaled(10)
        while time.monotonic() < deadline and any(alive(p) for p in started):
            time.sleep(0.1)
        left = sorted(p for p in started if alive(p))
        assert left == [], [Path(f"/proc/{p}/cmdline").read_bytes()[:80] for p in left]
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        if server.stdout is not None:
            server.stdout.close()
