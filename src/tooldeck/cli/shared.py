"""What every ``tooldeck`` command shares: the consoles, options, and the runtime session."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from tooldeck.core.names import closest_names
from tooldeck.exceptions import ToolDeckError
from tooldeck.packs.loader import SHIPPED_PACK_NAMES, is_file_spec

if TYPE_CHECKING:  # imported when a command runs: the settings bring every pack's models
    from rich.progress import TaskID

    from tooldeck.config import Settings
    from tooldeck.core.confirmation import ConfirmationDecision, ConfirmationRequest
    from tooldeck.core.context import ToolEvent
    from tooldeck.core.pack import PackEnvironment
    from tooldeck.core.progress import EventRelay
    from tooldeck.runtime import Runtime

__all__ = [
    "ConfigOption",
    "ProfileOption",
    "ToolsOption",
    "WithOption",
    "clip",
    "err",
    "in_terminal",
    "out",
    "pack_settings",
    "parse_pairs",
    "progress_bar",
    "row",
    "runtime_for",
    "session",
    "terminal_confirm",
    "with_packs_of",
]

T = TypeVar("T")

# emoji=False: "tool:shell:v1" is a source_id, not the :shell: emoji code. Text that
# comes from tools, users or the audit goes through escape() or Text, never markup.
out = Console(emoji=False)
err = Console(stderr=True, soft_wrap=True, emoji=False)  # paths in errors stay copyable


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, an ellipsis marking the cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def row(table: Table, *cells: str | Text) -> None:
    """Add a row whose plain-string cells are shown exactly as written."""
    table.add_row(*(Text(c) if isinstance(c, str) else c for c in cells))


ProfileOption = Annotated[
    str | None,
    typer.Option(
        "--profile", "-p", help="Profile whose view of the tools applies (default: all tools)."
    ),
]
ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config",
        "-c",
        help="tooldeck.toml to use (default: the nearest tooldeck.toml here or above).",
    ),
]


ToolsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--tools",
        "-t",
        help="Your tools: a file (./tools.py), a module or module:object; repeatable. "
        "Added to tools = [...] of tooldeck.toml.",
    ),
]


def runtime_for(
    config: Path | None,
    tools: list[str] | None = None,
    *,
    check: Callable[[Settings], None] | None = None,
    **overrides: Any,
) -> Runtime:
    """The runtime of ``config`` plus ``tools`` (files resolved from the current folder).

    ``check(settings)`` runs before the runtime is built (which loads every pack), so a
    command can refuse early (``serve`` on a port in use).

    Exits 2 on a configuration error; tools that failed to load are printed as warnings.
    """
    try:
        from tooldeck.config import load_settings
        from tooldeck.runtime import build_runtime

        settings = load_settings(config, **overrides)
        if check is not None:
            check(settings)
        if tools:  # files are relative to where the command runs
            own = [str(Path(t).resolve()) if is_file_spec(t) else t for t in tools]
            settings = settings.model_copy(update={"tools": [*settings.tools, *own]})
        runtime = build_runtime(settings)
    except ToolDeckError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(2) from None
    for error in runtime.load_errors:
        err.print(f"[yellow]warning:[/yellow] {escape(str(error))}")
    return runtime


def pack_settings(config: Path | None, pack: str) -> tuple[Any, PackEnvironment]:
    """A pack's table and where its state lives, for a command the pack adds.

    A shipped pack's table is its top-level one (``[knowledge]``), validated; an
    installed pack's is ``[packs.<name>]`` as written (its ``config_model`` validates it).
    Exits 2 on a configuration error, said in one line.
    """
    from tooldeck.core.pack import PackEnvironment

    try:
        from tooldeck.config import load_settings

        settings = load_settings(config)
    except ToolDeckError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(2) from None
    table = settings.pack_table(pack)
    folder = settings.config_file.parent if settings.config_file else None
    return table, PackEnvironment(settings.data_dir, folder, settings.store.url)


def terminal_confirm(yes: bool) -> Callable[[ConfirmationRequest], ConfirmationDecision] | None:
    """How a command has a person approve a tool call that needs confirmation.

    ``yes`` (``--yes``) approves; on a terminal, a prompt on stderr asks with the call's
    arguments; otherwise None: the call answers ``confirmation_required`` (approved
    elsewhere, ``in_terminal``).
    """
    from tooldeck.core.confirmation import ConfirmationDecision

    def confirm(request: ConfirmationRequest) -> ConfirmationDecision:
        if yes:
            return ConfirmationDecision(approved=True, approver="cli --yes")
        why = f" {request.reason}" if request.reason else ""
        approved = typer.confirm(
            f"{request.tool} needs confirmation.{why} Run it with "
            f"{json.dumps(dict(request.arguments))}?",
            err=True,
        )
        return ConfirmationDecision(
            approved=approved,
            approver="cli prompt",
            message=None if approved else "declined at the prompt",
        )

    return confirm if yes or sys.stdin.isatty() else None


def in_terminal(command: str | None, what: str) -> str:
    """Where a person approves a call of ``what`` (``tooldeck call``) that could not ask."""
    again = f"repeat this {what} with --yes"
    return f"run {command}, or {again}" if command else again


def session(runtime: Runtime, body: Callable[[], Awaitable[T]]) -> T:
    """Run ``body`` in one event loop between ``runtime.start()`` and ``aclose()``.

    MCP sessions belong to the loop that opened them, so start, work and close share
    one ``asyncio.run``. Configuration errors found at start (a tool name clash, an
    unknown profile) exit 2 with the message.

    Ctrl-C cancels the work (an async tool is cancelled, a sandboxed one's processes
    are killed) and the runtime closes; then the process says ``cancelled`` and exits
    130 at once, the audit flushed, without waiting for a tool thread that cannot be
    stopped. A second Ctrl-C skips the closing.
    """

    async def main() -> T:
        try:
            await runtime.start()
            for provider in runtime.mcp.values():
                if provider.last_error:
                    err.print(f"[yellow]warning:[/yellow] {escape(provider.last_error)}")
            return await body()
        finally:
            await runtime.aclose()

    runner = asyncio.Runner()
    try:
        return runner.run(main())
    except ToolDeckError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        err.print("[yellow]cancelled[/yellow] (Ctrl-C)")
        if runtime.audit is not None:
            runtime.audit.flush()  # what was answered is kept; nothing else waits
        sys.stderr.flush()
        sys.stdout.flush()
        os._exit(130)
    finally:  # not reached after os._exit: a tool thread is not waited for
        runner.close()


@contextlib.asynccontextmanager
async def progress_bar(label: str) -> AsyncIterator[EventRelay | None]:
    """A progress bar on the terminal, fed by a call's ``ctx.report_progress``.

    Yields the ``event_emitter`` to give the call: its reports move a Rich bar on
    stderr (``label: message``, done/total, elapsed), drawn from the first report and
    gone when the call ends, so stdout keeps only the result. Off a terminal (stderr
    piped to a file, CI) yields None: nothing is drawn.
    """
    if not err.is_terminal:
        yield None
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    from tooldeck.core.progress import EventRelay, progress_data

    bar = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    )
    shown: list[TaskID] = []

    async def show(event: ToolEvent) -> None:
        report = progress_data(event)
        if report is None:
            return
        done, total, message = report
        if not shown:
            bar.start()
            shown.append(bar.add_task(escape(label), total=total))
        text = escape(f"{label}: {message}" if message else label)
        bar.update(shown[0], completed=done, total=total, description=text)

    relay = EventRelay(show)
    try:
        yield relay
    finally:
        await relay.aclose()
        bar.stop()


def parse_pairs(
    pairs: list[str], param_hint: str = "ARGS", schema: dict[str, Any] | None = None
) -> dict[str, Any]:
    """``["k=v", ...]`` as arguments; a value is JSON when it parses, else text.

    With the tool's input ``schema``, a value whose property takes text only stays
    text (``isbn=9780134685991`` is the string, not a number); JSON is read only
    where the schema wants a number, a boolean, an object or an array.

    Raises:
        typer.BadParameter: a pair without ``=`` or a key.
    """
    properties = (schema or {}).get("properties") or {}
    arguments: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise typer.BadParameter(
                f"{pair!r} is not key=value (e.g. symbol=AAPL)", param_hint=param_hint
            )
        if _text_only(properties.get(key)):
            arguments[key] = raw
            continue
        try:
            arguments[key] = json.loads(raw)
        except ValueError:
            arguments[key] = raw
    return arguments


def _text_only(schema: Any) -> bool:
    """Whether a property's JSON Schema accepts strings and nothing JSON would give."""
    if not isinstance(schema, dict):
        return False
    types: set[str] = set()
    for option in (schema, *schema.get("anyOf", ()), *schema.get("oneOf", ())):
        kind = option.get("type") if isinstance(option, dict) else None
        types.update([kind] if isinstance(kind, str) else kind or ())
    return "string" in types and not types & {"number", "integer", "boolean", "object", "array"}


WithOption = Annotated[
    list[str] | None,
    typer.Option(
        "--with",
        metavar="PACKS",
        help=f"Shipped packs to serve beside your own tools ({', '.join(SHIPPED_PACK_NAMES)}); "
        "comma-separated or repeated.",
    ),
]


def with_packs_of(packs: list[str] | None) -> dict[str, Any]:
    """``--with builtin,knowledge`` as settings overrides (``[builtin] enabled = true``).

    Raises:
        typer.BadParameter: a name that is not a shipped pack, with the closest.
    """
    overrides: dict[str, Any] = {}
    for name in (n.strip() for item in packs or () for n in item.split(",") if n.strip()):
        if name not in SHIPPED_PACK_NAMES:
            near = closest_names(name, list(SHIPPED_PACK_NAMES))
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise typer.BadParameter(
                f"no shipped pack {name!r}{hint}; packs: {', '.join(SHIPPED_PACK_NAMES)}",
                param_hint="--with",
            )
        overrides[name] = {"enabled": True}
    return overrides
