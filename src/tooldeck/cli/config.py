"""``tooldeck config show``: the effective settings and where each came from."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import typer
from rich.table import Table

from tooldeck.cli.shared import ConfigOption, err, out, row
from tooldeck.exceptions import ToolDeckError

if TYPE_CHECKING:
    from tooldeck.config import Settings

__all__ = ["config_app"]

config_app = typer.Typer(
    rich_markup_mode=None,
    help="The configuration: what is in effect, and from where.",
    no_args_is_help=True,
)


def _leaves(value: Any, path: tuple[str, ...]) -> list[tuple[tuple[str, ...], Any]]:
    if isinstance(value, dict) and value:
        return [leaf for key, v in value.items() for leaf in _leaves(v, (*path, str(key)))]
    return [(path, value)]


def _origin(settings: Settings, path: tuple[str, ...]) -> str:
    where = settings.origin(*path)
    if path == ("data_dir",) and where == "default" and settings.config_file is not None:
        return f"default: .tooldeck/ beside {settings.config_file}"
    return where


@config_app.command("show")
def show(
    config: ConfigOption = None,
    as_json: bool = typer.Option(False, "--json", help="Print JSON: {key: {value, from}}."),
) -> None:
    """Every setting in effect, and where it came from (file table, variable, default).

    Secrets (API keys, tokens, authorization headers) are shown as ``***``.
    """
    try:
        from tooldeck.config import load_settings

        settings: Settings = load_settings(config)
    except ToolDeckError as exc:
        err.print(f"error: {exc}", markup=False)
        raise typer.Exit(2) from None
    from tooldeck.observability.redact import redact

    data = redact(settings.model_dump(mode="json"))  # api keys, tokens, headers: ***
    rows = [(".".join(p), v, _origin(settings, p)) for p, v in _leaves(data, ())]
    if as_json:
        out.print_json(data={key: {"value": v, "from": where} for key, v, where in rows})
        return
    found = settings.config_file or "none (defaults and environment)"
    table = Table("setting", "value", "from", title=f"tooldeck settings (config file: {found})")
    for key, value, where in rows:
        row(table, key, json.dumps(value), where)
    out.print(table)
