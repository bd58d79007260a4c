"""How ``build_runtime`` sets up packs: their tables, their tools, profiles and defaults.

Every pack (shipped, a user's file, an installed entry point) goes through ``PackSetup``
in order; whether a shipped pack is on, and why, is decided here and said at start.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from tooldeck.config import ProfileConfig, Settings
from tooldeck.core.context import ServiceContainer
from tooldeck.core.intents import IntentPack, IntentPacks
from tooldeck.core.names import closest_names
from tooldeck.core.pack import ConsolePage, Pack, PackRoutes, ResourceSource
from tooldeck.core.tool import Tool
from tooldeck.exceptions import ConfigError, ToolDeckError
from tooldeck.packs.loader import LoadError
from tooldeck.providers.policy import PolicyConfig, PolicyOverride

__all__ = ["RESERVED_PAGES", "PackSetup", "with_pack_profiles", "with_policy_defaults"]

RESERVED_PAGES = frozenset(
    {"t", "chat", "runs", "history", "metrics", "approvals", "static", "pack"}
)
"""The console's own paths under ``/tools/``: no pack page may take them."""
_PAGE_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")


class PackSetup:
    """Sets packs up in order, collecting their tools, answers and policy defaults."""

    def __init__(self, settings: Settings, services: ServiceContainer) -> None:
        self.settings = settings
        self.services = services
        self.names: list[str] = []
        self.tools: list[Tool] = []
        self.tools_of: dict[str, list[str]] = {}
        """Each pack's tool names (what a reload replaces)."""
        self.reloaders: dict[str, Callable[[], Sequence[Tool]]] = {}
        """The packs whose tools can be loaded anew (``PackParts.reload``)."""
        self.intent_packs: list[IntentPack] = []
        self.example_packs: list[IntentPack] = []
        """The answers of packs on with example data nobody asked for (``IntentPacks``)."""
        self.policy_defaults: dict[str, Mapping[str, Any]] = {}
        self.profiles: dict[str, Mapping[str, Any]] = {}
        self.routes: list[Callable[[], PackRoutes]] = []
        """Each pack's REST routes, made when a server starts."""
        self.console: list[ConsolePage] = []
        """Each pack's console pages (names unique)."""
        self.background: list[Callable[[], Coroutine[Any, Any, None]]] = []
        """Each pack's work while a server runs (``PackParts.background``)."""
        self.resources: list[ResourceSource] = []
        """The packs' MCP resources (``PackParts.resources``)."""
        self.workflows: list[type] = []
        self.activities: list[Callable[..., Any]] = []
        """The packs' Temporal workflows and activities (``PackParts.workflows``)."""
        self.states: dict[str, str] = {}
        """Each shipped pack: ``on`` or ``off`` and why, and what it reaches; a user's
        pack when it says what it reaches (``Runtime.packs``)."""

    def add(self, pack: Pack, errors: list[LoadError], *, shipped: bool = False) -> None:
        """Validate the pack's table and set it up (``shipped``: it comes with tooldeck).

        A pack of another package whose ``setup`` fails with anything but a
        ``ToolDeckError`` becomes a load error (the rest starts), as an import error does.

        Raises:
            ConfigError: the pack's table is invalid, or two packs share a name.
            ToolDeckError: what the pack's ``setup`` raised (a bad data file, a typo).
        """
        if pack.name in self.names:
            raise ConfigError(f"two packs are named {pack.name!r}; pack names must be unique")
        self.names.append(pack.name)
        try:
            parts = pack.setup(self._config(pack), self.services)
        except ToolDeckError:
            raise
        except Exception as exc:
            errors.append(LoadError(f"pack {pack.name}", f"{type(exc).__name__}: {exc}"))
            return
        self.tools.extend(parts.tools)
        self.tools_of[pack.name] = [tool.definition.name for tool in parts.tools]
        if parts.reload is not None:
            self.reloaders[pack.name] = parts.reload
        if parts.reaches:
            state = self.states.get(pack.name, "on" if shipped else "on (your pack)")
            self.states[pack.name] = f"{state}; reaches {'; '.join(parts.reaches)}"
        if parts.answers is not None:
            self.intent_packs.append(parts.answers)
            if self.states.get(pack.name) == f"on ({_EXAMPLE_ON})":
                self.example_packs.append(parts.answers)
        for name, fields in parts.policy_defaults.items():
            self.policy_defaults.setdefault(name, fields)
        for name, profile in parts.profiles.items():
            self.profiles.setdefault(name, profile)
        if parts.routes is not None:
            self.routes.append(parts.routes)
        if parts.background is not None:
            self.background.append(parts.background)
        self.resources.extend(parts.resources)
        self.workflows.extend(parts.workflows)
        self.activities.extend(parts.activities)
        taken = {page.name for page in self.console} | RESERVED_PAGES
        for page in parts.console:
            if page.name in taken or not _PAGE_NAME.match(page.name):
                raise ConfigError(
                    f"pack {pack.name!r}: console page {page.name!r} is taken or not a plain "
                    f"name (lower case, digits, - and _); taken: {', '.join(sorted(taken))}"
                )
            self.console.append(page)

    @property
    def answers(self) -> IntentPack | None:
        """What answers chat questions without a model, or None.

        The packs' intents together: each question goes to the pack that claims it most.

        Raises:
            ConfigError: two packs declare an intent of the same name.
        """
        if len(self.intent_packs) <= 1:
            return self.intent_packs[0] if self.intent_packs else None
        try:
            return IntentPacks(self.intent_packs, self.example_packs)
        except ValueError as exc:  # two packs declare one intent
            raise ConfigError(f"packs {', '.join(self.names)}: {exc}") from None

    def check_tables(self) -> None:
        """Every ``[packs.<name>]`` table names a loaded pack.

        Raises:
            ConfigError: the unknown table, and the packs that exist.
        """
        for name in self.settings.packs:
            if name not in self.names:
                near = closest_names(name, self.names)
                hint = f" (did you mean {near[0]!r}?)" if near else ""
                raise ConfigError(
                    f"[packs.{name}]: no pack named {name!r}{hint}; "
                    f"loaded packs: {', '.join(self.names) or 'none'}"
                )

    def _config(self, pack: Pack) -> Any:
        """The pack's validated table: a shipped pack's own field, else ``[packs.<name>]``."""
        own = type(self.settings).model_fields.get(pack.name)
        if (
            own is not None
            and pack.config_model is not None
            and own.annotation is pack.config_model
        ):
            config = self.settings.pack_table(pack.name)
            on, why = _shipped_default(pack.name, config, self.settings)
            self.states[pack.name] = f"{'on' if on else 'off'} ({why})"
            return config if on == config.enabled else config.model_copy(update={"enabled": on})
        table = self.settings.packs.get(pack.name, {})
        if pack.config_model is None:
            if table:
                raise ConfigError(f"[packs.{pack.name}]: the pack takes no configuration")
            return None
        try:
            return pack.config_model.model_validate(table)
        except ValidationError as exc:
            raise ConfigError(f"[packs.{pack.name}]: {exc}") from None


def _shipped_default(name: str, config: Any, settings: Settings) -> tuple[bool, str]:
    """Whether a shipped pack is on, and why (issue 26: your own tools are served alone).

    Asked for in its table (``[builtin] enabled = true``, ``--with builtin``, or any
    setting of the table, such as ``[context.finance]``), it is on as said. Otherwise,
    when the project has tools of its own of any kind (``tools = [...]``, ``tooldeck mcp
    ./tools.py``, MCP servers, OpenAPI imports; issue 55), the shipped packs stay off: a
    desktop model is not handed ``python``, ``shell`` and a demo portfolio it would
    report as the user's. The example data (``brokerage`` without a ``data_path``) is on
    only when the configuration names no data of the user's own (issue 54: example
    figures never answer for the user).
    """
    if "enabled" in config.model_fields_set:
        return config.enabled, "as its table says (or --with)"
    if config.model_fields_set:
        return True, "its table is configured"
    own = _own_tools(settings)
    if own:
        return (
            False,
            f"your own tools are served alone ({', '.join(own)}); add one with --with NAME",
        )
    if name == "brokerage" and getattr(config, "data_path", None) is None:
        data = _own_data(settings)
        if data:
            return False, f"example data, off beside your {', '.join(data)} (--with brokerage)"
        return True, _EXAMPLE_ON
    return True, "the default when no tools of your own are named"


_EXAMPLE_ON = "example data (a demo portfolio), on when nothing else is configured"
"""Why the brokerage pack is on by default: its answers then never answer for data of the
user's own (``IntentPacks``: documents added after start are such data)."""


def _own_tools(settings: Settings) -> list[str]:
    """The kinds of tools of the project's own, in words; empty: none."""
    kinds = [("tools files", settings.tools), ("MCP servers", settings.all_mcp_servers()),
             ("OpenAPI imports", settings.openapi)]  # fmt: skip
    return [word for word, named in kinds if named]


def _own_data(settings: Settings) -> list[str]:
    """What the configuration names of the user's own, in words; empty: nothing.

    Its own tools (``_own_tools``) and the ``[context]`` sources (``finance``,
    ``calendar``...).
    """
    own = _own_tools(settings)
    context = settings.pack_table("context")  # {} without the context pack
    categories = ("finance", "calendar", "tasks", "weather", "commute")
    sources = [c for c in categories if getattr(context, c, None) is not None]
    if getattr(context, "dashboard_url", None):
        sources.append("dashboard")
    if sources:
        own.append(f"[context] sources ({', '.join(sources)})")
    return own


def with_pack_profiles(
    settings: Settings, offered: Mapping[str, Mapping[str, Any]], loaded: set[str]
) -> Settings:
    """``settings`` with the packs' profiles the configuration does not define.

    A pack profile keeps only the tools that loaded (``rag`` without the built-in tools
    has no ``python``), so that it never names a tool that does not exist.
    """
    added = {}
    for name, fields in offered.items():
        if name in settings.profiles:
            continue
        tools = fields.get("tools")
        kept = {**fields, "tools": [t for t in tools if t in loaded]} if tools else fields
        added[name] = ProfileConfig.model_validate(kept)
    if not added:
        return settings
    return settings.model_copy(update={"profiles": {**added, **settings.profiles}})


def with_policy_defaults(
    config: PolicyConfig, defaults: Mapping[str, Mapping[str, Any]]
) -> PolicyConfig:
    """``config`` with the packs' per-tool defaults under what the configuration sets."""
    if not defaults:
        return config
    tools = dict(config.tools)
    for name, fields in defaults.items():
        own = tools.get(name)
        values = own.model_dump(exclude_unset=True) if own is not None else {}
        tools[name] = PolicyOverride(**{**fields, **values})
    return config.model_copy(update={"tools": tools})
