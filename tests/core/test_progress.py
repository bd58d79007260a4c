"""``EventRelay`` and ``ToolContext.report_progress``: in order, from any thread, never blocking."""

from __future__ import annotations

import asyncio
import threading

import pytest

from tooldeck.core.context import ToolContext, ToolEvent
from tooldeck.core.progress import EventRelay, progress_data

pytestmark = pytest.mark.anyio


async def test_reports_from_a_worker_thread_arrive_in_order_before_close_returns() -> None:
    got: list[tuple[float, float | None, str | None] | None] = []

    async def send(event: ToolEvent) -> None:
        got.append(progress_data(event))

    relay = EventRelay(send)
    ctx = ToolContext(request_id="r1", event_emitter=relay)

    def work() -> None:
        assert threading.current_thread() is not threading.main_thread()
        for i in range(1, 6):
            ctx.report_progress(i, 5, f"step {i}")

    await asyncio.to_thread(work)
    await relay.aclose()
    assert got[-1] == (5, 5, "step 5")
    assert [g[0] for g in got if g] == sorted(g[0] for g in got if g)  # never backwards
    ctx.report_progress(6, 5)  # after close: ignored, no error
    await asyncio.sleep(0.01)
    assert got[-1] == (5, 5, "step 5")


async def test_a_slow_follower_gets_the_latest_progress_not_a_backlog() -> None:
    got: list[float] = []

    async def send(event: ToolEvent) -> None:
        await asyncio.sleep(0.02)
        report = progress_data(event)
        assert report is not None
        got.append(report[0])

    relay = EventRelay(send)
    ctx = ToolContext(request_id="r1", event_emitter=relay)
    for i in range(1, 1001):
        ctx.report_progress(i, 1000)
        if i % 100 == 0:
            await asyncio.sleep(0.03)
    await relay.aclose()
    assert got[-1] == 1000 and got == sorted(got)
    assert len(got) < 50  # 1,000 reports; the follower saw a handful


async def test_a_failing_follower_and_a_flood_of_other_events_never_reach_the_tool() -> None:
    sent: list[str] = []

    async def send(event: ToolEvent) -> None:
        if event.data.get("n") == 0:
            raise ConnectionError("client went away")
        sent.append(event.type)

    relay = EventRelay(send, limit=10)
    ctx = ToolContext(event_emitter=relay)
    for n in range(20):
        await ctx.emit("log", n=n)
    await relay.aclose()
    assert len(sent) == 9 and relay.dropped == 10  # the first raised; 10 past the limit


async def test_report_progress_without_a_follower_or_with_an_async_one() -> None:
    ToolContext().report_progress(1, 2)  # nobody follows: nothing happens
    got: list[ToolEvent] = []

    async def follower(event: ToolEvent) -> None:
        got.append(event)

    ToolContext(request_id="r2", event_emitter=follower).report_progress(1, None, "started")
    await asyncio.sleep(0)
    assert [(e.type, dict(e.data), e.request_id) for e in got] == [
        ("progress", {"progress": 1, "message": "started"}, "r2")
    ]
    assert progress_data(ToolEvent(type="progress", data={"progress": "x"})) is None


def test_a_reports_message_is_cut_to_its_bound_and_a_bad_one_never_raises() -> None:
    from tooldeck.core.context import PROGRESS_MESSAGE_CHARS

    got: list[ToolEvent] = []
    ctx = ToolContext(event_emitter=got.append)
    ctx.report_progress(1, 2, "x" * 10_000)
    ctx.report_progress(2, 2, 42)  # type: ignore[arg-type]  # not text: passed on as it is
    assert len(got[0].data["message"]) == PROGRESS_MESSAGE_CHARS
    assert progress_data(got[1]) == (2, 2, None)
