"""Runs through the real runtime: answers from the data file, confirmation, cancel, replay."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, update

from tooldeck.agent.contracts import EVENT_TYPES, ChatRequest, ConfirmRequest
from tooldeck.config import load_settings
from tooldeck.exceptions import RunNotFoundError, RunStateError
from tooldeck.observability.tables import runs as runs_table
from tooldeck.packs.brokerage import DEFAULT_DATA_PATH
from tooldeck.runtime import Runtime, build_runtime

pytestmark = pytest.mark.anyio

CAREFUL = {"careful": {"confirm": ["get_quotes"]}}


def settings(**overrides: Any) -> Any:
    return load_settings(builtin={"enabled": False}, profiles=CAREFUL, **overrides)


@pytest.fixture
async def runtime() -> AsyncIterator[Runtime]:
    rt = build_runtime(settings())
    await rt.start()
    yield rt
    await rt.aclose()


async def ask(rt: Runtime, question: str, **fields: Any) -> Any:
    run = await rt.runs.start(ChatRequest(question=question, **fields), user="tester")
    return await rt.runs.wait(run.run_id)


async def types(rt: Runtime, run_id: str, after: int = 0) -> list[str]:
    """Event types in order, consecutive message.delta events counted once."""
    seen: list[str] = []
    async for event in rt.runs.events(run_id, after):
        if not (event.type == "message.delta" and seen[-1:] == ["message.delta"]):
            seen.append(event.type)
    return seen


async def test_the_aapl_question_is_answered_from_the_data_file_and_grounded(
    runtime: Runtime,
) -> None:
    run = await ask(runtime, "How much is my AAPL position worth and how is it doing?")
    assert run.state == "completed"
    answer = run.answer
    assert answer.citations == ["tool:positions:v1", "tool:quotes:v1"]
    assert answer.grounding.verdict == "grounded" and answer.grounding.numbers_checked > 10
    assert (answer.intent, answer.params, answer.mode) == (
        "symbol_performance", {"symbol": "AAPL"}, "router"
    )  # fmt: skip
    # the figures, computed here straight from the data file
    data = json.loads(DEFAULT_DATA_PATH.read_text())
    price = next(q["price"] for q in data["quotes"]["quotes"] if q["symbol"] == "AAPL")
    held = [p for p in data["positions"]["positions"] if p["symbol"] == "AAPL"]
    assert len(held) == 2
    for p in held:
        worth = p["quantity"] * price
        pl = p["quantity"] * (price - p["cost_basis"])
        assert f"${worth:,.2f}" in answer.answer_markdown
        assert f"+${pl:,.2f}" in answer.answer_markdown
    total = sum(p["quantity"] for p in held) * price
    assert f"${total:,.2f}" in answer.answer_markdown
    assert [(c.name, c.status, c.source_id) for c in answer.tool_calls] == [
        ("get_positions", "success", "tool:positions:v1"),
        ("get_quotes", "success", "tool:quotes:v1"),
    ]
    assert all(c.duration_ms > 0 for c in answer.tool_calls)
    assert await types(runtime, run.run_id) == [
        "run.created",
        "run.started",
        "tool_call.started",
        "tool_call.completed",
        "tool_call.started",
        "tool_call.completed",
        "message.delta",
        "run.completed",
    ]


async def test_tool_calls_are_audited_with_the_run_id(runtime: Runtime) -> None:
    run = await ask(runtime, "What's my cash balance?")
    assert runtime.audit is not None
    rows = runtime.audit.query(tool="get_account_summary")
    assert [(r.run_id, r.user, r.request_id) for r in rows] == [
        (run.run_id, "tester", run.answer.tool_calls[0].id)
    ]


async def test_a_confirmation_pauses_the_run_until_approved(runtime: Runtime) -> None:
    run = await ask(runtime, "What's the price of MSFT?", profile="careful")
    assert run.state == "waiting_input"
    assert run.pending.tool == "get_quotes" and run.pending.arguments == {"symbol": "MSFT"}
    assert await runtime.runs.wait(run.run_id) == run  # still waiting
    with pytest.raises(RunNotFoundError):
        await runtime.runs.confirm(run.run_id + "x", ConfirmRequest(approve=True), user="tester")
    done = await runtime.runs.confirm(run.run_id, ConfirmRequest(approve=True), user="tester")
    done = await runtime.runs.wait(run.run_id)
    assert done.state == "completed" and done.pending is None
    assert "$431.18" in done.answer.answer_markdown
    assert done.answer.grounding.verdict == "grounded"
    with pytest.raises(RunStateError, match="it is completed; confirm is allowed only"):
        await runtime.runs.confirm(run.run_id, ConfirmRequest(approve=True), user="tester")
    assert await types(runtime, run.run_id) == [
        "run.created",
        "run.started",
        "tool_call.started",
        "run.waiting_input",
        "tool_call.completed",
        "message.delta",
        "run.completed",
    ]


async def test_a_denied_call_gives_the_graceful_answer_with_the_reason(runtime: Runtime) -> None:
    run = await ask(runtime, "What's the price of MSFT?", profile="careful")
    await runtime.runs.confirm(
        run.run_id, ConfirmRequest(approve=False, message="not now"), user="tester"
    )
    done = await runtime.runs.wait(run.run_id)
    assert done.state == "completed"
    assert done.answer.answer_markdown.startswith("I could not retrieve the data needed")
    assert "The call to get_quotes was declined (not now)" in done.answer.answer_markdown
    assert "retry" not in done.answer.answer_markdown  # the model's instructions stay its own
    assert done.answer.needs_clarification and done.answer.confidence == 0.0
    assert done.answer.tool_calls[0].error_type == "denied"


async def test_cancel_ends_a_waiting_run_and_a_second_cancel_is_refused(runtime: Runtime) -> None:
    run = await ask(runtime, "What's the price of MSFT?", profile="careful")
    cancelled = await runtime.runs.cancel(run.run_id, by="tester")
    assert (cancelled.state, cancelled.error) == ("cancelled", "cancelled by tester")
    with pytest.raises(RunStateError, match=r"cannot cancel run .*: it is cancelled"):
        await runtime.runs.cancel(run.run_id)
    assert (await types(runtime, run.run_id))[-1] == "run.cancelled"
    with pytest.raises(RunNotFoundError):
        await runtime.runs.get("run_missing")


async def test_an_unclear_question_gets_a_clarifying_question(runtime: Runtime) -> None:
    run = await ask(runtime, "How did my portfolio perform?")
    answer = run.answer
    assert run.state == "completed" and answer.needs_clarification
    assert answer.clarifying_question.parameter == "timeframe"
    assert answer.tool_calls == [] and answer.citations == []
    again = await ask(runtime, "How did my portfolio perform?", params={"timeframe": "YTD"})
    assert again.answer.citations == ["tool:performance:v1", "tool:transfers:v1"]
    assert again.answer.grounding.verdict == "grounded"


async def test_runs_and_events_survive_the_process(tmp_path: Path) -> None:
    first = build_runtime(settings())
    run = await ask(first, "What's my cash balance?")
    waiting = await ask(first, "What's the price of MSFT?", profile="careful")
    # the process dies with a run waiting: its task stops, nothing more is written...
    task = first.runs._live[waiting.run_id].task
    assert task is not None
    first.runs._live.clear()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert first.audit is not None
    with first.audit.engine.begin() as conn:
        conn.execute(  # ... a minute ago: its lease has run out
            update(runs_table)
            .values(state="waiting_input", updated_at=datetime.now(UTC) - timedelta(minutes=1))
            .where(runs_table.c.id == waiting.run_id)
        )
    await first.aclose()

    second = build_runtime(settings())
    try:
        stored = await second.runs.get(run.run_id)
        assert stored == run  # the whole record, last_seq counting run.completed included
        assert await types(second, run.run_id, after=5) == ["message.delta", "run.completed"]
        await ask(second, "What's my cash balance?")  # first start: recovers stale runs
        assert (await types(second, waiting.run_id, after=0))[-1] == "run.failed"  # followed
        assert (await second.runs.get(waiting.run_id)).state == "failed"
        assert "interrupted" in ((await second.runs.get(waiting.run_id)).error or "")
        assert [r.run_id for r in await second.runs.recent(3)][1:] == [waiting.run_id, run.run_id]
    finally:
        await second.aclose()


async def test_a_save_in_flight_when_the_run_is_cancelled_lands_before_the_cancellation() -> None:
    """The stored record ends ``cancelled``, not the state whose save was still running.

    The ``waiting_input`` save is slowed down so that the run is cancelled while it is
    in its thread; the cancellation's own save must not overtake it.
    """
    rt = build_runtime(settings())
    assert rt.runs.store is not None
    save = rt.runs.store.save

    def slow_save(record: Any, event: Any = None, **kwargs: Any) -> Any:
        if record["state"] == "waiting_input":
            time.sleep(0.5)
        return save(record, event, **kwargs)

    rt.runs.store.save = slow_save  # type: ignore[method-assign]
    run = await rt.runs.start(
        ChatRequest(question="What's the price of MSFT?", profile="careful"), user="tester"
    )
    # the moment the state changes in memory, while its save is still in its thread
    while rt.runs._live[run.run_id].run.state != "waiting_input":  # noqa: ASYNC110
        await asyncio.sleep(0.01)
    task = rt.runs._live[run.run_id].task
    assert task is not None
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    await asyncio.sleep(0.7)  # longer than the slow save: whatever was in flight has landed
    with rt.audit.engine.connect() as conn:  # type: ignore[union-attr]
        state = conn.execute(
            select(runs_table.c.state).where(runs_table.c.id == run.run_id)
        ).scalar_one()
    rt.runs._live.clear()
    await rt.aclose()
    assert state == "cancelled"


def test_the_event_types_are_frozen() -> None:
    assert EVENT_TYPES == (
        "run.created",
        "run.started",
        "tool_call.started",
        "tool_call.progress",
        "tool_call.completed",
        "message.delta",
        "run.waiting_input",
        "run.completed",
        "run.failed",
        "run.cancelled",
    )


async def test_shutdown_cancels_unfinished_runs() -> None:
    rt = build_runtime(settings())
    run = await ask(rt, "What's the price of MSFT?", profile="careful")
    await rt.aclose()
    assert (await rt.runs.get(run.run_id)).state == "cancelled"
    await asyncio.sleep(0)
