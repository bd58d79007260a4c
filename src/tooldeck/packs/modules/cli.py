"""``tooldeck modules``: list, new, edit, validate, diff, install, rollback, disable, enable.

A person's way to the modules without a model (issue 55). Reading (``list``, ``diff``)
reads the modules folder; every change goes through the ``module_admin`` tool of a
runtime with ``[packs.modules] admin = true`` for this command only, so the admins list,
confirmation (``--yes``, else a prompt on the terminal) and the audit apply as for any
call. A running ``tooldeck serve`` or ``tooldeck mcp`` of the project serves the change
within ``WATCH_S`` seconds (``pack.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import click
import typer
from rich.markup import escape
from rich.table import Table

from tooldeck.cli.shared import (
    ConfigOption,
    err,
    in_terminal,
    out,
    pack_settings,
    row,
    runtime_for,
    session,
    terminal_confirm,
)
from tooldeck.exceptions import ToolFailure

if TYPE_CHECKING:
    from tooldeck.core.result import ToolResult
    from tooldeck.packs.modules.versions import ModuleVersions

__all__ = ["modules_app"]

modules_app = typer.Typer(
    rich_markup_mode=None,
    help="Modules (tools written as code, served sandboxed): list, new, edit, validate, "
    "diff, install, rollback, disable, enable.",
    no_args_is_help=True,
)

ModuleArgument = Annotated[str, typer.Argument(help="The module's id (e.g. weather).")]
DraftOption = Annotated[
    str | None, typer.Option("--draft", help="The draft's id (default: the newest).")
]
YesOption = Annotated[bool, typer.Option("--yes", "-y", help="Approve without asking.")]

STARTER = {
    "module.toml": 'name = "{id}"\ndescription = "What {id} does (say it here)"\n',
    "tools.py": '''from pydantic import Field

from tooldeck import tool


@tool
def {id}_hello(name: str = Field(examples=["Ada"])) -> dict:
    """Greets someone by name (replace with your tool)."""
    return {{"greeting": f"Hello, {{name}}"}}
''',
}
"""A new module's files when ``new`` is given no folder: one tool that validates."""


def _versions(config: Path | None) -> ModuleVersions:
    from tooldeck.packs.modules.versions import ModuleVersions

    _, environment = pack_settings(config, "modules")
    return ModuleVersions(environment.data_dir / "modules")


def _admin(config: Path | None, action: str, yes: bool = False, **arguments: Any) -> dict[str, Any]:
    """Run ``module_admin``'s ``action``; its data, or exit 1 with the error said.

    The runtime is the project's with ``[packs.modules] admin = true`` merged in (the
    rest of the table as written); a configuration error exits 2.
    """
    runtime = runtime_for(config, packs={"modules": {"admin": True}})
    ctx = runtime.context(
        channel="cli",
        confirm=terminal_confirm(yes),
        approve_at=in_terminal(runtime.approve_command(), "tooldeck modules command"),
    )

    async def body() -> ToolResult:
        return await runtime.provider.execute("module_admin", {"action": action, **arguments}, ctx)

    result = session(runtime, body)
    if not result.success:
        assert result.error is not None
        err.print(f"[red]error ({result.error.type}):[/red] {escape(result.error.message)}")
        raise typer.Exit(1)
    return dict(result.data or {})


@modules_app.command("list")
def list_modules(config: ConfigOption = None) -> None:
    """Each module: its active version, its tools and what it says it does."""
    from tooldeck.packs.modules.runner import served_summary

    versions = _versions(config)
    table = Table("module", "active", "tools", "description", "drafts")
    for module_id in versions.modules():
        about, tools = served_summary(versions.root, module_id)
        active = versions.active(module_id) or "none (disabled or not installed)"
        drafts = ", ".join(versions.drafts(module_id))
        row(table, module_id, active, ", ".join(tools), about, drafts)
    if not table.rows:
        out.print("no modules yet: `tooldeck modules new NAME` starts one")
        return
    out.print(table)


@modules_app.command()
def new(
    module_id: ModuleArgument,
    source: Annotated[
        Path | None,
        typer.Argument(help="A folder with module.toml and tools.py (default: a starter)."),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Start a draft: of a new module (from SOURCE or a starter), or a copy of an installed one."""
    versions = _versions(config)
    files: dict[str, str] | None = None
    if source is not None:
        if not source.is_dir():
            raise typer.BadParameter(f"{source} is not a folder", param_hint="SOURCE")
        files = {
            str(p.relative_to(source)): p.read_text(encoding="utf-8")
            for p in sorted(source.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts
        }
    elif module_id not in versions.modules():
        files = {name: text.format(id=module_id) for name, text in STARTER.items()}
    done = _admin(config, "create_draft", module_id=module_id, files=files or {})
    folder = versions.draft_path(module_id, done["draft_id"])
    out.print(f"draft {done['draft_id']} of {module_id}: edit its files in {folder}")
    out.print(f"then: tooldeck modules validate {module_id}; tooldeck modules install {module_id}")


@modules_app.command()
def edit(
    module_id: ModuleArgument,
    file: Annotated[str, typer.Argument(help="The file in the draft, e.g. tools.py.")],
    source: Annotated[
        Path | None, typer.Option("--from", help="Copy this file's content (default: $EDITOR).")
    ] = None,
    draft: DraftOption = None,
    config: ConfigOption = None,
) -> None:
    """Write one file of a draft, from --from or in your editor (its validation is dropped)."""
    versions = _versions(config)
    draft_id = _draft(versions, module_id, draft)
    if source is not None:
        if not source.is_file():
            raise typer.BadParameter(f"{source} is not a file", param_hint="--from")
        content = source.read_text(encoding="utf-8")
    else:
        current = versions.draft_path(module_id, draft_id) / file
        before = current.read_text(encoding="utf-8") if current.is_file() else ""
        edited = click.edit(before, extension=Path(file).suffix or ".txt")
        if edited is None or edited == before:
            out.print("unchanged")
            return
        content = edited
    _admin(
        config, "edit_draft", module_id=module_id, draft_id=draft_id, file_path=file,
        content=content,
    )  # fmt: skip
    out.print(f"wrote {file} of draft {draft_id}")


@modules_app.command()
def validate(
    module_id: ModuleArgument, draft: DraftOption = None, config: ConfigOption = None
) -> None:
    """Check a draft: static checks, then in the sandbox its import, tests and one call per tool."""
    draft_id = _draft(_versions(config), module_id, draft)
    done = _admin(config, "validate_draft", module_id=module_id, draft_id=draft_id)
    for check in done.get("checks", []):
        mark = "[green]passed[/green]" if check.get("passed") else "[red]FAILED[/red]"
        out.print(f"{mark} {escape(str(check.get('name')))}")
        if not check.get("passed") and check.get("output"):
            out.print(escape(str(check["output"]))[:2000])
    if not done.get("passed"):
        err.print(f"[red]draft {draft_id} did not pass[/red]")
        raise typer.Exit(1)
    out.print(f"draft {draft_id} passed: tooldeck modules install {module_id}")


@modules_app.command()
def diff(module_id: ModuleArgument, draft: DraftOption = None, config: ConfigOption = None) -> None:
    """The unified diff from the active version to the draft."""
    versions = _versions(config)
    try:
        text = versions.diff_draft(module_id, _draft(versions, module_id, draft))
    except ToolFailure as exc:  # no such module or draft, said with the ones there are
        err.print(f"[red]error:[/red] {escape(exc.message)}")
        raise typer.Exit(2) from None
    out.print(escape(text) or "no difference", highlight=False)


@modules_app.command()
def install(
    module_id: ModuleArgument, draft: DraftOption = None, yes: YesOption = False,
    config: ConfigOption = None,
) -> None:  # fmt: skip
    """Install a validated draft as the active version (a person approves)."""
    draft_id = _draft(_versions(config), module_id, draft)
    done = _admin(config, "promote_draft", yes, module_id=module_id, draft_id=draft_id)
    out.print(f"{module_id} {done['version_id']} is active")


@modules_app.command()
def rollback(
    module_id: ModuleArgument,
    version: Annotated[str, typer.Argument(help="An installed version (tooldeck modules list).")],
    yes: YesOption = False,
    config: ConfigOption = None,
) -> None:
    """Make an installed version the active one again (a person approves)."""
    _admin(config, "rollback_version", yes, module_id=module_id, target_version_id=version)
    out.print(f"{module_id} {version} is active")


@modules_app.command()
def disable(module_id: ModuleArgument, config: ConfigOption = None) -> None:
    """Stop serving a module; its versions stay (enable serves it again)."""
    done = _admin(config, "disable", module_id=module_id)
    out.print(f"{module_id} disabled" if done.get("disabled") else f"{module_id} was not served")


@modules_app.command()
def enable(module_id: ModuleArgument, yes: YesOption = False, config: ConfigOption = None) -> None:
    """Serve a disabled module again, the version it had (a person approves)."""
    done = _admin(config, "enable", yes, module_id=module_id)
    out.print(f"{module_id} {done['version_id']} is active")


def _draft(versions: ModuleVersions, module_id: str, draft: str | None) -> str:
    """``draft``, else the module's newest; exits 2 when it has none."""
    if draft is not None:
        return draft
    try:
        return versions.latest_draft(module_id)
    except ToolFailure as exc:
        err.print(f"[red]error:[/red] {escape(exc.message)}")
        raise typer.Exit(2) from None
