"""Every tool name in the configuration is checked against the tools that exist.

A typo in a safety setting must not switch it off silently: ``confirm =
["get_transfer"]`` would leave ``get_transfers`` unguarded. Once the runtime has
listed its tools (local and MCP), ``check_names`` goes through each place the
configuration names a tool, a provider or an MCP server:

- ``profiles.<p>.tools`` (local tools: MCP tools are chosen by ``mcp_servers``,
  whose ids the settings check themselves) and ``profiles.<p>.confirm``;
- ``policy.tools.<name>``, ``policy.providers.<id>``, and the same under each
  profile's ``policy``.

An unknown name is a ``ConfigError`` naming the key and the closest names; a glob
that matches nothing is a warning. While an MCP server is down its tools are unknown,
so a name it might serve is a warning too. (``builtin.disabled`` is checked by the
builtin pack, which knows its tools.)
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from tooldeck.config import Settings
from tooldeck.core.definition import ToolDefinition
from tooldeck.core.names import closest_names
from tooldeck.exceptions import ConfigError
from tooldeck.providers.filtered import compile_globs

__all__ = ["check_names"]

log = logging.getLogger("tooldeck.config")

_GLOB = frozenset("*?[")


@dataclass(frozen=True, slots=True)
class _Known:
    local: frozenset[str]
    everything: frozenset[str]
    mcp_local: frozenset[str]
    """Names of MCP tools (for "that is an MCP tool" in ``profiles.*.tools``)."""
    providers: frozenset[str]
    down: tuple[str, ...]


def _names(d: ToolDefinition) -> tuple[str, ...]:
    return (d.name, *d.aliases)


def check_names(
    settings: Settings,
    definitions: Iterable[ToolDefinition],
    servers: Iterable[str],
    down: Iterable[str] = (),
) -> None:
    """Check every tool, provider and server name the configuration uses.

    Args:
        settings: The configuration.
        definitions: Every tool the runtime serves (``root.all_definitions()``).
        servers: Every configured MCP server id (enabled or not).
        down: Ids of MCP servers that could not list their tools.

    Raises:
        ConfigError: the first unknown name, with its key and the closest names.
    """
    definitions = list(definitions)
    known = _Known(
        local=frozenset(n for d in definitions if d.server_id is None for n in _names(d)),
        everything=frozenset(n for d in definitions for n in _names(d)),
        mcp_local=frozenset(n for d in definitions if d.server_id is not None for n in _names(d)),
        providers=frozenset({"local", *servers}),
        down=tuple(down),
    )
    for profile, config in settings.profiles.items():
        key = f"profiles.{profile}"
        if config.tools is not None:
            _tools(f"{key}.tools", config.tools, known.local, known, local_only=True)
        _tools(f"{key}.confirm", config.confirm, known.everything, known)
        _policy(f"{key}.policy", config.policy.tools, config.policy.providers, known)
    _policy("policy", settings.policy.tools, settings.policy.providers, known)
    flow = settings.flow
    for key in ("private", "untrusted", "public", "egress", "destructive"):
        _tools(f"flow.{key}", getattr(flow, key), known.everything, known)
    for profile, layer in settings.policy.profiles.items():
        _policy(f"policy.profiles.{profile}", layer.tools, layer.providers, known)


def _policy(
    key: str, tools: Mapping[str, object], providers: Mapping[str, object], known: _Known
) -> None:
    for name in tools:
        _tools(f"{key}.tools", [name], known.everything, known)
    for provider in providers:
        _one(f"{key}.providers", provider, known.providers, "provider")


def _tools(
    key: str, names: Iterable[str], pool: frozenset[str], known: _Known, local_only: bool = False
) -> None:
    for name in names:
        if _GLOB & set(name):
            if not any(compile_globs([name]).fullmatch(n) for n in pool):
                log.warning("%s: %r matches no tool", key, name)
            continue
        if name in pool:
            continue
        if local_only and name in known.mcp_local:
            raise ConfigError(
                f"{key}: {name!r} is an MCP tool; a profile chooses MCP tools by server "
                "(profiles.<name>.mcp_servers)"
            )
        if known.down:
            log.warning(
                "%s: no tool %r (it may be served by %s, which is down)",
                key,
                name,
                ", ".join(known.down),
            )
            continue
        _one(key, name, pool, "tool")


def _one(key: str, name: str, pool: frozenset[str], kind: str) -> None:
    if name in pool:
        return
    near = closest_names(name, sorted(pool))
    hint = f"; did you mean {', '.join(repr(n) for n in near)}?" if near else ""
    listed = ", ".join(sorted(pool)) or "none"
    raise ConfigError(f"{key}: unknown {kind} {name!r}{hint} ({kind}s: {listed})")
