"""Ctrl-C during a long ``tooldeck call`` (issue 26, item 5): a real process, a real SIGINT."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

SLOW = '''
import time
from tooldeck import tool


@tool
def slow(seconds: float = 60) -> str:
    """Sleep in a thread nobody can stop."""
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
    )
    time.sleep(4)  # the call is under way
    start = time.perf_counter()
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert time.perf_counter() - start < 5  # not the 60 s the thread still sleeps
    assert process.returncode == 130 and "cancelled" in stderr
