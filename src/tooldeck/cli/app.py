"""The ``tooldeck`` command: tools, call, chat, mcp, serve (Typer + Rich).

``init``, ``audit``, ``stats`` and ``config`` live in their own modules. What a command
needs beyond Typer, Rich and the core (the runtime, the agent, the audit store, the
packs' settings) is imported when it runs, so ``tooldeck --help`` and a mistyped
option answer at once (``benchmarks/import_time.py``).
"""

from __future__ import annotations

import copy
import json
import socket
import sys
from importlib.metadata import version
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from tooldeck.cli.approvals import approvals_app
from tooldeck.cli.audit import audit_app, stats
from tooldeck.cli.config import config_app
from tooldeck.cli.credentials import credentials_app
from tooldeck.cli.doctor import doctor
from tooldeck.cli.init import init
from tooldeck.cli.shared import (
    ConfigOption,
    ProfileOption,
    ToolsOption,
    WithOption,
    err,
    in_terminal,
    out,
    parse_pairs,
    progress_bar,
    row,
    runtime_for,
    session,
    terminal_confirm,
    with_packs_of,
)
from tooldeck.cli.worker import worker
from tooldeck.core.names import closest_names
from tooldeck.core.result import ToolResult
from tooldeck.core.tool_search import ToolIndex
from tooldeck.exceptions import ToolDeckError
from tooldeck.exporters import FORMATS, export
from tooldeck.packs.loader import pack_commands

if TYPE_CHECKING:
    from tooldeck.agent.contracts import ChatRun
    from tooldeck.config import Settings
    from tooldeck.runtime import Runtime, ToolsReload

__all__ = ["app", "main"]

app = typer.Typer(
    name="tooldeck",
    help="The tool layer for LLM agents: list, call and serve typed tools.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,  # help texts say [agent] and [audit]: print them as written
)


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
    query: Annotated[
        str | None,
        typer.Option(
            "--query", "-q", help="Only the tools that match these words best, best first."
        ),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="Most tools with --query.")] = 10,
    config: ConfigOption = None,
    own_tools: ToolsOption = None,
    with_packs: WithOption = None,
) -> None:
    """List the tools a profile sees, as a table or in a model/client format.

    With --query, only the best matches (BM25 over names, descriptions and parameters:
    what a model's search_tools finds).
    """
    if format not in ("table", "json", *FORMATS):
        err.print(
            f"[red]error:[/red] unknown format {escape(repr(format))}; "
            f"formats: table, json, {', '.join(FORMATS)}"
        )
        raise typer.Exit(2)
    runtime = runtime_for(config, own_tools, audit={"enabled": False}, **with_packs_of(with_packs))

    async def body() -> None:
        view = runtime.view(profile)
        if explain is not None:
            await _explain(runtime, view, explain, profile)
            return
        definitions = await view.all_definitions()
        if query is not None:
            definitions = ToolIndex.of(definitions).search(query, limit)
        if format == "json":
            out.print_json(data=[d.model_dump(mode="json") for d in definitions])
        elif format in FORMATS:
            exported = await view.definitions()
            out.print_json(data=export(exported, format, query=query, limit=limit))
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
                if any(tag.startswith("module:") for tag in d.tags):  # which version serves
                    notes.insert(0, Text(f"module {d.version}"))
                row(
                    table,
                    d.name,
                    d.provider or "",
                    d.description.split("\n")[0],
                    d.source_id or "",
                    Text(", ").join(notes),
                )
            out.print(table)

    session(runtime, body)


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
        row(table, key, json.dumps(value), _origin(runtime, source, key))
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
    idempotency_key: Annotated[
        str | None,
        typer.Option(
            "--idempotency-key",
            help="Run a tool with side effects at most once: repeating the command with "
            "the same key prints the stored result (docs/exactly-once.md).",
        ),
    ] = None,
    config: ConfigOption = None,
    own_tools: ToolsOption = None,
    with_packs: WithOption = None,
) -> None:
    """Call a tool and print its ToolResult; exit code 0 on success, 1 on a tool error.

    An unknown tool is a usage error: the closest names, exit code 2. So is an
    idempotency key that is not 1 to 255 printable ASCII characters.

    A tool needing confirmation is approved by --yes, asked about on a terminal, and
    otherwise answers confirmation_required.
    """
    if args is not None and pairs:
        raise typer.BadParameter("give --args or KEY=VALUE pairs, not both")
    from tooldeck.providers.receipts import key_problem

    problem = None if idempotency_key is None else key_problem(idempotency_key)
    if problem is not None:
        raise typer.BadParameter(problem, param_hint="--idempotency-key")
    arguments: Any = args if args is not None else parse_pairs(pairs or [])
    runtime = runtime_for(config, own_tools, **with_packs_of(with_packs))

    ctx = runtime.context(
        profile=profile,
        channel="cli",
        idempotency_key=idempotency_key,
        confirm=terminal_confirm(yes),
        approve_at=in_terminal(runtime.approve_command(), "tooldeck call"),
    )

    async def body() -> ToolResult:
        view = runtime.view(profile)
        called = arguments
        if pairs:  # read each value as the tool's schema wants it
            found = [d for d in await view.all_definitions() if name in (d.name, *d.aliases)]
            called = parse_pairs(pairs, schema=found[0].input_schema if found else None)
        async with progress_bar(name) as relay:
            return await view.execute(name, called, ctx.derive(event_emitter=relay))

    result = session(runtime, body)
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
    from pydantic import ValidationError

    from tooldeck.agent.contracts import ChatRequest, ConfirmRequest

    params = parse_pairs(param or [], "--param")
    try:
        request = ChatRequest(question=question, profile=profile, account=account, params=params)
    except ValidationError as exc:
        first = exc.errors()[0]
        hint = {"question": "QUESTION", "profile": "--profile", "account": "--account"}
        raise typer.BadParameter(first["msg"], param_hint=hint.get(str(first["loc"][0]))) from None
    runtime = runtime_for(config)
    interactive = yes or sys.stdin.isatty()

    async def body() -> ChatRun:
        runs = runtime.runs
        run = await runs.start(request)  # the local user, as for `tooldeck call`
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
                    await runs.confirm(run.run_id, decision, user=None)
        return await runs.get(run.run_id)

    run = session(runtime, body)
    if as_json:
        out.print_json(run.model_dump_json())
    else:
        _print_run(run)
    if run.state != "completed":
        raise typer.Exit(1)


def _print_run(run: ChatRun) -> None:
    from rich.markdown import Markdown

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
    colour = {"grounded": "green", "quoted": "cyan", "repaired": "yellow"}.get(
        grounding.verdict, "red"
    )
    verdict = (
        "none (a question back states nothing to check)"
        if answer.needs_clarification and not grounding.numbers_checked
        else f"[{colour}]{grounding.verdict}[/{colour}] "
        f"({grounding.numbers_checked} numbers checked)"
    )
    out.print(
        f"\n[bold]Citations:[/bold] {escape(', '.join(answer.citations)) or 'none'}   "
        f"[bold]Grounding:[/bold] {verdict}   "
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
            row(
                table,
                call.name,
                json.dumps(call.arguments),
                call.status if call.status == "success" else Text(str(call.error_type), "red"),
                call.source_id or "",
                f"{call.duration_ms:.1f}",
            )
        out.print(table)


SpecsArgument = Annotated[
    list[str] | None,
    typer.Argument(
        metavar="[TOOLS]...",
        help="Your tools to serve: files (./tools.py), modules or module:object. Named, "
        "they are served alone: add shipped packs with --with.",
    ),
]


def _say_packs(runtime: Runtime) -> None:
    """Which shipped packs are on and why, on stderr (stdout may be an MCP stream)."""
    grouped: dict[str, list[str]] = {}
    for name, state in runtime.packs.items():
        grouped.setdefault(state, []).append(name)
    for state, names in grouped.items():
        err.print(escape(f"tooldeck: packs {state}: {', '.join(names)}"))


ReloadOption = Annotated[
    bool,
    typer.Option(
        "--reload",
        help="Reload your tools when their files change; MCP clients are told "
        "(notifications/tools/list_changed).",
    ),
]


def _reloaded(report: ToolsReload) -> None:
    style = "yellow" if report.errors else "green"
    err.print(f"[{style}]{escape(str(report))}[/{style}]")


@app.command()
def mcp(
    specs: SpecsArgument = None,
    profile: ProfileOption = None,
    config: ConfigOption = None,
    own_tools: ToolsOption = None,
    reload: ReloadOption = False,
    with_packs: WithOption = None,
    search_tools: Annotated[
        bool,
        typer.Option(
            "--search-tools",
            help="Past [agent] defer_tools_over tools, list search_tools and the "
            "always-visible ones; a search adds what it finds ([server] mcp_search_tools).",
        ),
    ] = False,
) -> None:
    """Serve the tools (a profile's view) as an MCP server over stdin/stdout.

    Your own tools, when you name them, are served alone; --with adds shipped packs.
    """
    from tooldeck.server.mcp import serve_stdio

    runtime = runtime_for(config, [*(specs or []), *(own_tools or [])], **with_packs_of(with_packs))
    _say_packs(runtime)
    on_reload = _reloaded if reload else None
    searching = True if search_tools else None  # None: the setting
    session(
        runtime,
        lambda: serve_stdio(runtime, profile, on_reload=on_reload, search_tools=searching),
    )


@app.command()
def serve(
    specs: SpecsArgument = None,
    host: Annotated[str | None, typer.Option(help="Interface to bind (default 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default 8765).")] = None,
    config: ConfigOption = None,
    own_tools: ToolsOption = None,
    reload: ReloadOption = False,
    with_packs: WithOption = None,
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
    runtime = runtime_for(
        config,
        [*(specs or []), *(own_tools or [])],
        check=_port_free,
        server=server,
        **with_packs_of(with_packs),
    )
    if not runtime.mcp:  # every tool is known now: a bad name exits here, not in uvicorn
        from tooldeck.config_names import check_names

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
    _say_packs(runtime)
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
            + f"; audit: {runtime.audit.shown_url if runtime.audit else 'off'}\n"
            f"UI: {base}/tools   API docs: {base}/docs\n"
            f"try: curl -X POST -H 'content-type: application/json' "
            f"{base}/api/tools/execute/{example}"
        )
    )
    log_config = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    log_config["filters"] = {"redact": {"()": "tooldeck.server.http.RedactedAccessLog"}}
    log_config["handlers"]["access"]["filters"] = ["redact"]
    uvicorn.run(
        create_app(runtime, on_reload=_reloaded if reload else None),
        host=s.server.host,
        port=s.server.port,
        log_level="info",
        log_config=log_config,
        access_log=s.server.access_log,
        # on SIGTERM/Ctrl-C, requests still running (an upload) get 3 s, then stop
        timeout_graceful_shutdown=3,
    )


def _port_free(settings: Settings) -> None:
    """Exit 2 when ``server.host:port`` cannot be bound, before anything starts."""
    host, port = settings.server.host, settings.server.port
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        err.print(f"[red]error:[/red] cannot use host {escape(host)}: {escape(str(exc))}")
        raise typer.Exit(2) from None
    family, _, _, _, address = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind(address)
        except OSError as exc:
            err.print(
                f"[red]error:[/red] port {port} on {escape(host)} cannot be used "
                f"({escape(exc.strerror or str(exc))}); try --port {port + 1} "
                f"(make serve PORT={port + 1})"
            )
            raise typer.Exit(2) from None


app.command()(doctor)
app.command()(init)
app.command()(stats)
app.command()(worker)
app.add_typer(approvals_app, name="approvals")
app.add_typer(audit_app, name="audit")
app.add_typer(config_app, name="config")
app.add_typer(credentials_app, name="credentials")

_commands, _broken = pack_commands()  # each pack's own (packs.loader.SHIPPED_COMMANDS, ...)
for _name, _app in _commands.items():
    app.add_typer(_app, name=_name)
for _error in _broken:
    err.print(f"[yellow]warning:[/yellow] {escape(_error.spec)}: {escape(_error.message)}")


def main() -> None:
    """Console-script entry point."""
    app()
