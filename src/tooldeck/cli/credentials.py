"""``tooldeck credentials``: store, list and forget users' secrets (never shown).

The secret comes from a prompt that does not echo, or from standard input when it is
not a terminal (``pass show weather | tooldeck credentials set module:weather``); it
is never an argument, where shell history and ``ps`` would keep it.
"""

from __future__ import annotations

import getpass
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from tooldeck.cli.shared import ConfigOption, err, out, row
from tooldeck.core.context import ANONYMOUS
from tooldeck.exceptions import ToolDeckError

if TYPE_CHECKING:
    from tooldeck.core.credentials import CredentialStore

__all__ = ["credentials_app"]

credentials_app = typer.Typer(
    rich_markup_mode=None,
    help="Users' secrets for modules, sources and MCP servers, encrypted at rest.",
    no_args_is_help=True,
)

UserOption = Annotated[
    str,
    typer.Option(
        "--user",
        "-u",
        help="Whose secret (ToolContext.user; 'anonymous': tooldeck call, stdio MCP, a "
        "server without identities).",
    ),
]


def _store(config: Path | None) -> CredentialStore:
    from tooldeck.config import load_settings
    from tooldeck.runtime import open_credentials

    try:
        return open_credentials(load_settings(config))
    except (ToolDeckError, OSError) as exc:
        err.print(f"error: cannot open the credential store: {exc}", markup=False)
        raise typer.Exit(2) from None


@credentials_app.command("set")
def set_(scope: str, user: UserOption = ANONYMOUS, config: ConfigOption = None) -> None:
    """Store the secret of SCOPE (a module id, a source, mcp:<server>) for a user."""
    if sys.stdin.isatty():
        secret = getpass.getpass(f"secret for {scope} ({user}): ")
    else:
        secret = sys.stdin.read().removesuffix("\n")
    if not secret:
        err.print("error: no secret given (nothing was typed or piped in)", markup=False)
        raise typer.Exit(2)
    _store(config).put(user, scope, secret)
    err.print(f"stored {scope} for {user}", markup=False)


@credentials_app.command("list")
def list_(user: UserOption = ANONYMOUS, config: ConfigOption = None) -> None:
    """What a user has stored: scopes and dates, never the values."""
    table = Table("scope", "updated", title=f"credentials of {user}")
    for info in _store(config).scopes(user):
        row(table, info.scope, info.updated_at.isoformat(timespec="seconds"))
    out.print(table)


@credentials_app.command("delete")
def delete(scope: str, user: UserOption = ANONYMOUS, config: ConfigOption = None) -> None:
    """Forget the secret of SCOPE for a user; exits 1 when there was none."""
    if not _store(config).delete(user, scope):
        err.print(f"no credential {scope!r} for {user!r}", markup=False)
        raise typer.Exit(1)
    err.print(f"deleted {scope} for {user}", markup=False)
