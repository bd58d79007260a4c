"""The ``tooldeck`` command: tools, call, chat, mcp, serve, audit, stats (Typer + Rich)."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import sys
from collections.abc import Awaitable, Callable
from datetime import datetime
from importlib.metadata import version
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markdown import Markdown
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from tooldeck.agent.contracts import ChatRequest, ChatRun, ConfirmRequest
from tooldeck.config import load_settings
from tooldeck.config_names import check_names
from tooldeck.core.confirmation import ConfirmationDecision, ConfirmationRequest
from tooldeck.core.names import closest_names
from tooldeck.core.result import ToolResult
from tooldeck.exceptions import ToolDeckError
from tooldeck.exporters import FORMATS, export
from tooldeck.observability.audit import AuditStore
from tooldeck.observability.metering import GroupBy, parse_since
from tooldeck.runtime import Runtime, build_runtime

__all__ = ["app", "main"]

T = TypeVar("T")

app = typer.Typer(
    name="tooldeck",
    help="The tool layer for LLM agents: list, call and serve typed tools.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,  # help texts say [agent] and [audit]: print them as written
)
# emoji=False: "tool:shell:v1" is a source_id, not the :shell: emoji code. Text that
# comes from tools, users or the audit goes through escape() or Text, never markup.
out = Console(emoji=False)
err = Console(stderr=True, soft_wrap=True, emoji=False)  # paths in errors stay copyable


def _row(table: Table, *cells: str | Text) -> None:
    """Add a row whose plain-string cells are shown exactly as written."""
    table.add_row(*(Text(c) if isinstance(c, str) else c for c in cells))


def _version(value: bool) -> None:
    if value:
        typer.echo(f"tooldeck {version('tooldeck')}")
        raise typer.Exit()


@app.callback()
def _main(
    _: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """The tool layer for LLM agents: list, call and serve typed tools."""


ProfileOption = Annotated[
    str | None,
    typer.Option(
        "--profile", "-p", help="Profile whose view of the tools applies (default: all tools)."
    ),
]
ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config", "-c", help="tooldeck.toml to use (default: ./tooldeck.toml if present)."
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


def _runtime(config: Path | None, tools: list[str] | None = None, **overrides: Any) -> Runtime:
    try:
        settings = load_settings(config, **overrides)
        if tools:  # files are relative to where the command runs
            own = [str(Path(t).resolve()) if t.endswith(".py") or "/" in t else t for t in tools]
            settings = settings.model_copy(update={"tools": [*settings.tools, *own]})
        runtime = build_runtime(settings)
    except ToolDeckError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(2) from None
    for error in runtime.load_errors:
        err.print(f"[yellow]warning:[/yellow] {escape(str(error))}")
    return runtime


def _session(runtime: Runtime, body: Callable[[], Awaitable[T]]) -> T:
    """Run ``body`` in one event loop between ``runtime.start()`` and ``aclose()``.

    MCP sessions belong to the loop that opened them, so start, work and close share
    one ``asyncio.run``. Configuration errors found at start (a tool name clash, an
    unknown profile) exit 2 with the message.
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

    try:
        return asyncio.run(main())
    except ToolDeckError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(2) from None


def _parse_pairs(pairs: list[str], param_hint: str = "ARGS") -> dict[str, Any]:
    arguments: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise typer.BadParameter(
                f"{pair!r} is not key=value (e.g. symbol=AAPL)", param_hint=param_hint
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
    profile: ProfileOption = None,
    explain: Annotated[
        str | None,
        typer.Option(
            "--explain", metavar="NAME", help="Show the policy of one tool and its sources."
        ),
    ] = None,
    config: ConfigOption = None,
    own_tools: ToolsOption = None,
) -> None:
    """List the tools a profile sees, as a table or in a model/client format."""
    if format not in ("table", "json", *FORMATS):
        err.print(
            f"[red]error:[/red] unknown format {escape(repr(format))}; "
            f"formats: table, json, {', '.join(FORMATS)}"
        )
        raise typer.Exit(2)
    runtime = _runtime(config, own_tools, audit={"enabled": False})

    async def body() -> None:
        view = runtime.view(profile)
        if explain is not None:
            await _explain(runtime, view, explain, profile)
            return
        definitions = await view.all_definitions()
        if format == "json":
            out.print_json(data=[d.model_dump(mode="json") for d in definitions])
        elif format in FORMATS:
            out.print_json(data=export(await view.definitions(), format))
        else:
            hidden = view.unavailable()
            title = f"tools (profile {profile})" if profile else "tools (all)"
            table = Table("name", "provider", "description", "source_id", "notes", title=title)
            for d in definitions:
                notes = [Text(k) for k, v in d.annotations.model_dump().items() if v is True]
                if d.requires_confirmation:
                    notes.insert(0, Text("needs confirmation", style="yellow"))
                if d.name in hidden:
                    notes.insert(0, Text(f"unavailable: {hidden[d.name]}", style="red"))
                _row(
                    table,
                    d.name,
                    d.provider or "",
                    d.description.split("\n")[0],
                    d.source_id or "",
                    Text(", ").join(notes),
                )
            out.print(table)

    _session(runtime, body)


async def _explain(runtime: Runtime, view: Any, name: str, profile: str | None) -> None:
    everything = {
        n: d for d in await runtime.policy.all_definitions() for n in (d.name, *d.aliases)
    }
    definition = everything.get(name)
    if definition is None:
        near = closest_names(name, everything)
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        err.print(f"[red]error:[/red] no tool {escape(repr(name))}{escape(hint)}")
        raise typer.Exit(2)
    shown = {d.name: d for d in await view.all_definitions()}
    visible = definition.name in shown
    confirm = visible and shown[definition.name].requires_confirmation
    where = f"profile {profile}" if profile else "no profile (all tools)"
    out.print(
        f"[bold]{escape(definition.name)}[/] from provider "
        f"[bold]{escape(str(definition.provider))}[/] in {escape(where)}: "
        + ("visible" if visible else "[red]hidden (calls answer not_found)[/]")
        + (", [yellow]needs confirmation[/]" if confirm else "")
    )
    table = Table("policy", "value", "set by", title="policy (most specific layer wins)")
    for key, (value, source) in runtime.policy_config.explain(definition, profile).items():
        _row(table, key, json.dumps(value), _origin(runtime, source, key))
    out.print(table)


def _origin(runtime: Runtime, layer: str, key: str) -> str:
    """The policy layer that set ``key``, and the file or variable that set it there."""
    words = layer.split()
    if layer == "tool definition":
        return "the tool's own definition"
    if words[0] == "profile":  # profile P [provider X | tool X]
        path = ["profiles", words[1], "policy"]
        if len(words) == 4:
            path += [f"{words[2]}s", words[3]]
    elif words[0] in ("tool", "provider"):
        path = ["policy", f"{words[0]}s", words[1]]
    else:
        path = ["policy"]
    where = runtime.settings.origin(*path, key)
    if layer == "default":
        return "built-in default" if where == "default" else where
    return layer if where == "default" else f"{layer}: {where}"


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
    profile: ProfileOption = None,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Approve the call if the tool needs confirmation.")
    ] = False,
    config: ConfigOption = None,
    own_tools: ToolsOption = None,
) -> None:
    """Call a tool and print its ToolResult; exit code 0 on success, 1 on a tool error.

    An unknown tool is a usage error: the closest names, exit code 2.

    A tool needing confirmation is approved by --yes, asked about on a terminal, and
    otherwise answers confirmation_required.
    """
    if args is not None and pairs:
        raise typer.BadParameter("give --args or KEY=VALUE pairs, not both")
    arguments: Any = args if args is not None else _parse_pairs(pairs or [])
    runtime = _runtime(config, own_tools)

    def confirm(request: ConfirmationRequest) -> ConfirmationDecision:
        if yes:
            return ConfirmationDecision(approved=True, approver="cli --yes")
        approved = typer.confirm(
            f"{request.tool} needs confirmation. Run it with {json.dumps(dict(request.arguments))}?",
            err=True,
        )
        return ConfirmationDecision(
            approved=approved,
            approver="cli prompt",
            message=None if approved else "declined at the prompt",
        )

    interactive = yes or sys.stdin.isatty()
    ctx = runtime.context(profile=profile, channel="cli", confirm=confirm if interactive else None)

    async def body() -> ToolResult:
        return await runtime.view(profile).execute(name, arguments, ctx)

    result = _session(runtime, body)
    if result.error is not None and result.error.type == "not_found":  # a usage error
        err.print(f"[red]error:[/red] {escape(result.error.message)}")
        raise typer.Exit(2)
    out.print_json(result.model_dump_json())
    if not result.success:
        raise typer.Exit(1)


@app.command()
def chat(
    question: Annotated[str, typer.Argument(help="The question, in quotes.")],
    profile: ProfileOption = None,
    account: Annotated[
        str | None, typer.Option("--account", help="Account to answer about (id or name).")
    ] = None,
    param: Annotated[
        list[str] | None,
        typer.Option(
            "--param",
            help="KEY=VALUE a parameter wins over the question, e.g. the answer to a "
            "clarifying question: --param timeframe=YTD. Repeatable.",
        ),
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Approve tool calls that need confirmation.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the run as JSON.")] = False,
    config: ConfigOption = None,
) -> None:
    """Ask the agent a question: the answer, its citations and grounding, and the tool calls.

    With no [agent] model configured, the deterministic intent router answers. A call
    that needs confirmation is approved by --yes, asked about on a terminal, and
    otherwise denied. Exit code 0 when the run completed, 1 when it failed.
    """
    params = _parse_pairs(param or [], "--param")
    try:
        request = ChatRequest(question=question, profile=profile, account=account, params=params)
    except ValidationError as exc:
        first = exc.errors()[0]
        hint = {"question": "QUESTION", "profile": "--profile", "account": "--account"}
        raise typer.BadParameter(first["msg"], param_hint=hint.get(str(first["loc"][0]))) from None
    runtime = _runtime(config)
    interactive = yes or sys.stdin.isatty()

    async def body() -> ChatRun:
        runs = runtime.runs
        run = await runs.start(request, user="cli")
        with err.status("thinking…") as status:
            async for event in runs.events(run.run_id):
                if event.type == "tool_call.started":
                    status.update(f"calling {event.data['name']}…")
                elif event.type == "run.waiting_input":
                    pending = event.data["pending"]
                    status.stop()
                    approved = yes or (
                        interactive
                        and typer.confirm(
                            f"{pending['tool']} needs confirmation. Run it with "
                            f"{json.dumps(pending['arguments'])}?",
                            err=True,
                        )
                    )
                    if approved:
                        reason = None
                    elif interactive:
                        reason = "declined at the prompt"
                    else:
                        reason = "no terminal to confirm (pass --yes to approve)"
                    status.start()
                    # returns once the run settles; its events wait in the stream
                    decision = ConfirmRequest(approve=approved, message=reason)
                    await runs.confirm(run.run_id, decision, approver="cli")
        return runs.get(run.run_id)

    run = _session(runtime, body)
    if as_json:
        out.print_json(run.model_dump_json())
    else:
        _print_run(run)
    if run.state != "completed":
        raise typer.Exit(1)


def _print_run(run: ChatRun) -> None:
    answer = run.answer
    if answer is None:
        err.print(f"[red]run {run.state}:[/red] {escape(str(run.error))}")
        return
    out.print(Markdown(answer.answer_markdown))
    question = answer.clarifying_question
    if question is not None and question.options:
        out.print(
            escape(
                f"\nOptions ({question.type}): {', '.join(question.options)}\n"
                f"Answer with: --param {question.parameter}=<option>"
            )
        )
    grounding = answer.grounding
    colour = {"grounded": "green", "repaired": "yellow"}.get(grounding.verdict, "red")
    out.print(
        f"\n[bold]Citations:[/bold] {escape(', '.join(answer.citations)) or 'none'}   "
        f"[bold]Grounding:[/bold] [{colour}]{grounding.verdict}[/{colour}] "
        f"({grounding.numbers_checked} numbers checked)   "
        f"[bold]Confidence:[/bold] {answer.confidence:.2f}"
    )
    for finding in grounding.findings:
        out.print(f"  [red]-[/red] {escape(finding.message)}")
    if answer.tool_calls:
        table = Table(
            title=f"Tool calls ({answer.mode}{f': {answer.model}' if answer.model else ''})"
        )
        for column in ("tool", "arguments", "status", "source_id", "ms"):
            table.add_column(column, justify="right" if column == "ms" else "left")
        for call in answer.tool_calls:
            _row(
                table,
                call.name,
                json.dumps(call.arguments),
                call.status if call.status == "success" else Text(str(call.error_type), "red"),
                call.source_id or "",
                f"{call.duration_ms:.1f}",
            )
        out.print(table)


INIT_CONFIG = """\
# tooldeck.toml: found in this folder or any folder above it (or give --config,
# or set TOOLDECK_CONFIG). Every setting: docs/ in the tooldeck repository.

# Your tools: files, modules (mypkg.tools) or objects (mypkg.tools:registry).
tools = ["./tools.py"]

# Call history, runs and metrics live in .tooldeck/ beside this file.
# data_dir = ".tooldeck"

# [server]
# port = 8765                   # tooldeck serve; 127.0.0.1 unless you set host (and api_key)

# [profiles.support]            # a named view: tooldeck call -p support ...
# tools = ["word_count", "get_*"]
# confirm = ["word_count"]      # a human approves each call

# [mcp_servers.time]            # tools of an MCP server join yours
# command = "mcp-server-time"

# [brokerage]
# enabled = false               # the demo brokerage tools
"""

INIT_TOOLS = '''\
"""Your tools: every @tool function here is served by tooldeck (CLI, REST, UI, MCP)."""

from tooldeck import tool


@tool(source_id="tool:words:v1")
def word_count(text: str) -> dict:
    """Count the words and characters of a text.

    Args:
        text: The text to count.
    """
    return {"words": len(text.split()), "characters": len(text)}
'''


@app.command()
def init(
    folder: Annotated[Path, typer.Argument(help="Where to write (default: here).")] = Path(),
    force: Annotated[bool, typer.Option("--force", help="Overwrite existing files.")] = False,
) -> None:
    """Write a commented tooldeck.toml and a tools.py with one example tool.

    Then: tooldeck call word_count text="hello world", or tooldeck serve.
    """
    files = {folder / "tooldeck.toml": INIT_CONFIG, folder / "tools.py": INIT_TOOLS}
    existing = [str(p) for p in files if p.exists()]
    if existing and not force:
        err.print(
            f"[red]error:[/red] {escape(', '.join(existing))} already exist; "
            "pass --force to overwrite"
        )
        raise typer.Exit(2)
    folder.mkdir(parents=True, exist_ok=True)
    for path, text in files.items():
        path.write_text(text)
        err.print(f"wrote {escape(str(path))}")
    err.print(escape('next: tooldeck call word_count text="hello world"   or   tooldeck serve'))


SpecsArgument = Annotated[
    list[str] | None,
    typer.Argument(
        metavar="[TOOLS]...",
        help="Your tools to serve too: files (./tools.py), modules or module:object.",
    ),
]


@app.command()
def mcp(
    specs: SpecsArgument = None,
    profile: ProfileOption = None,
    config: ConfigOption = None,
    own_tools: ToolsOption = None,
) -> None:
    """Serve the tools (a profile's view) as an MCP server over stdin/stdout."""
    from tooldeck.server.mcp import serve_stdio

    runtime = _runtime(config, [*(specs or []), *(own_tools or [])])
    _session(runtime, lambda: serve_stdio(runtime, profile))


@app.command()
def serve(
    specs: SpecsArgument = None,
    host: Annotated[str | None, typer.Option(help="Interface to bind (default 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default 8765).")] = None,
    config: ConfigOption = None,
    own_tools: ToolsOption = None,
    insecure: Annotated[
        bool,
        typer.Option(
            "--insecure",
            help="Serve a non-loopback address without server.api_key (trusted networks only).",
        ),
    ] = False,
) -> None:
    """Start the REST server (tools API, seed endpoints, /healthz)."""
    import uvicorn

    from tooldeck.server.app import check_exposure, create_app

    server = {k: v for k, v in {"host": host, "port": port}.items() if v is not None}
    runtime = _runtime(config, [*(specs or []), *(own_tools or [])], server=server)
    if not runtime.mcp:  # every tool is known now: a bad name exits here, not in uvicorn
        try:
            check_names(runtime.settings, runtime.registry.list_definitions(), ())
        except ToolDeckError as exc:
            runtime.close()
            err.print(f"[red]error:[/red] {escape(str(exc))}")
            raise typer.Exit(2) from None
    exposed = check_exposure(runtime)
    if exposed is not None:
        if not insecure:
            runtime.close()
            err.print(f"[red]error:[/red] refusing to start: {escape(exposed)}")
            raise typer.Exit(2)
        err.print(f"[yellow]warning (--insecure):[/yellow] {escape(exposed)}")
    s = runtime.settings
    base = f"http://{s.server.host}:{s.server.port}"
    names = runtime.registry.names
    example = 'get_positions -d \'{"symbol":"AAPL"}\'' if "get_positions" in names else ""
    if not example and names:
        example = f"{names[0]} -d '{{}}'"
    err.print(
        escape(
            f"tooldeck: config {s.config_file or 'none (defaults)'}; data {s.data_dir}\n"
            f"tools: {len(names)} local"
            + (f" + MCP servers {', '.join(runtime.mcp)} (listed at start)" if runtime.mcp else "")
            + f"; audit: {s.audit_url if runtime.audit else 'off'}\n"
            f"UI: {base}/tools   API docs: {base}/docs\n"
            f"try: curl -X POST -H 'content-type: application/json' "
            f"{base}/api/tools/execute/{example}"
        )
    )
    log_config = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    log_config["filters"] = {"redact": {"()": "tooldeck.server.http.RedactedAccessLog"}}
    log_config["handlers"]["access"]["filters"] = ["redact"]
    uvicorn.run(
        create_app(runtime),
        host=s.server.host,
        port=s.server.port,
        log_level="info",
        log_config=log_config,
    )


audit_app = typer.Typer(
    rich_markup_mode=None,
    help="The audit store: recent calls (default), export, prune.",
    no_args_is_help=False,
)
app.add_typer(audit_app, name="audit")

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
    runtime = _runtime(config)
    store = _audit_store(runtime)
    try:
        records = store.query(limit=limit, tool=tool, status=status, profile=profile, since=start)
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
        _row(
            table,
            r.created_at.strftime("%m-%d %H:%M:%S"),
            r.tool_name,
            Text("success", "green") if r.status == "success" else Text("error", "red"),
            f"{r.duration_ms:.2f}" if r.duration_ms is not None else "",
            r.source_id or "",
            json.dumps(r.arguments)[:60],
            f"{r.error_type}: {r.error_message}"[:60] if r.error_type else "",
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
    runtime = _runtime(config)
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
    runtime = _runtime(config)
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


@app.command()
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
    runtime = _runtime(config)
    store = _audit_store(runtime)
    try:
        rows = store.stats(since=start, by=by)
    finally:
        runtime.close()
    if as_json:
        for row in rows:
            typer.echo(row.model_dump_json(exclude={"series"}))
        return
    table = Table(title=f"calls since {start.isoformat(timespec='seconds')} by {by}")
    table.add_column(by)
    for column in ("calls", "errors", "error %", "total ms", "p50 ms", "p95 ms"):
        table.add_column(column, justify="right")
    for r in rows:
        _row(
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


def main() -> None:
    """Console-script entry point."""
    app()
