"""Ctrl-C during a long ``tooldeck call`` (issue 26, item 5): a real process, a real SIGINT."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from processes import interruptible

from deadlines import scaled, wait_until

pytestmark = pytest.mark.integration

SLOW = '''
import time
from pathlib import Path
from tooldeck import tool


@tool
def slow(seconds: float = 60) -> str:
    """Sleep in a thread nobody can stop."""
    Path("started").write_text("yes")
    time.sleep(seconds)
    return "done"
'''


def test_ctrl_c_says_cancelled_and_exits_at_once(tmp_path: Path) -> None:
    (tmp_path / "slow.py").write_text(SLOW)
    process = subprocess.Popen(
        [sys.executable, "-m", "tooldeck", "call", "slow", "--tools", str(tmp_path / "slow.py")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        preexec_fn=interruptible,
    )
    wait_until(lambda: (tmp_path / "started").exists(), "the tool to start")
    start = time.perf_counter()
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert time.perf_counter() - start < scaled(10)  # not the 60 s the thread still sleeps
    assert process.returncode == 130 and "cancelled" in stderr
    audit = subprocess.run(
        [sys.executable, "-m", "tooldeck", "audit", "--json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    [record] = [json.loads(line) for line in audit.stdout.splitlines()]
    assert (record["tool_name"], record["error_type"]) == ("slow", "cancelled"), record
    assert record["duration_ms"] > 0
