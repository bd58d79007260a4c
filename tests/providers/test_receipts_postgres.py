"""Receipts in PostgreSQL shared by two replicas (issue 31, parts 1 and 3).

Two runtimes with their own data dirs (two ``tooldeck serve`` replicas) share one
PostgreSQL database: a key delivered to both at once runs once, a retry that reaches
the other replica gets the stored result, and a database that cannot be reached makes
a keyed call answer ``unavailable`` without running the tool.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tooldeck.config import load_settings
from tooldeck.core import tool
from tooldeck.runtime import Runtime, build_runtime

SENT: list[str] = []


@tool(name="send_sms")
async def send_sms(to: str) -> str:
    """Send a text message (recorded).

    Args:
        to: The number.
    """
    SENT.append(to)
    await asyncio.sleep(0.2)  # the second delivery arrives while this one runs
    return f"sent to {to}"


def replica(data_dir: Path, url: str) -> Runtime:
    runtime = build_runtime(
        load_settings(data_dir=data_dir, builtin={"enabled": False}, receipts={"url": url})
    )
    runtime.registry.register(send_sms)
    return runtime


@pytest.mark.integration
@pytest.mark.anyio
async def test_two_replicas_on_one_database_send_each_keyed_message_once(
    postgres_db: str, tmp_path: Path
) -> None:
    SENT.clear()
    a, b = replica(tmp_path / "a", postgres_db), replica(tmp_path / "b", postgres_db)
    try:
        for n in range(20):
            key = f"sms-{n}"
            both = await asyncio.gather(
                a.provider.execute("send_sms", {"to": f"+1{n}"}, a.context(idempotency_key=key)),
                b.provider.execute("send_sms", {"to": f"+1{n}"}, b.context(idempotency_key=key)),
            )
            assert [r.success for r in both] == [True, True]
            assert sum(r.metadata.replay_of is not None for r in both) == 1
            later = await b.provider.execute(
                "send_sms", {"to": f"+1{n}"}, b.context(idempotency_key=key)
            )
            assert later.data == both[0].data and later.metadata.replay_of is not None
        assert [f"+1{n}" for n in range(20)] == SENT
    finally:
        await a.aclose()
        await b.aclose()


@pytest.mark.anyio
async def test_a_database_that_cannot_be_reached_runs_nothing(tmp_path: Path) -> None:
    SENT.clear()
    runtime = replica(tmp_path, "postgresql://tooldeck@127.0.0.1:9/none")
    try:
        result = await runtime.provider.execute(
            "send_sms", {"to": "+100"}, runtime.context(idempotency_key="k")
        )
        assert result.error is not None and result.error.type == "unavailable"
        assert result.error.retryable and "did not run" in result.error.message
        unkeyed = await runtime.provider.execute("send_sms", {"to": "+101"}, runtime.context())
        assert unkeyed.success  # nothing to keep: the call does not need the store
        assert SENT == ["+101"]
    finally:
        await runtime.aclose()
