"""Schedules as Temporal Schedules, with ``[runs] engine = "temporal"``.

The schedule store stays the record of every schedule and of each fire (its claims make
each fire run once, its misfire policy decides what a late fire does), and the store's
trigger stays the one definition of when a schedule fires (cron fields read by
``cronsim`` in the schedule's time zone, intervals, one ``at``). Temporal provides the
rest: a durable timer that fires whether or not any tooldeck server runs, each fire's
history, and the schedules in its UI.

Each active schedule (not paused, with a next fire) has a Temporal Schedule
``tooldeck-schedule-<task queue>-<id>`` whose spec is one point in time: the store's
``next_run_at``, in UTC, to the second; its note says the rule (``every 1h: send_report
(ann/report)``). When it fires, Temporal starts ``ScheduleFireWorkflow`` on the task
queue; a worker's activity ``fire_due`` claims and runs the due fires through the
owner's view of the tools (``Scheduler.run_due``), then moves every Temporal Schedule to
its schedule's new next fire. A next fire already past when it is mirrored (Temporal or
the workers were away) is triggered at once, and the misfire policy applies.

Servers (and ``tooldeck mcp``) reconcile every ``[schedules] poll_s``, and at once when a
schedule is added in that process: a schedule added, paused, resumed or removed anywhere
(``tooldeck schedule`` writes the store) reaches Temporal within ``poll_s``; the Temporal
Schedule of a paused or removed one is deleted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from datetime import UTC, datetime, timedelta
from typing import Any

from temporalio import activity
from temporalio.client import (
    Client,
    Schedule,
    ScheduleActionStartWorkflow,
    ScheduleAlreadyRunningError,
    ScheduleCalendarSpec,
    ScheduleOverlapPolicy,
    SchedulePolicy,
    ScheduleRange,
    ScheduleSpec,
    ScheduleState,
    ScheduleUpdate,
)
from temporalio.service import RPCError, RPCStatusCode

from tooldeck.core.pack import TemporalAccess
from tooldeck.core.periodic import periodically
from tooldeck.exceptions import RunEngineError, StoreUnavailableError
from tooldeck.packs.schedules.runner import Scheduler
from tooldeck.packs.schedules.store import Schedule as StoredSchedule
from tooldeck.packs.schedules.store import ScheduleStore
from tooldeck.packs.schedules.workflow import FIRE, FIRE_ACTIVITY, HEARTBEAT

__all__ = ["TemporalSchedules"]

log = logging.getLogger("tooldeck.schedules")

_SKEW_S = 10.0
"""A fire Temporal starts up to this early by this worker's clock waits for it."""
_CATCH_UP = timedelta(days=365)
"""Fires Temporal missed while it was down are still started (the misfire policy decides)."""


class TemporalSchedules:
    """Keeps a Temporal Schedule per active schedule and runs its fires (module docstring).

    Args:
        store: The schedules.
        scheduler: Runs due fires (``run_due``) and is woken when one is added.
        temporal: The ``[runs]`` service and task queue.
        poll_s: Longest time between two reconciliations, in seconds.
    """

    def __init__(
        self,
        store: ScheduleStore,
        scheduler: Scheduler,
        temporal: TemporalAccess,
        *,
        poll_s: float,
    ) -> None:
        self.store = store
        self.scheduler = scheduler
        self.temporal = temporal
        self.poll_s = poll_s
        self.prefix = f"tooldeck-schedule-{temporal.task_queue}-"
        """The ids of this deployment's Temporal Schedules (one namespace may hold several)."""
        self._client: Client | None = None
        self._mirrored: dict[str, int] = {}
        """Temporal Schedule id → the fire time (Unix s) this process last gave it."""
        self._lock = asyncio.Lock()
        self._failing = False

    async def serve(self) -> None:
        """Reconcile until cancelled (``PackParts.background``); a failure is logged once."""
        while True:
            try:
                await self.sync()
                self._failing = False
            except (RunEngineError, RPCError, StoreUnavailableError) as exc:
                if not self._failing:
                    log.warning("schedules: cannot mirror them to Temporal (%s); trying again", exc)
                self._failing = True
            except Exception:
                log.exception("schedules: mirroring them to Temporal failed; trying again")
            await self.scheduler.nap(self.poll_s)

    async def sync(self) -> None:
        """Make Temporal's schedules match the store's active ones.

        Raises:
            RunEngineError: Temporal cannot be reached.
            RPCError: Temporal refused a change.
            StoreUnavailableError: the schedule store's database cannot be reached.
        """
        async with self._lock:
            client = await self._connect()
            stored = await asyncio.to_thread(self.store.owned_by, None)
            wanted = {
                self.prefix + s.id: s for s in stored if not s.paused and s.next_run_at is not None
            }
            now = self.scheduler.clock()
            for sid, schedule in wanted.items():
                at = math.ceil(schedule.next_run_at or 0.0)
                if self._mirrored.get(sid) != at:
                    await self._put(client, sid, schedule, at, due=at <= now + 1)
                    self._mirrored[sid] = at
            listed = {
                found.id
                async for found in await client.list_schedules()
                if found.id.startswith(self.prefix)
            }
            for sid in listed - set(wanted):  # read again: another replica may have added it
                fresh = await asyncio.to_thread(self.store.by_id, sid.removeprefix(self.prefix))
                if fresh is None or fresh.paused or fresh.next_run_at is None:
                    with contextlib.suppress(RPCError):  # deleted by another replica meanwhile
                        await client.get_schedule_handle(sid).delete()
            for sid in set(self._mirrored) - (set(wanted) & listed):
                del self._mirrored[sid]  # gone, or not listed yet (visibility lags): put again

    @activity.defn(name=FIRE_ACTIVITY)
    async def fire_due(self, schedule_id: str) -> dict[str, Any]:
        """Run the due fires (``schedule_id``'s and any other), then move the timers on.

        Returns:
            ``{"fired": n}``: the fires this call ran.
        """
        schedule = await asyncio.to_thread(self.store.by_id, schedule_id)
        if schedule is not None and schedule.next_run_at is not None:
            early = schedule.next_run_at - self.scheduler.clock()
            if 0 < early <= _SKEW_S:  # Temporal's clock runs ahead of this machine's
                await asyncio.sleep(early)
        async with periodically(HEARTBEAT.total_seconds() / 3, activity.heartbeat):
            fired = await self.scheduler.run_due()
        try:
            await self.sync()
        except Exception as exc:  # the servers' reconciliation does it within poll_s
            log.warning("schedules: the next fires were not given to Temporal: %s", exc)
        return {"fired": len(fired)}

    async def _connect(self) -> Client:
        if self._client is None:
            self._client = await self.temporal.connect()
        return self._client

    async def _put(
        self, client: Client, sid: str, schedule: StoredSchedule, at: int, *, due: bool
    ) -> None:
        """Create or update the Temporal Schedule ``sid`` to fire at ``at``; now if ``due``."""
        timer = Schedule(
            action=ScheduleActionStartWorkflow(
                FIRE, schedule.id, id=sid, task_queue=self.temporal.task_queue
            ),
            spec=ScheduleSpec(calendars=[_calendar(at)], time_zone_name="UTC"),
            policy=SchedulePolicy(
                overlap=ScheduleOverlapPolicy.ALLOW_ALL, catchup_window=_CATCH_UP
            ),
            state=ScheduleState(
                note=f"{schedule.trigger.describe()}: {schedule.tool} "
                f"({schedule.owner}/{schedule.name})"
            ),
        )
        try:
            await client.create_schedule(sid, timer, trigger_immediately=due)
            return
        except ScheduleAlreadyRunningError:
            pass
        handle = client.get_schedule_handle(sid)
        await handle.update(lambda _: ScheduleUpdate(schedule=timer))
        if due:
            try:
                await handle.trigger()
            except RPCError as exc:
                if exc.status != RPCStatusCode.NOT_FOUND:  # removed meanwhile
                    raise


def _calendar(at: int) -> ScheduleCalendarSpec:
    """The one moment ``at`` (Unix s) as a calendar spec in UTC."""
    moment = datetime.fromtimestamp(at, UTC)

    def only(value: int) -> tuple[ScheduleRange, ...]:
        return (ScheduleRange(value),)

    return ScheduleCalendarSpec(
        second=only(moment.second),
        minute=only(moment.minute),
        hour=only(moment.hour),
        day_of_month=only(moment.day),
        month=only(moment.month),
        year=only(moment.year),
    )
