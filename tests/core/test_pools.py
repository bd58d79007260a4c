"""The worker pools that run blocking tools: results, errors, families, cancel, exit."""

from __future__ import annotations

import asyncio
import contextvars
import subprocess
import sys
import textwrap
import threading

import pytest

from deadlines import wait_until_async
from tooldeck.core import tool
from tooldeck.core.pools import THREADS_PER_POOL, WorkerPool, in_thread

pytestmark = pytest.mark.anyio

caller = contextvars.ContextVar("caller", default="nobody")


async def test_a_job_returns_its_value_or_raises_its_error_with_the_callers_context() -> None:
    def who(suffix: str) -> str:
        return caller.get() + suffix

    def fails() -> None:
        raise LookupError("no such row")

    caller.set("alice")
    assert await in_thread("test-values", who, "!") == "alice!"
    with pytest.raises(LookupError, match="no such row"):
        await in_thread("test-values", fails)


async def test_one_familys_stuck_calls_do_not_starve_another_family() -> None:
    release = threading.Event()
    started: list[int] = []

    def stuck(i: int) -> int:
        started.append(i)
        release.wait(30)
        return i

    stuck_calls = [in_thread("test-stuck", stuck, i) for i in range(THREADS_PER_POOL + 1)]
    try:
        assert await asyncio.wait_for(in_thread("test-other", lambda: "free"), 10) == "free"

        async def filled() -> bool:  # waited for, not slept: a busy machine starts late
            return len(started) >= THREADS_PER_POOL

        await wait_until_async(filled, f"{THREADS_PER_POOL} stuck calls to start", 30)
        await asyncio.sleep(0.1)  # the one more, if it could start, would have by now
        assert len(started) == THREADS_PER_POOL  # the fifth waits for a thread of its family
    finally:
        release.set()
    assert sorted(await asyncio.gather(*stuck_calls)) == list(range(THREADS_PER_POOL + 1))


async def test_a_job_cancelled_before_a_thread_takes_it_never_runs() -> None:
    pool = WorkerPool("test-cancel", size=1)
    release = threading.Event()
    ran: list[str] = []
    first = pool.run(release.wait, 30)
    second = pool.run(ran.append, "second")
    second.cancel()
    release.set()
    assert await first is True
    assert await pool.run(ran.append, "third") is None
    assert ran == ["third"]


def test_a_call_stuck_for_good_does_not_hold_the_process_at_exit() -> None:
    """A timed-out call's thread is still blocked when the program ends; it exits anyway.

    With ``concurrent.futures.ThreadPoolExecutor`` the interpreter joins that thread at
    exit, and the process hangs for as long as the call does.
    """
    script = textwrap.dedent(
        """
        import asyncio, threading
        from tooldeck.core import tool
        from tooldeck.providers import PolicyConfig, ToolRegistry

        @tool
        def hang() -> str:
            threading.Event().wait()
            return "never"

        async def main():
            stack = ToolRegistry([hang]).with_policies(PolicyConfig(timeout_s=0.2))
            result = await stack.execute("hang", {})
            print(result.error.type)

        asyncio.run(main())
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "timeout"


async def test_a_blocking_tool_runs_in_its_familys_named_thread() -> None:
    @tool(name="test_named")
    def where() -> str:
        return threading.current_thread().name

    result = await where.execute({})
    assert str(result.data).startswith("tooldeck-test_named-"), result
