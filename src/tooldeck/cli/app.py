"""The ``tooldeck`` command: tools, call, serve, audit (Typer + Rich)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from tooldeck.config import load_settings
from tooldeck.exceptions import ToolDeckError
from tooldeck.exporters import FORMATS, export
from tooldeck.runtime import Runtime, build_runtime

__all__ = ["app", "main"]

app = typer.Typer(
    name="tooldeck",
    help="The tool layer for LLM agents: list, call and serve typed tools.",
    no_args_is_help=True,
    add_completion=False,
)
out = Console()
err = Console(stderr=True, soft_wrap=True)  # paths in errors stay copyable

ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config", "-c", help="tooldeck.toml to use (default: ./tooldeck.toml if present)."
    ),
]


def _runtime(config: Path | None, **overrides: Any) -> Runtime:
    try:
        return build_runtime(load_settings(config, **overrides))
    except ToolDeckError as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None


def _parse_pairs(pairs: list[str]) -> dict[str, Any]:
    arguments: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise typer.BadParameter(
                f"{pair!r} is not key=value (e.g. symbol=AAPL)", param_hint="ARGS"
            )
        try:
            arguments[key] = json.loads(raw)
        except ValueError:
            arguments[key] = raw
    return arguments


@app.command()
def tools(
    format: Annotated[
        str, typer.Option("--format", "-f", help=f"table, json, {', '.join(FORMATS)}")
    ] = "table",
    config: ConfigOption = None,
) -> None:
    """List the tools, as a table or in a model/client format."""
    runtime = _runtime(config, audit={"enabled": False})
    try:
        definitions = asyncio.run(runtime.provider.definitions())
        if format == "table":
            table = Table("name", "description", "source_id", "annotations", title="tools")
            for d in definitions:
                hints = [k for k, v in d.annotations.model_dump().items() if v is True]
                table.add_row(
                    d.name, d.description.split("\n")[0], d.source_id or "", ", ".join(hints)
                )
            out.print(table)
        elif format == "json":
            out.print_json(data=[d.model_dump(mode="json") for d in definitions])
        elif format in FORMATS:
            out.print_json(data=export(definitions, format))
        else:
            err.print(
                f"[red]error:[/red] unknown format {format!r}; formats: table, json, {', '.join(FORMATS)}"
            )
            raise typer.Exit(2)
    finally:
        runtime.close()


@app.command()
def call(
    name: Annotated[str, typer.Argument(help="Tool name.")],
    pairs: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[KEY=VALUE]...", help="Arguments; values are JSON when they parse, else text."
        ),
    ] = None,
    args: Annotated[
        str | None, typer.Option("--args", "-a", help="Arguments as one JSON object.")
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Call a tool and print its ToolResult; exit code 0 on success, 1 on a tool error."""
    if args is not None and pairs:
        raise typer.BadParameter("give --args or KEY=VALUE pairs, not both")
    arguments: Any = args if args is not None else _parse_pairs(pairs or [])
    runtime = _runtime(config)
    try:
        result = asyncio.run(runtime.provider.execute(name, arguments, runtime.context()))
    finally:
        runtime.close()
    out.print_json(result.model_dump_json())
    if not result.success:
        raise typer.Exit(1)


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Interface to bind (default 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default 8765).")] = None,
    config: ConfigOption = None,
) -> None:
    """Start the REST server (tools API, seed endpoints, /healthz)."""
    import uvicorn

    from tooldeck.server.app import create_app

    server = {k: v for k, v in {"host": host, "port": port}.items() if v is not None}
    runtime = _runtime(config, server=server)  # merged into [server] and validated
    s = runtime.settings
    err.print(
        f"tooldeck: {len(runtime.registry.names)} tools; audit: {s.audit_url if runtime.audit else 'off'}\n"
        f"try: curl -X POST http://{s.server.host}:{s.server.port}/api/tools/execute/get_positions "
        "-H 'content-type: application/json' -d '{\"symbol\":\"AAPL\"}'"
    )
    uvicorn.run(create_app(runtime), host=s.server.host, port=s.server.port, log_level="info")


@app.command()
def audit(
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="Records to show.")] = 20,
    tool: Annotated[str | None, typer.Option("--tool", help="Only this tool.")] = None,
    status: Annotated[str | None, typer.Option("--status", help="success or error.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON lines.")] = False,
    config: ConfigOption = None,
) -> None:
    """Show recent calls from the audit store, newest first."""
    if status not in (None, "success", "error"):
        raise typer.BadParameter("status must be 'success' or 'error'", param_hint="--status")
    runtime = _runtime(config)
    try:
        if runtime.audit is None:
            err.print("audit is disabled ([audit] enabled = false)")
            raise typer.Exit(1)
        records = runtime.audit.query(limit=limit, tool=tool, status=status)
    finally:
        runtime.close()
    if as_json:
        for r in records:
            typer.echo(r.model_dump_json())
        return
    table = Table(title="audit (newest first)")
    for column in ("time (UTC)", "tool", "status", "ms"):
        table.add_column(column, no_wrap=True)
    for column in ("source_id", "arguments", "error"):
        table.add_column(column, overflow="fold")
    for r in records:
        table.add_row(
            r.created_at.strftime("%m-%d %H:%M:%S"),
            r.tool_name,
            "[green]success[/]" if r.status == "success" else "[red]error[/]",
            f"{r.duration_ms:.2f}" if r.duration_ms is not None else "",
            r.source_id or "",
            json.dumps(r.arguments)[:60],
            f"{r.error_type}: {r.error_message}"[:60] if r.error_type else "",
        )
    out.print(table)


def main() -> None:
    """Console-script entry point."""
    app()
