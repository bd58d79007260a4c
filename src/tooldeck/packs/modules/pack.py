"""The modules pack: the active version of every installed module, served as tools.

``<data_dir>/modules/<id>/active`` names the version (``versions.ModuleVersions``).
The version's folder becomes a package of its own (``tooldeck_module_<id>_<hash>``,
its files import each other relatively: ``from . import helpers``), and the manifest's
``entry`` file (``tools.py``) loads the way your own tool modules do (``packs.loader``:
``@tool`` functions, ``BaseTool`` instances, a registry). Nothing goes on ``sys.path``, so a
module's ``json.py`` cannot replace the standard library's for the server, and each
version has its own names: a call that started on a version finishes on it after a
switch. A module that fails to load is logged and left out; the others are served.

Configuration: ``[packs.modules] enabled = false`` serves none; ``admin = true`` adds
the ``module_admin`` tool (``admin.py``: drafts, validation, installs, rollbacks) and
``module_pipeline`` (``pipeline.py``: build, write code, repair, validate, install), off
by default: installed code runs in this server, so a project opts in. Validation runs
in a sandbox of its own (``validation.py``), started on the first validation.
"""

from __future__ import annotations

import hashlib
import logging
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from tooldeck.core.context import EMPTY_CONTEXT, ServiceContainer, ToolContext, principal_of
from tooldeck.core.credentials import CallerSecret, CredentialStore
from tooldeck.core.definition import ToolDefinition
from tooldeck.core.extensions import CONTEXT_ADAPTERS, Extensions
from tooldeck.core.pack import ConsolePage, PackEnvironment, PackParts, PackReloader, PackRoutes
from tooldeck.core.result import ToolResult
from tooldeck.core.tool import Arguments, Tool
from tooldeck.packs.modules.manifest import ManifestError, ModuleManifest, read_manifest
from tooldeck.packs.modules.versions import ModuleVersions

if TYPE_CHECKING:
    from tooldeck.packs.loader import LoadedTools

__all__ = [
    "ModuleTool",
    "ModulesConfig",
    "ModulesPack",
    "adapters_in",
    "load_version",
    "pack",
    "version_package",
]

log = logging.getLogger("tooldeck.modules")


class ModulesConfig(BaseModel):
    """``[packs.modules]``."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    """Serve the installed modules' active versions."""
    admin: bool = False
    """Serve ``module_admin`` and ``module_pipeline`` (their installs, rollbacks,
    uninstalls and credentials ask a person first)."""
    allow_hosts: list[str] = Field(default_factory=list)
    """Private or loopback hosts, IPs or CIDR ranges a module's declared hosts may
    resolve to during validation (``["127.0.0.1"]`` for an API on this machine)."""
    validate_timeout_s: float = Field(60.0, gt=0, le=3600)
    """Seconds a validation's sandboxed run (import, tests, calls) may take."""
    admins: list[str] = Field(default_factory=lambda: ["anonymous"])
    """Who may write, validate, install, roll back and remove modules (``access.py``):
    ``anonymous`` is a caller without an identity (one machine). Others may list them
    and store their own module keys."""


class ModulesPack:
    """The ``Pack`` of installed modules (see the module docstring)."""

    name = "modules"
    config_model = ModulesConfig

    def setup(self, config: ModulesConfig, services: ServiceContainer) -> PackParts:
        """The tools of every installed module's active version (and ``module_admin``).

        ``reload`` loads them again: ``module_admin`` asks the runtime for it after an
        install, a rollback or an uninstall, so the change serves without a restart.
        """
        root = services.get(PackEnvironment).data_dir / "modules"
        store = partial(services.get, CredentialStore)  # type: ignore[type-abstract]
        own: list[Tool] = []
        reaches: list[str] = []
        if config.admin:
            from tooldeck.isolation.sandbox import SandboxLimits
            from tooldeck.packs.modules.admin import ModuleAdminTool
            from tooldeck.packs.modules.pipeline import ModulePipelineTool
            from tooldeck.packs.modules.validation import ModuleValidator

            environment = services.get(PackEnvironment)
            private = [p for p in (environment.data_dir, environment.config_dir) if p]
            timeout = config.validate_timeout_s
            services.register_factory(
                ModuleValidator,
                lambda: ModuleValidator(
                    private=private,
                    allow_hosts=config.allow_hosts,
                    limits=SandboxLimits(timeout_s=timeout, cpu_s=timeout),
                ),
            )

            def changed() -> None:
                problems = services.get(PackReloader).reload_pack(self.name)  # type: ignore[type-abstract]
                for problem in problems:
                    log.warning("modules not reloaded: %s", problem)

            versions = ModuleVersions(root)
            validator = partial(services.get, ModuleValidator)
            own += [
                ModuleAdminTool(
                    versions,
                    credentials=store,
                    validator=validator,
                    on_change=changed,
                    admins=config.admins,
                ),
                ModulePipelineTool(
                    versions, validator=validator, on_change=changed, admins=config.admins
                ),
            ]
            reaches.append(f"module_admin and module_pipeline write modules under {root}")

        active = _installed(root, store) if config.enabled else _Installed()
        adapters = active.adapters  # the context adapters served now (a reload swaps them)
        extensions = services.get_optional(Extensions)
        if extensions is not None:
            extensions.provide(CONTEXT_ADAPTERS, lambda: adapters)

        def everything() -> list[Tool]:
            fresh = _installed(root, store) if config.enabled else _Installed()
            adapters[:] = fresh.adapters
            return [*own, *fresh.tools]

        if not config.admin:
            return PackParts(tools=active.tools, reaches=active.reaches, reload=everything)
        return PackParts(
            tools=[*own, *active.tools],
            reaches=[*reaches, *active.reaches],
            reload=everything,
            routes=lambda: _routes(root, config.admins),
            console=[
                ConsolePage(
                    "modules", "Modules", Path(__file__).with_name("console") / "modules.js"
                )
            ],
        )


def _routes(root: Path, admins: list[str]) -> PackRoutes:
    from tooldeck.packs.modules.routes import modules_router

    return PackRoutes([modules_router(ModuleVersions(root), admins)])


class ModuleTool(Tool):
    """An installed module's tool as the server runs it: its calls reach what a module may.

    Semantics:
        Each call's ``ctx.services`` is replaced by a container holding only
        ``CallerSecret``: the calling user's secret for this module
        (``module:<id>``, stored with ``module_admin store_credentials``), read on first
        use. The module cannot reach the credential store (another scope, another
        user), the audit, the approvals or the other tools through its context.

        Its definition says which version serves it: ``version`` is the manifest's
        version with the installed version's id as build metadata (``0.1.0+v2-3fa2c1d0``,
        in every result's ``metadata.tool_version``), and it is tagged ``module:<id>``.

    Args:
        tool: The module's own tool.
        module_id: Its module.
        version: ``<manifest version>+<version id>``.
        credentials: Opens the credential store.
    """

    def __init__(
        self,
        tool: Tool,
        module_id: str,
        version: str,
        credentials: Callable[[], CredentialStore],
    ) -> None:
        self.tool = tool
        self.module_id = module_id
        self.credentials = credentials
        own = tool.definition
        self._definition = own.model_copy(
            update={"version": version, "tags": (*own.tags, f"module:{module_id}")}
        )

    @property
    def definition(self) -> ToolDefinition:
        """The module tool's definition, with the version that serves it."""
        return self._definition

    async def execute(
        self, arguments: Arguments = None, ctx: ToolContext | None = None
    ) -> ToolResult:
        """Run the module's tool with the narrowed context (see the class docstring)."""
        ctx = ctx or EMPTY_CONTEXT
        principal, scope = principal_of(ctx), f"module:{self.module_id}"
        secret = CallerSecret(lambda: self.credentials().get(principal, scope))
        result = await self.tool.execute(
            arguments, ctx.derive(services=ServiceContainer({CallerSecret: secret}))
        )
        return result.with_metadata(tool_version=self._definition.version)


@dataclass(slots=True)
class _Installed:
    """What the active versions give: tools, context adapters, what each reaches."""

    tools: list[Tool] = field(default_factory=list)
    adapters: list[Any] = field(default_factory=list)
    reaches: list[str] = field(default_factory=list)


def _installed(root: Path, credentials: Callable[[], CredentialStore]) -> _Installed:
    """The tools and context adapters of each module's active version (see ``adapters_in``)."""
    found = _Installed()
    tools, reaches = found.tools, found.reaches
    if not root.is_dir():
        return found
    versions = ModuleVersions(root)
    for module_id in versions.modules():
        folder = versions.active_path(module_id)
        if folder is None:
            continue
        try:
            manifest = read_manifest(folder)
        except ManifestError as exc:
            log.warning("module %s (%s) not loaded: %s", module_id, folder.name, exc)
            continue
        loaded = _load(module_id, folder, manifest)
        if loaded is None:
            continue
        version = f"{manifest.version}+{folder.name}"
        tools += [ModuleTool(tool, module_id, version, credentials) for tool in loaded]
        if manifest.kind == "context_adapter" and manifest.category:
            entry = f"{version_package(module_id, folder)}.{manifest.entry.removesuffix('.py')}"
            found.adapters += adapters_in(sys.modules[entry], manifest.category)
        reach = ", ".join(manifest.hosts) if manifest.hosts else "no network"
        reaches.append(f"module {module_id} {folder.name}: {reach}")
    return found


def adapters_in(module: types.ModuleType, category: str) -> list[Any]:
    """The context adapters a module's entry file defines at its top level.

    An adapter is an instance (not a class) with ``category`` equal to the manifest's,
    a ``platform``, and ``fetch`` and ``normalize_for_tools`` methods: what the context
    pack's ``ContextAdapter`` has (the modules pack does not import the context pack).
    """
    return [
        value
        for value in vars(module).values()
        if not isinstance(value, type)
        and getattr(value, "category", None) == category
        and isinstance(getattr(value, "platform", None), str)
        and callable(getattr(value, "fetch", None))
        and callable(getattr(value, "normalize_for_tools", None))
    ]


def _load(module_id: str, folder: Path, manifest: ModuleManifest) -> list[Tool] | None:
    """The tools of one version's entry file; None (logged) when it fails to load."""
    tools_required = manifest.kind == "tool"
    loaded = load_version(module_id, folder, manifest.entry, tools_required=tools_required)
    if loaded.errors:
        for error in loaded.errors:
            log.warning("module %s (%s) not loaded: %s", module_id, folder.name, error)
        return None
    return list(loaded.tools)


def load_version(
    module_id: str, folder: Path, entry: str, *, tools_required: bool = True
) -> LoadedTools:
    """Import the version in ``folder`` as a package of its own and load its ``entry`` file.

    The package is ``tooldeck_module_<id>_<hash of the folder>`` with ``__path__`` the
    folder: its files import each other relatively, nothing goes on ``sys.path``. The
    validation in the sandbox loads a module the same way (``_validate.py``).

    Args:
        module_id: The module's id.
        folder: The version's folder.
        entry: The file to load (``tools.py``).
        tools_required: An entry file without tools is a load error (not for a context
            adapter module, whose entry holds adapters).

    Returns:
        The tools found and the load errors (``packs.loader.LoadedTools``); never raises.
    """
    from tooldeck.packs.loader import NO_TOOLS, load_tools  # the loader of your own tools

    package = version_package(module_id, folder)
    loaded = load_tools([f"{package}.{entry.removesuffix('.py')}"], folder, entry_points=False)
    if not tools_required:
        loaded.errors = [e for e in loaded.errors if e.message != NO_TOOLS]
    return loaded


def version_package(module_id: str, folder: Path) -> str:
    """The name of the package the version in ``folder`` is imported as (made on first use)."""
    digest = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:10]
    package = f"tooldeck_module_{module_id}_{digest}"
    if package not in sys.modules:
        made = types.ModuleType(package)
        made.__path__ = [str(folder)]  # a namespace of its own: relative imports only
        sys.modules[package] = made
    return package


pack = ModulesPack()
"""The instance ``packs.loader.SHIPPED_PACKS`` names."""
