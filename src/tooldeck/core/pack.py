"""A pack: tools of one domain, with their configuration and what it adds to each entry point.

The shipped packs (``brokerage``, ``builtin``, ``knowledge``, ``context``, ``modules``)
and installed ones (the ``tooldeck.packs`` entry-point group, ``packs.loader``) plug in
the same way, so the runtime, the server and the CLI name no pack: the runtime validates
the pack's table with ``config_model``, calls ``setup`` once and registers what comes
back; the server serves its ``routes`` and ``console`` pages; the CLI adds its
``commands`` (declared without importing the pack, so ``tooldeck --help`` stays fast).
Like a pytest or Datasette plugin, a pack contributes through these hooks only.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel

from tooldeck.core.context import ServiceContainer
from tooldeck.core.definition import ToolDefinition
from tooldeck.core.intents import IntentPack
from tooldeck.core.tool import Tool

__all__ = [
    "ConsolePage",
    "Pack",
    "PackEnvironment",
    "PackParts",
    "PackReloader",
    "PackRoutes",
    "ResourceSource",
    "TemporalAccess",
]


@dataclass(frozen=True, slots=True)
class PackEnvironment:
    """Where a pack keeps its state: a service every runtime registers before ``setup``."""

    data_dir: Path
    """The project's data folder (``.tooldeck/`` beside the config, or the user's)."""
    config_dir: Path | None = None
    """The folder of the configuration file, None without one: a pack's relative paths
    and folder defaults are taken from it, not from wherever the process started (a
    desktop client starts servers in ``/``)."""
    store_url: str | None = None
    """``[store] url``: the PostgreSQL every replica shares, for a pack's state that
    replicas must see alike (schedules); None: keep it in ``data_dir``."""
    temporal: TemporalAccess | None = None
    """How to reach Temporal when ``[runs] engine = "temporal"`` (a pack's timed work
    then runs as Temporal Schedules and activities on the workers); None: embedded."""


@dataclass(frozen=True, slots=True)
class TemporalAccess:
    """The Temporal service of ``[runs]``, for a pack that schedules work on it."""

    connect: Callable[[], Awaitable[Any]]
    """Returns a connected ``temporalio.client.Client`` (raises ``RunEngineError``
    when the service cannot be reached)."""
    task_queue: str
    """The queue the workers poll (``[runs] task_queue``): workflows a pack starts go there."""


@dataclass(frozen=True, slots=True)
class PackRoutes:
    """What a pack serves over HTTP (``PackParts.routes`` makes it when a server starts)."""

    routers: Sequence[Any]
    """FastAPI ``APIRouter`` objects, under ``/api/...``; like every ``/api`` route they
    need ``server.api_key`` when one is set, and are behind the request guard."""
    body_limits: Mapping[str, int] = field(default_factory=dict)
    """Paths whose request bodies may exceed ``server.max_body_bytes``: path → bytes (a
    path ending in ``/`` covers every path under it)."""
    openapi: Callable[[dict[str, Any], Sequence[ToolDefinition]], None] | None = None
    """Amends the OpenAPI document once it is built (given the local tools' definitions)."""


@dataclass(frozen=True, slots=True)
class ConsolePage:
    """A page of the console at ``/tools/<name>``, rendered in the browser by ``script``.

    The script is an ES module whose default export is ``async (element, ctx) => {}``:
    it fills ``element``; ``ctx`` has ``api(path, {method, body, query})``,
    ``detail(data)`` (an error body as text) and ``state`` (the chosen profile). It may
    import the console's helpers (``/tools/static/dom.js``: ``h`` builds elements and
    sets text as text nodes). Served with the console's Content-Security-Policy.
    """

    name: str
    """The page's path segment and its id in the navigation (``documents``)."""
    title: str
    """Its label in the navigation."""
    script: Path
    """The ES module's file."""


class ResourceSource(Protocol):
    """Resources a pack publishes to MCP clients (``resources/list``, ``resources/read``).

    Listed in a view only when it includes one of ``tools`` (the knowledge pack's
    documents go with its document tools: a profile without them sees none). ``viewer``
    is the caller's principal; a source shows each caller only what that caller may
    read (a user's own notes to that user alone).
    """

    prefix: str
    """The URIs the source answers (``tooldeck://documents/``)."""
    tools: frozenset[str]
    """The pack's tools the resources go with."""

    def list(self, viewer: str | None) -> list[dict[str, Any]]:
        """MCP ``Resource`` objects (wire JSON: ``uri``, ``name``, ``mimeType``, ...)."""
        ...

    def read(self, uri: str, viewer: str | None) -> dict[str, Any] | None:
        """One resource's contents (``{"uri", "mimeType", "text"}``).

        None: no such resource, or not ``viewer``'s to read.
        """
        ...


@dataclass(frozen=True, slots=True)
class PackParts:
    """What a pack contributes to a runtime."""

    tools: Sequence[Tool] = ()
    """Registered in the local registry (names must be unique across packs)."""
    answers: IntentPack | None = None
    """Answers chat questions without a model (the intent router), and derives the
    figures the grounding validator accepts; None: the pack has no chat intents."""
    policy_defaults: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Per-tool policy fields (``PolicyOverride`` names, e.g. ``{"python":
    {"breaker_enabled": False}}``) used where the configuration sets none."""
    profiles: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Profiles the pack offers (``ProfileConfig`` fields, e.g. ``{"rag": {"tools":
    [...]}}``), added unless the configuration defines one of the same name; tools
    that are not loaded (a pack disabled) are left out of them."""
    reaches: Sequence[str] = ()
    """What the pack's tools may touch, in words (``"files under /home/ann/project"``):
    said on start and by ``tooldeck doctor``, so a user sees it before a model does."""
    reload: Callable[[], Sequence[Tool]] | None = None
    """Loads the pack's tools anew (installed modules: the versions now active); the
    runtime swaps them in when ``PackReloader.reload_pack`` is called. None: the pack's
    tools change only with a restart."""
    routes: Callable[[], PackRoutes] | None = None
    """Its REST routes, made when a server starts (the CLI and ``tooldeck mcp`` never
    import FastAPI for them)."""
    console: Sequence[ConsolePage] = ()
    """Its pages in the console (``/tools``)."""
    workflows: Sequence[type] = ()
    """Temporal workflow classes the pack's work runs as, registered by every worker
    (``tooldeck worker``, or the server's with ``[runs] worker_in_server``). Their
    module may import only ``temporalio`` and the standard library at its top (the
    workflow sandbox); tooldeck itself is passed through."""
    activities: Sequence[Callable[..., Any]] = ()
    """Temporal activities (``@activity.defn`` callables) the workers register with them."""
    resources: Sequence[ResourceSource] = ()
    """Resources it publishes over MCP (``ResourceSource``)."""
    background: Callable[[], Coroutine[Any, Any, None]] | None = None
    """Work the pack does while a server runs (``tooldeck serve``, ``tooldeck mcp``): a
    coroutine started as a task at start and cancelled at stop (the schedules pack runs
    due fires). One-shot commands (``tooldeck call``) never start it."""


class PackReloader(Protocol):
    """Swaps a pack's tools in the running registry: a service every runtime registers.

    A pack's tool (``module_admin`` after an install) asks for it through its context's
    services. Calls under way finish on the tools they started with; MCP clients get
    ``notifications/tools/list_changed``.
    """

    def reload_pack(self, name: str) -> list[str]:
        """Reload pack ``name`` (its ``PackParts.reload``); the problems, empty when swapped.

        All or nothing: when the new tools cannot all be registered (a name another
        tool has), the old ones stay.
        """
        ...


@runtime_checkable
class Pack(Protocol):
    """Tools of one domain plugged into a runtime.

    Configuration: a shipped pack reads its own top-level table (``[brokerage]``,
    ``[builtin]``); an installed pack reads ``[packs.<name>]``, validated with
    ``config_model`` (unknown keys are errors, as everywhere in tooldeck).

    Services: ``setup`` may register services (a data source, a sandbox) in
    ``services``; the runtime closes every created service that has an ``aclose()``
    coroutine method when it closes.

    Example (an installed pack, registered under ``[project.entry-points."tooldeck.packs"]``)::

        class WeatherPack:
            name = "weather"
            config_model = WeatherConfig

            def setup(self, config, services):
                return PackParts(tools=[forecast])

        pack = WeatherPack()
    """

    name: str
    """The pack's name: its configuration table and how errors name it."""
    config_model: type[BaseModel] | None
    """Validates the pack's table; None: the pack takes no configuration."""

    # Commands are declared where the CLI finds them without importing the pack: a
    # shipped pack in ``packs.loader.SHIPPED_COMMANDS``, an installed one in the
    # ``tooldeck.commands`` entry-point group (name → ``module:typer_app``).

    def setup(self, config: Any, services: ServiceContainer) -> PackParts:
        """Build the pack's parts from its validated ``config`` (None without a model).

        Raises:
            ConfigError: the configuration cannot work (a missing data file, an unknown
                tool name); the runtime does not start.
        """
        ...
