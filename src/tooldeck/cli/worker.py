"""``tooldeck worker``: execute chat runs from Temporal (``[runs] engine = "temporal"``).

Start as many as the load needs, on any machine that has the same configuration and
reaches the Temporal service and the stores; each polls ``[runs] task_queue``. A
worker killed mid-call loses nothing: Temporal gives the call to another worker, whose
receipt of it answers instead of running a tool with side effects twice.
"""

from __future__ import annotations

import asyncio
import signal

from rich.markup import escape

from tooldeck.cli.shared import (
    ConfigOption,
    ToolsOption,
    WithOption,
    err,
    runtime_for,
    session,
    with_packs_of,
)

__all__ = ["worker"]


def worker(
    config: ConfigOption = None, own_tools: ToolsOption = None, with_packs: WithOption = None
) -> None:
    """Run a Temporal worker for chat runs: agent turns and tool calls, until stopped.

    Needs [runs] engine = "temporal" in the config (the servers' own) and temporalio
    (pip install 'tooldeck[temporal]'). Ctrl-C or SIGTERM stops it after the calls
    under way (5 s at most); exit code 2 when Temporal cannot be reached. Start it
    with the servers' tools and packs (--with schedules when they serve it so): a
    pack's Temporal work (schedules' fires) runs on the workers.
    """
    runtime = runtime_for(config, own_tools, **with_packs_of(with_packs))
    runs = runtime.settings.runs
    if runs.engine != "temporal":
        why = (
            '[runs] engine is "embedded": runs execute inside tooldeck serve. Set [runs] '
            'engine = "temporal" (and address) to use workers'
        )
        err.print(f"[red]error:[/red] {escape(why)}")
        runtime.close()
        raise SystemExit(2)
    try:
        from tooldeck.worker.runner import run_worker
    except ImportError:
        err.print(
            "[red]error:[/red] the worker needs temporalio: "
            + escape("pip install 'tooldeck[temporal]'")
        )
        runtime.close()
        raise SystemExit(2) from None

    def ready() -> None:
        err.print(
            escape(
                f"tooldeck worker: Temporal {runs.address}, namespace {runs.namespace}, "
                f"task queue {runs.task_queue}; {len(runtime.registry.names)} local tools"
                + "".join(f"; {w.__name__}" for w in runtime.workflows)
            )
        )

    async def body() -> None:
        task = asyncio.current_task()
        assert task is not None
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
        try:
            await run_worker(runtime, ready=ready)
        except asyncio.CancelledError:
            err.print("tooldeck worker: stopped")

    session(runtime, body)
