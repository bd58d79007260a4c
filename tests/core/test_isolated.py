"""``IsolatedProcesses``: what comes back from a child, whatever happened in it."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tooldeck.core.isolated import IsolatedProcesses, IsolationError, ProcessLimits

LIMITS = ProcessLimits(timeout_s=10, memory_mb=256)


def _lock() -> object:
    return threading.Lock()  # cannot be pickled back


def _grow() -> int:
    return len(bytearray(1024 * 1024 * 1024))


def _fail() -> None:
    raise ValueError("bad input, line 3")


@pytest.fixture(scope="module")
def pool() -> IsolatedProcesses:
    return IsolatedProcesses(1)


def test_a_result_that_cannot_be_sent_back_is_a_clear_error(pool: IsolatedProcesses) -> None:
    with pytest.raises(RuntimeError, match="the result cannot be sent back: cannot pickle"):
        pool.call(_lock, limits=LIMITS)


def test_the_functions_own_error_and_the_memory_bound(pool: IsolatedProcesses) -> None:
    with pytest.raises(ValueError, match="bad input, line 3"):
        pool.call(_fail, limits=LIMITS)
    with pytest.raises(IsolationError, match="memory_mb=256") as hit:
        pool.call(_grow, limits=LIMITS)
    assert (hit.value.kind, hit.value.limit) == ("memory", "memory_mb")


SCRIPT = """\
import asyncio
from tooldeck.config import load_settings
from tooldeck.runtime import build_runtime

print("main ran")
rt = build_runtime(load_settings(builtin={{"enabled": False}}, audit={{"enabled": False}},
                                 context={{"finance": {{"ofx": [{statement!r}]}}}}))
got = asyncio.run(rt.provider.execute("user_context", {{"action": "query", "per_page": 1}}))
query = got.data["query"]
print("transactions", query["total"] if query else got.data["categories"][0]["sources"])
rt.close()
"""


@pytest.mark.parametrize("how", ["path", "stdin"])
def test_a_script_with_no_main_guard_reads_statements(tmp_path: Path, how: str) -> None:
    """Issue 55, item 10: a script that builds a runtime at its top level (no ``if
    __name__ == "__main__":``) parses statements in isolated children, which used to run
    the script again ("An attempt has been made to start a new process before the current
    process has finished its bootstrapping phase"), or, read from stdin, a file ``<stdin>``."""
    statement = Path(__file__).parents[1] / "packs" / "context_data" / "checking.ofx"
    script = tmp_path / "script.py"
    script.write_text(SCRIPT.format(statement=str(statement)))
    command = [sys.executable, str(script)] if how == "path" else [sys.executable, "-"]
    done = subprocess.run(
        command, cwd=tmp_path, input=None if how == "path" else script.read_text(),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["main ran", "transactions 7"], done.stdout + done.stderr
