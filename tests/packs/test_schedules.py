"""Scheduled tool calls (issue 31, part 5): triggers, the scheduler with a moved clock,
misfires, carried approvals, two schedulers on one file, a crash mid-fire, other users.

Every schedule here is made through ``schedule_tool_call`` (or the REST route that runs
it), with a real SQLite store and the runtime's real stack.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from fastapi.testclient import TestClient

from tooldeck.config import load_settings
from tooldeck.core import tool
from tooldeck.core.confirmation import ConfirmationDecision
from tooldeck.packs.schedules.runner import Scheduler
from tooldeck.packs.schedules.store import ScheduleStore
from tooldeck.packs.schedules.triggers import TriggerError, parse_trigger
from tooldeck.runtime import Runtime, build_runtime
from tooldeck.server.app import create_app

SENT: list[str] = []


@tool(name="remind")
def remind(text: str) -> str:
    """Send a reminder (recorded).

    Args:
        text: What to say.
    """
    SENT.append(text)
    return f"sent {text}"


@tool(name="pay", requires_confirmation=True)
def pay(to: str, cents: int) -> str:
    """Pay someone (needs approval).

    Args:
        to: Payee.
        cents: Amount.
    """
    SENT.append(f"paid {to} {cents}")
    return "paid"


@pytest.fixture(autouse=True)
def _clear() -> None:
    SENT.clear()


def start(data_dir: Path, **settings: Any) -> Runtime:
    runtime = build_runtime(
        load_settings(data_dir=data_dir, builtin={"enabled": False}, **settings)
    )
    runtime.registry.register(remind)
    runtime.registry.register(pay)
    return runtime


def approve_all(request: Any) -> ConfirmationDecision:
    return ConfirmationDecision(approved=True, approver="test")


async def schedule(runtime: Runtime, user: str | None = None, **request: Any) -> dict[str, Any]:
    ctx = runtime.context(user=user, channel="test", confirm=approve_all)
    result = await runtime.provider.execute("schedule_tool_call", request, ctx)
    assert result.success, result.error
    return result.data  # type: ignore[no-any-return]


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def scheduler(runtime: Runtime, clock: Clock) -> Scheduler:
    return Scheduler(runtime.services.get(ScheduleStore), runtime.services, clock=clock)


def test_cron_follows_the_zone_across_daylight_saving() -> None:
    berlin = ZoneInfo("Europe/Berlin")
    start_at = datetime(2026, 3, 27, 12, 0, tzinfo=berlin).timestamp()
    trigger = parse_trigger(cron="0 9 * * *", timezone="Europe/Berlin", now=start_at)
    first = trigger.next_after(start_at)
    assert first is not None
    second = trigger.next_after(first)
    third = trigger.next_after(second)  # type: ignore[arg-type]
    hours = [datetime.fromtimestamp(t, berlin).hour for t in (first, second, third)]  # type: ignore[arg-type]
    assert hours == [9, 9, 9]  # 9:00 local on both sides of the March change
    assert second - first == 23 * 3600 and third - second == 86_400  # type: ignore[operator]


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ({"every": "10s"}, "shorter than the shortest interval allowed, 1m"),
        ({"cron": "* * * *"}, "write five fields"),
        ({"at": "yesterday"}, "not an ISO date-time"),
        ({"at": "2001-01-01T09:00"}, "in the past"),
        ({"every": "1h", "cron": "0 * * * *"}, "give exactly one of"),
        ({"every": "1h", "timezone": "../../etc/passwd"}, "not a known time zone"),
        ({"every": "1h", "timezone": "America"}, "not a known time zone"),  # a folder
        ({"every": "99999999999999999999w"}, "longer than a year and a day"),
        ({"at": "9999-12-31T23:59-12:00"}, "more than a century ahead"),
    ],
)
def test_a_trigger_that_cannot_be_used_says_why(given: dict[str, str], says: str) -> None:
    with pytest.raises(TriggerError, match=says):
        parse_trigger(now=1_800_000_000.0, **given)


@pytest.mark.anyio
async def test_a_schedule_fires_through_the_stack_when_the_clock_says_so(tmp_path: Path) -> None:
    runtime = start(tmp_path)
    try:
        made = await schedule(
            runtime, name="tea", tool="remind", arguments={"text": "tea"}, every="1h"
        )
        due = datetime.fromisoformat(made["next_run_at"]).timestamp()
        clock = Clock(due - 1)
        runner = scheduler(runtime, clock)
        assert await runner.run_due() == []  # not yet
        clock.now = due + 1
        fired = await runner.run_due()
        assert [r.output or r.data for _, r in fired] == ["sent tea"]
        assert await runner.run_due() == []  # each fire once
        clock.now = due + 3600 + 1
        assert len(await runner.run_due()) == 1
        assert SENT == ["tea", "tea"]
        listed = await runtime.provider.execute("list_schedules", {}, runtime.context())
        (info,) = listed.data["schedules"]
        assert info["runs"] == 2 and info["last_status"] == "success"
        assert runtime.audit is not None
        rows = runtime.audit.query(session_id=f"schedule:{made['id']}")
        assert [r.tool_name for r in rows] == ["remind", "remind"]  # History groups them
    finally:
        await runtime.aclose()


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("misfire", "runs", "missed"), [("once", 1, 4), ("all", 5, 0), ("skip", 0, 5)]
)
async def test_missed_fires_follow_the_misfire_policy(
    tmp_path: Path, misfire: str, runs: int, missed: int
) -> None:
    runtime = start(tmp_path, schedules={"misfire": misfire})
    try:
        made = await schedule(runtime, name="n", tool="remind", arguments={"text": "x"}, every="1h")
        due = datetime.fromisoformat(made["next_run_at"]).timestamp()
        clock = Clock(due + 4 * 3600 + 600)  # the server was down for five fires
        assert len(await scheduler(runtime, clock).run_due()) == runs
        (info,) = (await runtime.provider.execute("list_schedules", {})).data["schedules"]
        assert info["missed"] == missed
        assert datetime.fromisoformat(info["next_run_at"]).timestamp() > clock.now
    finally:
        await runtime.aclose()


@pytest.mark.anyio
async def test_an_approved_schedule_carries_its_approval_for_exactly_its_call(
    tmp_path: Path,
) -> None:
    runtime = start(tmp_path)
    try:
        asked = await runtime.provider.execute(
            "schedule_tool_call",
            {"name": "rent", "tool": "pay", "arguments": {"to": "ann", "cents": 5}, "every": "1d"},
            runtime.context(channel="rest"),
        )
        assert asked.error is not None and asked.error.type == "confirmation_required"
        made = await schedule(
            runtime, name="rent", tool="pay", arguments={"to": "ann", "cents": 5}, every="1d"
        )
        due = datetime.fromisoformat(made["next_run_at"]).timestamp()
        ((_, result),) = await scheduler(runtime, Clock(due + 1)).run_due()
        assert result.success and SENT == ["paid ann 5"]  # nobody asked at fire time
        # the store edited behind the tool's back: the approval does not cover other arguments
        store = runtime.services.get(ScheduleStore)
        store._db.execute('UPDATE schedules SET arguments = \'{"to": "eve", "cents": 5000}\'')
        ((_, changed),) = await scheduler(runtime, Clock(due + 86_401)).run_due()
        assert changed.error is not None and changed.error.type == "confirmation_required"
        assert SENT == ["paid ann 5"]
    finally:
        await runtime.aclose()


@pytest.mark.anyio
@pytest.mark.parametrize(
    "where", ["one file", pytest.param("one postgresql", marks=pytest.mark.integration)]
)
async def test_two_schedulers_run_each_fire_once(
    where: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if where == "one file":  # two processes of one data dir
        first, second = start(tmp_path), start(tmp_path)
    else:  # two machines: two data dirs, one database
        shared = {"store": {"url": request.getfixturevalue("postgres_db")}}
        first, second = start(tmp_path / "a", **shared), start(tmp_path / "b", **shared)
    try:
        made = await schedule(first, name="n", tool="remind", arguments={"text": "x"}, every="1h")
        assert [s.name for s in second.services.get(ScheduleStore).owned_by()] == ["n"]
        due = datetime.fromisoformat(made["next_run_at"]).timestamp()
        for hour in range(20):
            clock = Clock(due + hour * 3600 + 1)
            await asyncio.gather(
                scheduler(first, clock).run_due(), scheduler(second, clock).run_due()
            )
        assert SENT == ["x"] * 20
        assert (tmp_path / "schedules.db").exists() == (where == "one file")
    finally:
        await first.aclose()
        await second.aclose()


@pytest.mark.anyio
async def test_a_fire_whose_process_died_runs_once_later(tmp_path: Path) -> None:
    runtime = start(tmp_path)
    try:
        made = await schedule(runtime, name="n", tool="remind", arguments={"text": "x"}, every="1h")
        due = datetime.fromisoformat(made["next_run_at"]).timestamp()
        store = runtime.services.get(ScheduleStore)
        (claimed,) = store.claim_due(due + 1, grace_s=60, stale_s=900)  # then the process died
        runner = scheduler(runtime, Clock(due + 60))
        assert await runner.run_due() == []  # not stale yet: its process may still run it
        runner.clock = Clock(due + 902)
        ((fire, result),) = await runner.run_due()
        assert fire.at == claimed.at and result.success and SENT == ["x"]
        store._db.execute("UPDATE fires SET status = 'claimed', claimed_at = 0")  # died again
        ((_, again),) = await scheduler(runtime, Clock(due + 1000)).run_due()
        assert again.metadata.replay_of is not None  # the receipt answered: not sent twice
        assert SENT == ["x"]
    finally:
        await runtime.aclose()


@pytest.mark.anyio
async def test_what_a_model_cannot_do_with_schedules(tmp_path: Path) -> None:
    runtime = start(tmp_path, schedules={"max_per_user": 2})
    try:
        unattended = runtime.context(user="ann", channel="mcp:s")  # nobody to approve
        asked = await runtime.provider.execute(
            "schedule_tool_call",
            {"name": "a", "tool": "remind", "arguments": {"text": "x"}, "every": "1h"},
            unattended,
        )
        assert asked.error is not None and asked.error.type == "confirmation_required"
        nested = await runtime.provider.execute(
            "schedule_tool_call",
            {"name": "b", "tool": "schedule_tool_call", "every": "1h"},
            runtime.context(user="ann", confirm=approve_all),
        )
        assert nested.error is not None and "cannot call schedule_tool_call" in nested.error.message
        await schedule(runtime, "ann", name="a", tool="remind", arguments={"text": "1"}, every="1h")
        await schedule(runtime, "ann", name="b", tool="remind", arguments={"text": "2"}, every="1h")
        third = await runtime.provider.execute(
            "schedule_tool_call",
            {"name": "c", "tool": "remind", "arguments": {"text": "3"}, "every": "1h"},
            runtime.context(user="ann", confirm=approve_all),
        )
        assert third.error is not None and "the most allowed" in third.error.message
        eve = runtime.context(user="eve")
        seen = await runtime.provider.execute("list_schedules", {}, eve)
        assert seen.data == {"schedules": []}
        gone = await runtime.provider.execute("cancel_schedule", {"name": "a"}, eve)
        assert gone.error is not None and gone.error.type == "not_found"
        mine = await runtime.provider.execute("list_schedules", {}, runtime.context(user="ann"))
        assert [s["name"] for s in mine.data["schedules"]] == ["a", "b"]
    finally:
        await runtime.aclose()


def test_rest_creates_through_an_approval_and_lists_pauses_and_cancels(tmp_path: Path) -> None:
    runtime = start(tmp_path)
    body = {"name": "tea", "tool": "remind", "arguments": {"text": "tea"}, "every": "2h"}
    with TestClient(create_app(runtime), base_url="http://127.0.0.1") as client:
        asked = client.post("/api/schedules", json=body)
        assert asked.json()["error"]["type"] == "confirmation_required"
        approval_id = asked.json()["error"]["details"]["approval_id"]
        assert client.post(f"/api/approvals/{approval_id}/approve", json={}).status_code == 200
        made = client.post("/api/schedules", json=body)
        assert made.status_code == 200, made.text
        assert made.json()["data"]["trigger"] == "every 2h"
        assert [s["name"] for s in client.get("/api/schedules").json()] == ["tea"]
        assert client.post("/api/schedules/tea/pause").json()["paused"] is True
        assert client.post("/api/schedules/nope/pause").status_code == 404
        assert client.post("/api/schedules/tea/resume").json()["paused"] is False
        assert client.delete("/api/schedules/tea").status_code == 200
        assert client.get("/api/schedules").json() == []
        keyed = {**body, "name": "keyed", "arguments": {"text": "sk-" + "a1B2c3D4" * 5}}
        asked = client.post("/api/schedules", json=keyed)
        approval_id = asked.json()["error"]["details"]["approval_id"]
        client.post(f"/api/approvals/{approval_id}/approve", json={})
        assert client.post("/api/schedules", json=keyed).status_code == 200
        (listed,) = client.get("/api/schedules").json()
        assert listed["arguments"]["text"] == "***"  # shown as the approvals API shows it
        assert "a1B2c3D4" not in client.post("/api/schedules/keyed/pause").text
        assert client.delete("/api/schedules/keyed").status_code == 200
        bad = {**body, "every": "often"}
        asked = client.post("/api/schedules", json=bad)  # the person sees the call first
        approval_id = asked.json()["error"]["details"]["approval_id"]
        client.post(f"/api/approvals/{approval_id}/approve", json={})
        refused = client.post("/api/schedules", json=bad)
        assert refused.status_code == 422
        assert "every: 'often' is not an interval" in refused.json()["error"]["message"]


@pytest.mark.integration
def test_on_temporal_each_schedule_is_a_temporal_schedule_fired_by_a_worker(
    tmp_path: Path, temporal_address: str
) -> None:
    """``[runs] engine = "temporal"``: the schedule is mirrored to a Temporal Schedule,
    whose fires run on the worker (here the server's) through the stack; pausing or
    removing it removes the Temporal Schedule, resuming brings it back."""
    import asyncio
    import uuid

    from temporalio.client import Client
    from temporalio.service import RPCError

    from deadlines import wait_until

    queue = f"schedules-{uuid.uuid4().hex[:8]}"
    runtime = start(
        tmp_path,
        runs={"engine": "temporal", "address": temporal_address, "task_queue": queue,
              "worker_in_server": True},
        schedules={"poll_s": 0.5, "min_interval_s": 2},
    )  # fmt: skip
    body = {"name": "tick", "tool": "remind", "arguments": {"text": "tick"}, "every": "2s"}

    def temporal_schedule(schedule_id: str) -> dict[str, Any] | None:
        async def describe() -> dict[str, Any] | None:
            client = await Client.connect(temporal_address)
            handle = client.get_schedule_handle(f"tooldeck-schedule-{queue}-{schedule_id}")
            try:
                found = await handle.describe()
            except RPCError:
                return None
            return {"note": found.schedule.state.note, "actions": found.info.num_actions}

        return asyncio.run(describe())

    with TestClient(create_app(runtime), base_url="http://127.0.0.1") as client:
        asked = client.post("/api/schedules", json=body).json()
        approval_id = asked["error"]["details"]["approval_id"]
        assert client.post(f"/api/approvals/{approval_id}/approve", json={}).status_code == 200
        made = client.post("/api/schedules", json=body)
        assert made.status_code == 200, made.text
        schedule_id = made.json()["data"]["id"]
        wait_until(lambda: temporal_schedule(schedule_id) is not None, "the Temporal Schedule")
        assert temporal_schedule(schedule_id)["note"] == "every 2s: remind (anonymous/tick)"  # type: ignore[index]
        wait_until(lambda: SENT.count("tick") >= 2, "two fires, each from a Temporal Schedule", 30)
        assert temporal_schedule(schedule_id)["actions"] >= 2  # type: ignore[index]
        (listed,) = client.get("/api/schedules").json()
        assert listed["runs"] >= 2 and listed["last_status"] == "success", listed
        records = client.get("/api/audit", params={"tool": "remind"}).json()["records"]
        assert {r["session_id"] for r in records} == {f"schedule:{schedule_id}"}

        assert client.post("/api/schedules/tick/pause").json()["paused"] is True
        wait_until(lambda: temporal_schedule(schedule_id) is None, "the Temporal Schedule to go")
        fired = SENT.count("tick")
        assert client.post("/api/schedules/tick/resume").json()["paused"] is False
        wait_until(lambda: temporal_schedule(schedule_id) is not None, "it back on resume")
        wait_until(lambda: SENT.count("tick") > fired, "a fire after resuming", 30)
        assert client.delete("/api/schedules/tick").status_code == 200
        wait_until(lambda: temporal_schedule(schedule_id) is None, "it gone with the schedule")


@pytest.mark.integration
def test_on_temporal_fires_missed_while_no_worker_ran_follow_the_misfire_policy(
    tmp_path: Path, temporal_address: str
) -> None:
    """Temporal fires on time with no worker up; the fires wait; a worker started later
    runs them, and the store's misfire policy (``once``) runs the latest missed fire
    once rather than each."""
    import asyncio
    import contextlib
    import threading
    import uuid

    from deadlines import wait_until
    from tooldeck.worker.runner import run_worker

    queue = f"schedules-{uuid.uuid4().hex[:8]}"
    settings: dict[str, Any] = {
        "runs": {"engine": "temporal", "address": temporal_address, "task_queue": queue},
        "schedules": {"poll_s": 0.5, "min_interval_s": 2, "grace_s": 1},
    }
    server = start(tmp_path, **settings)
    body = {"name": "tick", "tool": "remind", "arguments": {"text": "late"}, "every": "2s"}
    with TestClient(create_app(server), base_url="http://127.0.0.1") as client:
        approval_id = client.post("/api/schedules", json=body).json()["error"]["details"][
            "approval_id"
        ]
        client.post(f"/api/approvals/{approval_id}/approve", json={})
        assert client.post("/api/schedules", json=body).status_code == 200
        wait_until(lambda: server.services.get(ScheduleStore).owned_by(None), "the schedule")
        asyncio.run(asyncio.sleep(5.5))  # two or three fires start; no worker runs them
        assert SENT == []
        worker = start(tmp_path, **settings)  # a worker comes up, on the same data dir
        loop = asyncio.new_event_loop()
        task = loop.create_task(run_worker(worker))

        def work() -> None:
            with contextlib.suppress(asyncio.CancelledError):  # stopped at the end
                loop.run_until_complete(task)

        thread = threading.Thread(target=work, daemon=True)
        thread.start()
        try:
            wait_until(lambda: SENT != [], "the late fires to run on the worker", 30)
            (listed,) = client.get("/api/schedules").json()
            assert SENT.count("late") == 1, SENT  # once: the latest missed fire only
            assert listed["missed"] >= 1, listed
        finally:
            loop.call_soon_threadsafe(task.cancel)
            thread.join(30)
            loop.run_until_complete(worker.aclose())
            loop.close()
