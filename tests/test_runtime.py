"""``Runtime``'s own entry points (``build_runtime`` is exercised everywhere else)."""

from __future__ import annotations

import pytest

from tooldeck.config import load_settings
from tooldeck.runtime import build_runtime

pytestmark = pytest.mark.anyio


async def test_close_inside_an_event_loop_says_to_await_aclose() -> None:
    """Issue 55, item 11: ``asyncio.run`` inside a running loop raised its own error."""
    runtime = build_runtime(load_settings(builtin={"enabled": False}, audit={"enabled": False}))
    with pytest.raises(RuntimeError, match=r"await runtime.aclose\(\)"):
        runtime.close()
    await runtime.aclose()
