"""``tooldeck approvals``: decide, from a terminal, the calls that wait for a person.

A stdio MCP client (a desktop app) that cannot ask its user (no elicitation) gets
``confirmation_required`` with this command in the message; the approvals live in the
data dir's ``approvals.db`` that every tooldeck process of that project shares. The
person at the terminal decides as a privileged approver: whoever can run tooldeck on
this data dir can write its files anyway.
"""

from __future__ import annotations

import getpass
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from tooldeck.cli.shared import ConfigOption, err, out, row
from tooldeck.core.confirmation import ConfirmationDecision
from tooldeck.exceptions import ToolDeckError
from tooldeck.providers.approvals import Approval, ApprovalStore, Decider

if TYPE_CHECKING:
    from tooldeck.config import Settings

__all__ = ["approvals_app"]

approvals_app = typer.Typer(
    rich_markup_mode=None,
    help="Calls waiting for a person's approval: list (default), approve, deny, watch.",
    no_args_is_help=False,
)

DataDirOption = Annotated[
    Path | None,
    typer.Option(
        "--data-dir", help="The data dir whose approvals to decide (default: the config's)."
    ),
]


@approvals_app.callback(invoke_without_command=True)
def approvals(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON lines.")] = False,
    config: ConfigOption = None,
    data_dir: DataDirOption = None,
) -> None:
    """List the calls waiting for approval, oldest first."""
    if ctx.invoked_subcommand is not None:
        return
    store = _open(config, data_dir)
    try:
        pending = store.pending()
    finally:
        store.close()
    if as_json:
        for approval in pending:
            typer.echo(json.dumps(approval.as_dict()))
        return
    if not pending:
        err.print("no call is waiting for approval")
        return
    table = Table(title="waiting for approval (oldest first)")
    table.add_column("id", no_wrap=True)
    table.add_column("call", overflow="fold", ratio=3)
    table.add_column("asked by", overflow="fold", ratio=1)
    table.add_column("expires", no_wrap=True)
    for approval in pending:
        request = approval.request
        call = Text(f"{request.tool} {json.dumps(dict(request.arguments))}")
        if request.reason:
            call.append(f"\n{request.reason}", "yellow")
        row(
            table,
            request.approval_id,
            call,
            f"{request.principal} ({request.channel or '-'})",
            _expires(request.expires_at),
        )
    out.print(table)
    err.print(
        "decide: tooldeck approvals approve ID   or   tooldeck approvals deny ID --reason ..."
    )


@approvals_app.command("approve")
def approve(
    approval_id: Annotated[str, typer.Argument(help="The approval id (tooldeck approvals).")],
    arguments: Annotated[
        str | None,
        typer.Option("--arguments", help="Run with these arguments instead (a JSON object)."),
    ] = None,
    config: ConfigOption = None,
    data_dir: DataDirOption = None,
) -> None:
    """Approve one waiting call; the client's repeat of the same call then runs."""
    edited = None
    if arguments is not None:
        try:
            edited = json.loads(arguments)
        except ValueError as exc:
            raise typer.BadParameter(f"not JSON: {exc}", param_hint="--arguments") from None
        if not isinstance(edited, dict):
            raise typer.BadParameter("must be a JSON object", param_hint="--arguments")
    _decide(config, data_dir, approval_id, ConfirmationDecision(approved=True, arguments=edited))


@approvals_app.command("deny")
def deny(
    approval_id: Annotated[str, typer.Argument(help="The approval id (tooldeck approvals).")],
    reason: Annotated[
        str | None, typer.Option("--reason", "-r", help="Why; the model is told.")
    ] = None,
    config: ConfigOption = None,
    data_dir: DataDirOption = None,
) -> None:
    """Deny one waiting call; the model is told, with the reason."""
    _decide(config, data_dir, approval_id, ConfirmationDecision(approved=False, message=reason))


@approvals_app.command("watch")
def watch(
    config: ConfigOption = None,
    data_dir: DataDirOption = None,
) -> None:
    """Ask about each call as it starts waiting (y: approve, n: deny, s: skip); Ctrl-C ends."""
    store = _open(config, data_dir)
    asked: set[str] = set()
    err.print("waiting for calls that need approval (Ctrl-C to stop)")
    try:
        while True:
            for approval in store.pending():
                request = approval.request
                if request.approval_id in asked:
                    continue
                asked.add(request.approval_id)
                out.print(_describe(approval))
                answer = typer.prompt("approve? [y]es / [n]o / [s]kip", default="s").lower()
                if answer[:1] in ("y", "n"):
                    decision = ConfirmationDecision(approved=answer.startswith("y"))
                    _apply(store, request.approval_id, decision)
            time.sleep(0.5)
    except (KeyboardInterrupt, typer.Abort):
        err.print("stopped")
    finally:
        store.close()


def _open(config: Path | None, data_dir: Path | None) -> ApprovalStore:
    """The approval store of the project, with the audit recording each decision."""
    try:
        overrides = {"data_dir": data_dir.resolve()} if data_dir is not None else {}
        from tooldeck.config import load_settings

        settings = load_settings(config, **overrides)
        if not settings.approvals.persist:
            err.print(
                "[red]error:[/red] approvals are kept in the server's memory "
                "([approvals] persist = false): decide them where the call was made "
                "(the console's Approvals page, /api/approvals)"
            )
            raise typer.Exit(2)
        store = ApprovalStore(
            settings.approvals.ttl_s,
            path=settings.data_dir / "approvals.db",
            url=settings.approvals_url,
        )
    except ToolDeckError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(2) from None
    _record_decisions(settings, store)
    return store


def _record_decisions(settings: Settings, store: ApprovalStore) -> None:
    if not settings.audit.enabled:
        return
    from tooldeck.observability.audit import AuditStore

    audit = AuditStore(settings.audit_url)
    store.on_decision(lambda approval: audit.record_decision(approval.as_dict()))


def _decide(
    config: Path | None, data_dir: Path | None, approval_id: str, decision: ConfirmationDecision
) -> None:
    store = _open(config, data_dir)
    try:
        ok = _apply(store, approval_id, decision)
    finally:
        store.close()
    if not ok:
        raise typer.Exit(1)


def _apply(store: ApprovalStore, approval_id: str, decision: ConfirmationDecision) -> bool:
    """Record ``decision``; print what happened. False when it could not be recorded."""
    me = f"terminal:{getpass.getuser()}"
    decision = ConfirmationDecision(
        approved=decision.approved,
        arguments=decision.arguments,
        message=decision.message,
        approver=me,
    )
    try:
        by = Decider(principal=me, channel="cli", privileged=True)
        approval = store.decide(approval_id, decision, by)
    except (KeyError, ValueError) as exc:
        known = ", ".join(a.request.approval_id for a in store.pending()) or "none"
        message = str(exc.args[0]) if exc.args else str(exc)
        err.print(f"[red]error:[/red] {escape(message)} (waiting: {known})")
        return False
    verb = "approved" if approval.status == "approved" else "denied"
    err.print(
        escape(
            f"{verb} {approval.request.tool} ({approval_id}); "
            + (
                "it runs when the client repeats the call"
                if verb == "approved"
                else "the model is told when it repeats the call"
            )
        )
    )
    return True


def _describe(approval: Approval) -> Text:
    request = approval.request
    text = Text()
    text.append(f"{request.tool}", "bold")
    text.append(f" {json.dumps(dict(request.arguments))}\n")
    text.append(
        f"  id {request.approval_id}, asked by {request.principal} on {request.channel or '-'}, "
        f"{_expires(request.expires_at)}"
    )
    if request.reason:
        text.append(f"\n  {request.reason}", "yellow")
    return text


def _expires(expires_at: float) -> str:
    left = max(0, int(expires_at - time.time()))
    return f"in {left // 60} min {left % 60} s" if left else "now"
