"""How a module version is imported, wherever its code runs (only ever in the sandbox).

``load_version`` imports the version's folder as a package of its own
(``tooldeck_module_<id>_<hash>``, its files import each other relatively:
``from . import helpers``) and loads its ``entry`` file the way your own tool modules
load (``packs.loader``: ``@tool`` functions, ``BaseTool`` instances, a registry).
Nothing goes on ``sys.path``, so a module's ``json.py`` cannot replace the standard
library's. ``adapters_in`` finds the context adapters of an entry file. The sandboxed
scripts (``_validate.py``, ``_call.py``) call these; the server never imports a
module's code.
"""

from __future__ import annotations

import hashlib
import sys
import types
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tooldeck.packs.loader import LoadedTools

__all__ = ["adapters_in", "load_version", "version_package"]


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


def load_version(
    module_id: str, folder: Path, entry: str, *, tools_required: bool = True
) -> LoadedTools:
    """Import the version in ``folder`` as a package of its own and load its ``entry`` file.

    The package is ``tooldeck_module_<id>_<hash of the folder>`` with ``__path__`` the
    folder: its files import each other relatively, nothing goes on ``sys.path``. Called
    in the sandbox only, by a validation and by every call (``_validate.py``, ``_call.py``).

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
