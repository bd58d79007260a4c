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
the ``module_admin`` tool (``admin.py``: drafts, validation, installs, rollbacks), off
by default: installed code runs in this server, so a project opts in.
"""

from __future__ import annotations

import hashlib
import logging
import sys
import types
from functools import partial
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from tooldeck.core.context import ServiceContainer
from tooldeck.core.credentials import CredentialStore
from tooldeck.core.pack import PackEnvironment, PackParts, PackReloader
from tooldeck.core.tool import Tool
from tooldeck.packs.modules.manifest import ManifestError, read_manifest
from tooldeck.packs.modules.versions import ModuleVersions

__all__ = ["ModulesConfig", "ModulesPack", "pack"]

log = logging.getLogger("tooldeck.modules")


class ModulesConfig(BaseModel):
    """``[packs.modules]``."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    """Serve the installed modules' active versions."""
    admin: bool = False
    """Serve ``module_admin`` (its installs, rollbacks, uninstalls and credentials ask a
    person first)."""


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
        own: list[Tool] = []
        reaches: list[str] = []
        if config.admin:
            from tooldeck.packs.modules.admin import ModuleAdminTool

            def changed() -> None:
                problems = services.get(PackReloader).reload_pack(self.name)  # type: ignore[type-abstract]
                for problem in problems:
                    log.warning("modules not reloaded: %s", problem)

            own.append(
                ModuleAdminTool(
                    ModuleVersions(root),
                    credentials=partial(services.get, CredentialStore),  # type: ignore[type-abstract]
                    on_change=changed,
                )
            )
            reaches.append(f"module_admin writes modules under {root}")

        def everything() -> list[Tool]:
            return [*own, *(_installed(root)[0] if config.enabled else [])]

        installed, what = _installed(root) if config.enabled else ([], [])
        return PackParts(tools=[*own, *installed], reaches=[*reaches, *what], reload=everything)


def _installed(root: Path) -> tuple[list[Tool], list[str]]:
    """The tools of each module's active version, and what each reaches, in words."""
    tools: list[Tool] = []
    reaches: list[str] = []
    if not root.is_dir():
        return tools, reaches
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
        loaded = _load(module_id, folder, manifest.entry)
        if loaded is None:
            continue
        tools += loaded
        reach = ", ".join(manifest.hosts) if manifest.hosts else "no network"
        reaches.append(f"module {module_id} {folder.name}: {reach}")
    return tools, reaches


def _load(module_id: str, folder: Path, entry: str) -> list[Tool] | None:
    """The tools of one version's ``entry`` file; None (logged) when it fails to load."""
    from tooldeck.packs.loader import load_tools  # the loader of your own tool modules

    digest = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:10]
    package = f"tooldeck_module_{module_id}_{digest}"
    if package not in sys.modules:
        made = types.ModuleType(package)
        made.__path__ = [str(folder)]  # a namespace of its own: relative imports only
        sys.modules[package] = made
    loaded = load_tools([f"{package}.{entry.removesuffix('.py')}"], folder, entry_points=False)
    if loaded.errors:
        for error in loaded.errors:
            log.warning("module %s (%s) not loaded: %s", module_id, folder.name, error)
        return None
    return list(loaded.tools)


pack = ModulesPack()
"""The instance ``packs.loader.SHIPPED_PACKS`` names."""
