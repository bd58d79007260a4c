"""The modules pack: the active version of every installed module, served as tools.

``<data_dir>/modules/<id>/active`` names the version (``versions.ModuleVersions``).
No module code runs in the server: each version's tools (and context adapters) are
read from its code in the sandbox once (``runner.describe_installed``, kept beside the
version), and every call runs the version's files in a fresh sandboxed process
(``served.ModuleTool``), as its validation did. A module that fails to load is logged
and left out; the others are served. A call that started on a version finishes on it
after a switch (it carries that version's files).

Every tooldeck process of a project sees an install, rollback, disable or uninstall made
by another (``tooldeck modules`` in a terminal while ``tooldeck serve`` or a desktop
client's ``tooldeck mcp`` runs; issue 55): while it serves, it looks at each module's
``active`` file every ``WATCH_S`` seconds (one ``stat`` each) and reloads the modules
when one changed.

Configuration: ``[packs.modules] enabled = false`` serves none; ``admin = true`` adds
the ``module_admin`` tool (``admin.py``: drafts, validation, installs, rollbacks) and
``module_pipeline`` (``pipeline.py``: build, write code, repair, validate, install), off
by default. Validations and calls share one sandbox (``runner.ModuleSandbox``), started
on first use.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tooldeck.core.context import ServiceContainer
from tooldeck.core.credentials import CredentialStore
from tooldeck.core.extensions import CONTEXT_ADAPTERS, Extensions
from tooldeck.core.pack import ConsolePage, PackEnvironment, PackParts, PackReloader, PackRoutes
from tooldeck.core.tool import Tool
from tooldeck.isolation.sandbox import SandboxLimits
from tooldeck.packs.modules.manifest import ManifestError, read_manifest
from tooldeck.packs.modules.runner import (
    InstalledVersion,
    ModuleSandbox,
    describe_installed,
)
from tooldeck.packs.modules.served import ModuleAdapter, ModuleTool, served_definition
from tooldeck.packs.modules.versions import ModuleVersions

__all__ = ["WATCH_S", "ModulesConfig", "ModulesPack", "pack"]

log = logging.getLogger("tooldeck.modules")

WATCH_S = 1.0
"""Seconds between two looks at the modules' ``active`` files while a process serves."""


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
    call_timeout_s: float = Field(30.0, gt=0, le=3600)
    """Seconds (wall clock, and CPU) one call of an installed module may take in the
    sandbox; a tool's own shorter ``timeout_s`` wins."""
    call_memory_mb: int = Field(512, gt=0, le=65536)
    """MiB of memory one call may add to the sandbox's preloaded modules."""
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
        environment = services.get(PackEnvironment)
        root = environment.data_dir / "modules"
        private = [p for p in (environment.data_dir, environment.config_dir) if p]
        store = partial(services.get, CredentialStore)  # type: ignore[type-abstract]
        services.register_factory(
            ModuleSandbox,
            lambda: ModuleSandbox(
                private=private, allow_hosts=config.allow_hosts, credentials=store
            ),
        )
        sandbox = partial(services.get, ModuleSandbox)

        def changed() -> None:  # an install here (module_admin), or another process's
            problems = services.get(PackReloader).reload_pack(self.name)  # type: ignore[type-abstract]
            for problem in problems:
                log.warning("modules not reloaded: %s", problem)

        own: list[Tool] = []
        reaches: list[str] = []
        if config.admin:
            from tooldeck.packs.modules.admin import ModuleAdminTool
            from tooldeck.packs.modules.pipeline import ModulePipelineTool
            from tooldeck.packs.modules.validation import ModuleValidator

            timeout = config.validate_timeout_s
            services.register_factory(
                ModuleValidator,
                lambda: ModuleValidator(
                    limits=SandboxLimits(timeout_s=timeout, cpu_s=timeout), sandbox=sandbox()
                ),
            )

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

        def installed() -> _Installed:
            return _installed(root, sandbox, config, private) if config.enabled else _Installed()

        active = installed()
        adapters = active.adapters  # the context adapters served now (a reload swaps them)
        extensions = services.get_optional(Extensions)
        if extensions is not None:
            extensions.provide(CONTEXT_ADAPTERS, lambda: adapters)

        seen = [_served_versions(root)]  # what the tools now registered were loaded from

        def everything() -> list[Tool]:
            seen[0] = _served_versions(root)
            fresh = installed()
            adapters[:] = fresh.adapters
            return [*own, *fresh.tools]

        async def watch() -> None:
            """Reload when another process changed which versions are active."""
            while True:
                await asyncio.sleep(WATCH_S)
                if _served_versions(root) != seen[0]:
                    changed()

        background = watch if config.enabled else None
        if not config.admin:
            return PackParts(
                tools=active.tools, reaches=active.reaches, reload=everything, background=background
            )
        return PackParts(
            tools=[*own, *active.tools],
            reaches=[*reaches, *active.reaches],
            reload=everything,
            background=background,
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


@dataclass(slots=True)
class _Installed:
    """What the active versions give: tools, context adapters, what each reaches."""

    tools: list[Tool] = field(default_factory=list)
    adapters: list[Any] = field(default_factory=list)
    reaches: list[str] = field(default_factory=list)


def _installed(
    root: Path, sandbox: Callable[[], ModuleSandbox], config: ModulesConfig, private: list[Path]
) -> _Installed:
    """The tools and context adapters of each module's active version, served sandboxed."""
    found = _Installed()
    if not root.is_dir():
        return found
    versions = ModuleVersions(root)
    active: list[InstalledVersion] = []
    for module_id in versions.modules():
        folder = versions.active_path(module_id)
        if folder is None:
            continue
        try:
            active.append(InstalledVersion.read(module_id, folder, read_manifest(folder)))
        except (ManifestError, OSError, ValueError) as exc:
            log.warning("module %s (%s) not loaded: %s", module_id, folder.name, exc)
    limits = SandboxLimits(
        timeout_s=config.call_timeout_s,
        cpu_s=config.call_timeout_s,
        memory_mb=config.call_memory_mb,
    )
    described = describe_installed(active, root, private)
    for version, description in zip(active, described, strict=True):
        name = f"module {version.module_id} ({version.version_id})"
        if description.errors:
            log.warning("%s not loaded: %s", name, "; ".join(description.errors))
            continue
        try:
            definitions = [served_definition(d, version) for d in description.tools]
        except ValidationError as exc:
            log.warning("%s not loaded: a tool's definition is not valid: %s", name, exc)
            continue
        found.tools += [
            ModuleTool(d, version, sandbox, _limits_of(d.timeout_s, limits)) for d in definitions
        ]
        found.adapters += [
            ModuleAdapter(
                category=str(a["category"]),
                platform=str(a["platform"]),
                index=index,
                version=version,
                sandbox=sandbox,
                limits=limits,
            )
            for index, a in enumerate(description.adapters)
        ]
        hosts = version.manifest.hosts
        reach = ", ".join(hosts) if hosts else "no network"
        found.reaches.append(f"module {version.module_id} {version.version_id}: {reach}, sandboxed")
    return found


def _served_versions(root: Path) -> frozenset[tuple[str, int, int]]:
    """Each module's ``active`` file as (module, inode, mtime in ns).

    That file says which version serves: an install, a rollback or a disable replaces it
    (a new inode, ``versions._activate``), an uninstall removes it. One ``stat`` per
    module; no file is read.
    """
    found = set()
    try:
        modules = os.scandir(root)
    except OSError:  # no modules yet
        return frozenset()
    with modules:
        for entry in modules:
            try:
                stat = os.stat(os.path.join(entry.path, "active"))
            except OSError:
                continue
            found.add((entry.name, stat.st_ino, stat.st_mtime_ns))
    return frozenset(found)


def _limits_of(timeout_s: float | None, limits: SandboxLimits) -> SandboxLimits:
    """``limits`` with a tool's own shorter ``timeout_s``."""
    if timeout_s is None or timeout_s >= limits.timeout_s:
        return limits
    return replace(limits, timeout_s=timeout_s, cpu_s=timeout_s)


pack = ModulesPack()
"""The instance ``packs.loader.SHIPPED_PACKS`` names."""
