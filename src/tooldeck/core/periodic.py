"""``periodically``: call a function every few seconds while a block of async code runs.

>>> import asyncio
>>> beats = []
>>> async def work() -> None:
...     async with periodically(0.01, lambda: beats.append(1)):
...         await asyncio.sleep(0.035)
>>> asyncio.run(work()); 3 <= len(beats) <= 5
True

What a Temporal activity's heartbeat needs (``activity.heartbeat`` every third of its
heartbeat time-out, so a worker that dies is noticed), without this module importing
Temporal.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

__all__ = ["periodically"]


@contextlib.asynccontextmanager
async def periodically(every_s: float, call: Callable[[], Any]) -> AsyncIterator[None]:
    """Call ``call()`` now and then every ``every_s`` seconds until the block ends.

    The calls run on the event loop as a task, cancelled when the block exits (however
    it exits). ``call`` must not block.
    """

    async def loop() -> None:
        while True:
            call()
            await asyncio.sleep(every_s)

    task = asyncio.create_task(loop())
    try:
        yield
    finally:
        task.cancel()
