"""``tooldeck doctor``: launch ``tooldeck mcp`` the way a desktop client does, and report.

A desktop MCP client (Claude Desktop, an IDE) starts the server from ``/`` with its own
short ``PATH`` and nothing of the user's shell. ``doctor`` starts it exactly so, with
the official MCP client, lists its tools, and says what it serves and why, which
upstream MCP servers did not start, what the built-in tools may touch, how calls that
need confirmation get answered, and prints the ``mcpServers`` entry to paste, with
absolute paths.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from tooldeck.cli.shared import ConfigOption, ProfileOption, err, out

__all__ = ["DESKTOP_PATH", "doctor"]

DESKTOP_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"
"""The ``PATH`` a desktop client's child gets (no virtualenv, no ``~/.local/bin``)."""


def doctor(
    specs: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[TOOLS]...",
            help="Your tools as tooldeck mcp takes them (./tools.py, a module): checked "
            "with or without a tooldeck.toml.",
        ),
    ] = None,
    config: ConfigOption = None,
    profile: ProfileOption = None,
    with_packs: Annotated[
        list[str] | None,
        typer.Option("--with", help="Shipped packs the client will ask for (as tooldeck mcp)."),
    ] = None,
    timeout_s: Annotated[
        float, typer.Option("--timeout", help="Seconds to wait for the server to answer.")
    ] = 120.0,
) -> None:
    """Start `tooldeck mcp` as a desktop client would (cwd /, a bare PATH) and report.

    Your tools may be named as ``tooldeck mcp`` takes them (``tooldeck doctor ./tools.py``),
    with no tooldeck.toml. Exits 1 when something would fail for the client: neither a
    config nor tools, the server does not start, an MCP server it names is missing, a
    tool failed to load.
    """
    from tooldeck.config import find_config

    found = config or find_config()
    if found is None and not specs:
        err.print(
            "[red]problem:[/red] no tooldeck.toml here or above. A desktop client starts "
            "the server in /, where none is found: name your tools (tooldeck doctor "
            "./tools.py), or run tooldeck init, then pass --config with its absolute path"
        )
        raise typer.Exit(1)
    command = str(Path(sys.executable).parent / "tooldeck")
    args = ["mcp"]
    if found is not None:
        config_file = found.resolve()
        if not config_file.is_file():
            err.print(f"[red]problem:[/red] {escape(str(config_file))} does not exist")
            raise typer.Exit(1)
        args += ["--config", str(config_file)]
        out.print(f"config:  {escape(str(config_file))}")
    args += [_absolute(spec) for spec in specs or ()]
    args += ["--profile", profile] if profile else []
    args += [f"--with={item}" for item in with_packs or ()]
    out.print(f"launch:  cd / && PATH={DESKTOP_PATH} {escape(' '.join([command, *args]))}")
    log: list[str] = []
    try:
        listed = asyncio.run(asyncio.wait_for(_launch(command, args, log), timeout_s))
    except Exception as exc:  # the server died, never answered, or spoke garbage
        why = "no answer within --timeout" if isinstance(exc, TimeoutError) else "it stopped"
        err.print(f"[red]problem:[/red] the server did not answer tools/list ({why})")
        for line in log[-20:]:
            err.print(f"  {escape(line)}")
        raise typer.Exit(1) from None
    problems = _report(listed, log)
    if any(_needs_confirmation(t) for t in listed.get("tools") or []):
        _console_report(found)
    out.print("\npaste into the client's MCP settings (e.g. claude_desktop_config.json):")
    entry = {"mcpServers": {"tooldeck": {"command": command, "args": args}}}
    out.print(json.dumps(entry, indent=2), markup=False, highlight=False)
    if problems:
        err.print(f"[red]{problems} problem(s)[/red]")
        raise typer.Exit(1)


def _absolute(spec: str) -> str:
    """A tool file's spec as an absolute path (the client starts the server in ``/``).

    ``./tools.py`` and ``tools.py:registry`` become absolute; a module (``mypkg.tools``)
    is left as it is.
    """
    path, colon, name = spec.partition(":")
    if path.endswith(".py") or "/" in path or Path(path).exists():
        return str(Path(path).resolve()) + colon + name
    return spec


async def _launch(command: str, args: list[str], log: list[str]) -> dict[str, Any]:
    """``tools/list`` of the server started from ``/`` with ``DESKTOP_PATH``.

    The server's stderr lines are appended to ``log``, also when it fails.
    """
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {"PATH": DESKTOP_PATH, "HOME": os.environ.get("HOME", "/")}
    params = StdioServerParameters(command=command, args=args, cwd="/", env=env)
    with tempfile.TemporaryFile("w+", encoding="utf-8") as stderr:
        try:
            async with Client(stdio_client(params, errlog=stderr)) as client:
                result = await client.list_tools()
        finally:
            stderr.seek(0)
            log.extend(line.rstrip() for line in stderr if line.strip())
    return result.model_dump(mode="json", by_alias=True)


def _report(listed: dict[str, Any], log: list[str]) -> int:
    """Print what the client gets; return how many problems there are."""
    from tooldeck.server.mcp import UNAVAILABLE_SERVERS

    problems = 0
    down: dict[str, str] = ((listed.get("_meta") or {}).get(UNAVAILABLE_SERVERS)) or {}
    for line in log:
        if line.startswith("tooldeck: packs"):
            out.print(escape(line.removeprefix("tooldeck: ")))
        elif line.startswith(("warning:", "error:")) and not any(w in line for w in down.values()):
            problems += 1
            err.print(f"[red]problem:[/red] {escape(line)}")
    tools = listed.get("tools") or []
    names = [tool["name"] for tool in tools]
    out.print(f"tools:   {len(names)}: {escape(', '.join(names)) or 'none'}")
    if not names:
        problems += 1
        err.print("[red]problem:[/red] the client would see no tools")
    for server, why in down.items():
        problems += 1
        err.print(f"[red]problem:[/red] MCP server {escape(server)} did not start: {escape(why)}")
    guarded = [t["name"] for t in tools if _needs_confirmation(t)]
    if guarded:
        out.print(
            f"confirm: {escape(', '.join(guarded))} ask a person first: through the client "
            "when it supports elicitation, else `tooldeck approvals` in a terminal"
        )
    return problems


def _console_report(config_file: Path | None) -> None:
    """Say whether the page URL-mode approval sends a person to is up, and if not how.

    A client that opens pages (MCP URL-mode elicitation) is sent to the project's
    console, ``tooldeck serve``; while it is not running, those calls answer
    ``confirmation_required`` with the terminal command instead (issue 55).
    """
    import httpx

    from tooldeck.config import load_settings
    from tooldeck.server.console_proof import console_of, proves

    try:
        settings = load_settings(config_file)
    except Exception:  # the launch above already said what is wrong with it
        return
    console, port = console_of(settings)

    async def up() -> bool:
        async with httpx.AsyncClient(timeout=2.0) as client:
            return await proves(client, console, port, settings.data_dir)

    serve = "tooldeck serve" + (f" --config {config_file.resolve()}" if config_file else "")
    if asyncio.run(up()):
        out.print(f"approve: clients that open a page are sent to {escape(console)} (up)")
    else:
        out.print(
            f"approve: clients that open a page (URL-mode elicitation) are sent to "
            f"{escape(console)}, which is not running now: start `{escape(serve)}` for them; "
            "until then they get the `tooldeck approvals approve` command"
        )


def _needs_confirmation(tool: dict[str, Any]) -> bool:
    meta = tool.get("_meta") or {}
    return bool(meta.get("requires_confirmation"))
