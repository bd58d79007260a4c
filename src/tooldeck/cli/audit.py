"""``tooldeck audit`` (recent calls, export, prune) and ``tooldeck stats``."""

from __future__ import annotations

import contextlib
import json
import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from tooldeck.cli.shared import ConfigOption, clip, err, out, row, runtime_for

if TYPE_CHECKING:  # imported when a command runs: they bring SQLAlchemy
    from tooldeck.observability.audit import AuditStore
    from tooldeck.runtime import Runtime

GroupBy = Literal["tool", "profile"]
"""``observability.metering.GroupBy``, spelt here: Typer reads it to build ``--by``."""

__all__ = ["audit_app", "stats"]

audit_app = typer.Typer(
    rich_markup_mode=None,
    help="The audit store: recent calls (default), export, prune.",
    no_args_is_help=False,
)

SinceOption = Annotated[
    str | None,
    typer.Option("--since", help="Start: a duration back from now (30m, 24h, 7d) or ISO time."),
]


def _audit_store(runtime: Runtime) -> AuditStore:
    if runtime.audit is None:
        runtime.close()
        err.print(escape("audit is disabled ([audit] enabled = false)"))
        raise typer.Exit(1)
    return runtime.audit


def _when(value: str, option: str = "--since") -> datetime:
    try:
        from tooldeck.observability.metering import parse_since

        return parse_since(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint=option) from None


def _since(value: str | None, option: str = "--since") -> datetime | None:
    return None if value is None else _when(value, option)


@audit_app.callback(invoke_without_command=True)
def audit(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="Records to show.")] = 20,
    tool: Annotated[str | None, typer.Option("--tool", help="Only this tool.")] = None,
    status: Annotated[str | None, typer.Option("--status", help="success or error.")] = None,
    profile: Annotated[
        str | None, typer.Option("--profile", "-p", help="Only this profile.")
    ] = None,
    since: SinceOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON lines.")] = False,
    config: ConfigOption = None,
) -> None:
    """Show recent calls from the audit store, newest first."""
    if ctx.invoked_subcommand is not None:
        return
    if status not in (None, "success", "error"):
        raise typer.BadParameter("status must be 'success' or 'error'", param_hint="--status")
    start = _since(since)
    runtime = runtime_for(config)
    store = _audit_store(runtime)
    try:
        records = store.query(limit=limit, tool=tool, status=status, profile=profile, since=start)
    finally:
        runtime.close()
    if as_json:
        for r in records:
            typer.echo(r.model_dump_json())
        return
    table = Table(title="audit (newest first, UTC)", expand=True)
    table.add_column("time", no_wrap=True)
    table.add_column("tool", overflow="fold", max_width=24)
    table.add_column("ms", no_wrap=True, justify="right")
    table.add_column("call and outcome", overflow="fold", ratio=1, min_width=24)
    for r in records:
        detail = Text(clip(json.dumps(r.arguments), 80))
        if r.error_type:
            detail.append(f"\n{r.error_type}", "red")
            detail.append(f": {clip(r.error_message or '', 100)}")
        else:
            detail.append("\nsuccess", "green")
            if r.source_id:
                detail.append(f" · {r.source_id}")
        row(
            table,
            r.created_at.strftime("%m-%d %H:%M:%S"),
            r.tool_name,
            f"{r.duration_ms:.1f}" if r.duration_ms is not None else "",
            detail,
        )
    out.print(table)


@audit_app.command("export")
def audit_export(
    format: Annotated[
        str, typer.Option("--format", "-f", help="Output format; jsonl: one record per line.")
    ] = "jsonl",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="File to write (default: stdout).")
    ] = None,
    since: SinceOption = None,
    until: Annotated[
        str | None, typer.Option("--until", help="End (exclusive), same forms as --since.")
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Export call records, oldest first, for offline analysis (arguments redacted as stored)."""
    if format != "jsonl":
        raise typer.BadParameter(
            f"unknown format {format!r}; formats: jsonl", param_hint="--format"
        )
    start, end = _since(since), _since(until, "--until")
    try:
        fh = output.open("w", encoding="utf-8") if output else contextlib.nullcontext(sys.stdout)
    except OSError as exc:
        raise typer.BadParameter(
            f"cannot write {output}: {exc.strerror}", param_hint="--output"
        ) from None
    runtime = runtime_for(config)
    store = _audit_store(runtime)
    count = 0
    try:
        with fh as out_file:
            for record in store.export(since=start, until=end):
                out_file.write(record.model_dump_json() + "\n")
                count += 1
    finally:
        runtime.close()
    err.print(escape(f"exported {count} records" + (f" to {output}" if output else "")))


@audit_app.command("prune")
def audit_prune(
    older_than: Annotated[
        str | None,
        typer.Option(
            "--older-than", help="Age such as 30d or 12h; default: [audit] retention_days."
        ),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Delete call records (and decisions) older than an age; /metrics totals are kept."""
    runtime = runtime_for(config)
    retention = runtime.settings.audit.retention_days
    if older_than is None and retention is None:
        runtime.close()
        raise typer.BadParameter(
            "give an age (e.g. 30d) or set [audit] retention_days", param_hint="--older-than"
        )
    cutoff = _when(older_than or f"{retention}d", "--older-than")
    store = _audit_store(runtime)
    try:
        deleted = store.prune(cutoff)
    finally:
        runtime.close()
    err.print(f"deleted {deleted} records older than {cutoff.isoformat(timespec='seconds')}")


def stats(
    since: Annotated[
        str, typer.Option("--since", help="Window start: 30m, 24h, 7d or an ISO time.")
    ] = "24h",
    by: Annotated[GroupBy, typer.Option("--by", help="Group by tool or profile.")] = "tool",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON lines.")] = False,
    config: ConfigOption = None,
) -> None:
    """Calls, errors, total and p50/p95 duration per tool (or profile), from the audit store."""
    start = _when(since)
    runtime = runtime_for(config)
    store = _audit_store(runtime)
    try:
        rows = store.stats(since=start, by=by)
    finally:
        runtime.close()
    if as_json:
        for found in rows:
            typer.echo(found.model_dump_json(exclude={"series"}))
        return
    table = Table(title=f"calls since {start.isoformat(timespec='seconds')} by {by}")
    table.add_column(by)
    for column in ("calls", "errors", "error %", "total ms", "p50 ms", "p95 ms"):
        table.add_column(column, justify="right")
    for r in rows:
        row(
            table,
            r.key or "(none)",
            str(r.calls),
            str(r.errors),
            f"{r.error_rate * 100:.1f}",
            f"{r.total_ms:.1f}",
            f"{r.p50_ms:.2f}" if r.p50_ms is not None else "",
            f"{r.p95_ms:.2f}" if r.p95_ms is not None else "",
        )
    if not rows:
        err.print("no calls in this window")
        return
    out.print(table)
