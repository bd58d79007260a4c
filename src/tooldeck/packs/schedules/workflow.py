"""``ScheduleFireWorkflow``: what a Temporal Schedule of a tooldeck schedule starts.

With ``[runs] engine = "temporal"`` each active schedule is a Temporal Schedule
(``packs.schedules.temporal``); when it fires, it starts this workflow, which runs the
activity ``tooldeck.schedules.fire`` on a worker: the due fires are claimed in the
schedule store and run through the owner's view of the tools, as the in-process
scheduler does. Deterministic; imports nothing of tooldeck (the workflow sandbox).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy

__all__ = ["FIRE", "FIRE_ACTIVITY", "ScheduleFireWorkflow"]

FIRE = "tooldeck.schedules.fire"
"""The workflow type a schedule's Temporal Schedule starts."""
FIRE_ACTIVITY = "tooldeck.schedules.fire_due"
"""Activity: claim and run the due fires (``TemporalSchedules.fire_due``)."""
FIRE_TIMEOUT = timedelta(hours=1)
"""The fires' calls together (each tool's own policy bounds its call)."""
HEARTBEAT = timedelta(seconds=30)
"""A worker that dies mid-fire is noticed after this; another claims what it left."""


@workflow.defn(name=FIRE)
class ScheduleFireWorkflow:
    """Runs the activity once; its result is ``{"fired": n}``."""

    @workflow.run
    async def run(self, schedule_id: str) -> dict[str, Any]:
        """Fire the schedule ``schedule_id`` (and any other fire due by then)."""
        result: dict[str, Any] = await workflow.execute_activity(
            FIRE_ACTIVITY,
            schedule_id,
            start_to_close_timeout=FIRE_TIMEOUT,
            heartbeat_timeout=HEARTBEAT,
            retry_policy=RetryPolicy(maximum_attempts=3),
        )
        return result
