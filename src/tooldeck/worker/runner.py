"""``run_worker``: a Temporal worker that executes runs with a tooldeck runtime.

``tooldeck worker`` calls it; so does ``tooldeck serve`` when ``[runs]
worker_in_server`` is true. The worker polls ``[runs] task_queue`` for ``RunWorkflow``
tasks and its activities, which use the runtime's tools, profiles, policies,
approvals, receipts and audit: a call made by a worker is recorded and guarded as one
made through REST or MCP.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING

from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from tooldeck.worker.activities import RunActivities
from tooldeck.worker.engine import connect
from tooldeck.worker.workflow import RunWorkflow

if TYPE_CHECKING:
    from tooldeck.runtime import Runtime

__all__ = ["run_worker"]

MAX_CONCURRENT_ACTIVITIES = 64
"""Tool calls and agent turns one worker runs at once (each tool's own
``max_concurrency`` policy still applies)."""


async def run_worker(runtime: Runtime, *, ready: Callable[[], None] | None = None) -> None:
    """Poll the task queue until cancelled; then finish what runs and return.

    Args:
        runtime: The worker's runtime, built from the servers' configuration.
        ready: Called once the worker polls (a CLI prints that it is up).

    Raises:
        RunEngineError: Temporal cannot be reached.
    """
    config = runtime.settings.runs
    client = await connect(config)
    activities = RunActivities(runtime)
    # the workflow module imports only temporalio and the standard library; tooldeck
    # itself is passed through rather than re-imported for each run in the sandbox
    runner = SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_modules("tooldeck")
    )
    worker = Worker(
        client,
        task_queue=config.task_queue,
        workflows=[RunWorkflow, *runtime.workflows],  # and the packs' (PackParts)
        activities=[
            activities.run_turn,
            activities.tool_call,
            activities.record_run,
            *runtime.activities,
        ],
        workflow_runner=runner,
        max_concurrent_activities=MAX_CONCURRENT_ACTIVITIES,
        graceful_shutdown_timeout=_GRACE,
        # a worker killed with SIGKILL keeps its runs' queries on its own queue until
        # this passes; then another worker answers them
        sticky_queue_schedule_to_start_timeout=timedelta(seconds=2),
    )
    async with worker:
        if ready is not None:
            ready()
        await asyncio.Event().wait()  # until cancelled; leaving the block shuts down


_GRACE = timedelta(seconds=5)
"""Activities still running when the worker stops get this long to finish."""
