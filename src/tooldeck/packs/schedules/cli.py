"""``tooldeck schedule``: add, list, pause, resume, rm and run scheduled tool calls."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from tooldeck.cli.shared import ConfigOption, err, out, row, runtime_for, session

if TYPE_CHECKING:
    from tooldeck.packs.schedules.store import ScheduleStore

__all__ = ["schedule_app"]

schedule_app = typer.Typer(
    rich_markup_mode=None,
    help="Tool calls made later or on a schedule: add, list, pause, resume, rm, run.",
    no_args_is_help=True,
)

AsOption = Annotated[
    str | None, typer.Option("--as", help="Whose schedule (default: anonymous, this machine).")
]


def _store(runtime: Any) -> ScheduleStore:
    from tooldeck.packs.schedules.store import ScheduleStore

    store: ScheduleStore | None = runtime.services.get_optional(ScheduleStore)
    if store is None:
        why = runtime.packs.get("schedules", "off")
        err.print(
            f"[red]error:[/red] the schedules pack is {escape(why)}; turn it on with "
            f"{escape('[schedules] enabled = true')} in tooldeck.toml"
        )
        raise typer.Exit(2)
    return store


@schedule_app.command()
def add(
    name: Annotated[str, typer.Argument(help="Your name for it: morning-news.")],
    tool: Annotated[str, typer.Option("--tool", help="The tool to call.")],
    args: Annotated[str, typer.Option("--args", help="Its arguments, one JSON object.")] = "{}",
    cron: Annotated[
        str | None, typer.Option("--cron", help="Five cron fields: '0 8 * * 1-5'.")
    ] = None,
    every: Annotated[str | None, typer.Option("--every", help="An interval: 1h, 30m.")] = None,
    at: Annotated[
        str | None, typer.Option("--at", help="Once, at an ISO date-time: 2026-12-01T09:00.")
    ] = None,
    tz: Annotated[
        str | None, typer.Option("--tz", help="IANA zone for --cron and --at (default: local).")
    ] = None,
    profile: Annotated[
        str | None, typer.Option("--profile", "-p", help="The view the calls go through.")
    ] = None,
    as_user: AsOption = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Approve without asking.")] = False,
    config: ConfigOption = None,
) -> None:
    """Schedule a tool call; you approve the exact call once (or --yes), then it runs unattended."""
    from tooldeck.core.confirmation import ConfirmationDecision, ConfirmationRequest

    try:
        arguments = json.loads(args)
    except ValueError as exc:
        raise typer.BadParameter(f"not JSON: {exc}", param_hint="--args") from None
    if not isinstance(arguments, dict):
        raise typer.BadParameter("must be a JSON object", param_hint="--args")
    runtime = runtime_for(config)
    _store(runtime)
    request = {"name": name, "tool": tool, "arguments": arguments, "cron": cron, "every": every}
    request |= {"at": at, "timezone": tz}

    def confirm(asked: ConfirmationRequest) -> ConfirmationDecision:
        if yes:
            return ConfirmationDecision(approved=True, approver="cli --yes")
        approved = typer.confirm(
            f"Schedule {tool} with {json.dumps(arguments)} ({cron or every or at})? It will "
            "then run unattended",
            err=True,
        )
        return ConfirmationDecision(approved=approved, approver="cli prompt")

    ctx = runtime.context(
        profile=profile,
        user=as_user,
        channel="cli",
        confirm=confirm if yes or sys.stdin.isatty() else None,
    )
    call = {k: v for k, v in request.items() if v is not None}
    result = session(
        runtime, lambda: runtime.view(profile).execute("schedule_tool_call", call, ctx)
    )
    if result.error is not None:
        err.print(f"[red]error:[/red] {escape(result.error.message)}")
        raise typer.Exit(1)
    data: dict[str, Any] = result.data
    err.print(f"scheduled {escape(name)}: {data['trigger']}, next {data['next_run_at']} (UTC)")
    from tooldeck.packs.schedules.runner import Scheduler

    if runtime.services.get(Scheduler).running() is False:
        err.print(
            f"[yellow]note:[/yellow] no scheduler of this project runs now: {escape(name)} "
            "fires once `tooldeck serve` or `tooldeck schedule run` runs"
        )


@schedule_app.command("list")
def list_(
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
    as_user: AsOption = None,
    everyone: Annotated[bool, typer.Option("--all", help="Every user's schedules.")] = False,
    config: ConfigOption = None,
) -> None:
    """List schedules: what each calls, when it fires next, how its last fire went."""
    runtime = runtime_for(config)
    try:
        schedules = _store(runtime).owned_by(None if everyone else (as_user or "anonymous"))
    finally:
        runtime.close()
    if as_json:
        for schedule in schedules:
            out.print_json(json.dumps(schedule.as_dict()))
        return
    if not schedules:
        err.print("no schedules; add one with `tooldeck schedule add`")
        return
    table = Table("name", "tool", "when", "next (UTC)", "last", "runs")
    for s in schedules:
        info = s.as_dict()
        last = info["last_status"] or "-"
        state = "paused" if s.paused else (info["next_run_at"] or "done")
        row(table, s.name, s.tool, info["trigger"], state, last, str(s.runs))
    out.print(table)


def _pause(name: str, paused: bool, as_user: str | None, config: Path | None) -> None:
    runtime = runtime_for(config)
    try:
        changed = _store(runtime).set_paused(as_user or "anonymous", name, paused, time.time())
    finally:
        runtime.close()
    if changed is None:
        err.print(f"[red]error:[/red] no schedule {escape(name)!r}")
        raise typer.Exit(1)
    err.print(f"{'paused' if paused else 'resumed'} {escape(name)}")


@schedule_app.command()
def pause(
    name: Annotated[str, typer.Argument(help="The schedule.")],
    as_user: AsOption = None,
    config: ConfigOption = None,
) -> None:
    """Stop a schedule from firing until it is resumed."""
    _pause(name, True, as_user, config)


@schedule_app.command()
def resume(
    name: Annotated[str, typer.Argument(help="The schedule.")],
    as_user: AsOption = None,
    config: ConfigOption = None,
) -> None:
    """Let a paused schedule fire again, from its next fire after now."""
    _pause(name, False, as_user, config)


@schedule_app.command()
def rm(
    name: Annotated[str, typer.Argument(help="The schedule.")],
    as_user: AsOption = None,
    config: ConfigOption = None,
) -> None:
    """Remove a schedule (its past fires stay in the audit log)."""
    runtime = runtime_for(config)
    ctx = runtime.context(user=as_user, channel="cli")
    result = session(
        runtime, lambda: runtime.provider.execute("cancel_schedule", {"name": name}, ctx)
    )
    if result.error is not None:
        err.print(f"[red]error:[/red] {escape(result.error.message)}")
        raise typer.Exit(1)
    err.print(f"removed {escape(name)}")


@schedule_app.command()
def run(config: ConfigOption = None) -> None:
    """Run due fires in the foreground until Ctrl-C (what `tooldeck serve` also does).

    With [runs] engine = "temporal" the workers run the fires: this keeps the Temporal
    Schedules in step with the store instead.
    """
    import asyncio

    runtime = runtime_for(config)
    _store(runtime)

    async def forever() -> None:
        temporal = runtime.settings.runs.engine == "temporal"
        doing = "mirroring schedules to Temporal" if temporal else "running schedules"
        err.print(f"{doing}; Ctrl-C stops")
        async with runtime.serving():
            await asyncio.Event().wait()

    session(runtime, forever)
