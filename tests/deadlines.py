"""Waits that poll until a generous deadline, scaled for a busy machine.

A test suite runs on a developer's machine that may be busy (two cores, a build
beside it): a server that starts in 5 s idle took 21-49 s there. Every wait polls
until ``scaled(seconds)``; ``TOOLDECK_TEST_TIMEOUT_SCALE`` (default 1) multiplies each
deadline. A wait that expires fails with what it waited for, never silently.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable

__all__ = ["scaled", "wait_until", "wait_until_async"]

SCALE = float(os.environ.get("TOOLDECK_TEST_TIMEOUT_SCALE") or 1)


def scaled(seconds: float) -> float:
    """``seconds`` times ``TOOLDECK_TEST_TIMEOUT_SCALE``."""
    return seconds * SCALE


def wait_until(check: Callable[[], object], what: str, seconds: float = 60.0) -> None:
    """Poll ``check()`` until it is truthy.

    Raises:
        AssertionError: still false after ``scaled(seconds)``; says ``what`` it waited for.
    """
    deadline = time.monotonic() + scaled(seconds)
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {scaled(seconds):g} s for {what}")
        time.sleep(0.05)


async def wait_until_async(
    check: Callable[[], Awaitable[object]], what: str, seconds: float = 60.0
) -> None:
    """``wait_until`` for an async ``check``, sleeping on the event loop."""
    deadline = time.monotonic() + scaled(seconds)
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {scaled(seconds):g} s for {what}")
        await asyncio.sleep(0.05)
