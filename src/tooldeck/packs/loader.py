"""Your own tools in every entry point: load them from modules, files and installed packs.

A spec names where tools are (``tools = [...]`` in ``tooldeck.toml``, ``--tools`` on
the command line):

- ``./tools.py`` or ``tools/fx.py``: a file (relative to the config file's folder, or
  the current one);
- ``mypkg.tools``: a module;
- ``mypkg.tools:registry``: one object of a module.

From a module or file, every ``@tool`` function, ``BaseTool`` instance, concrete
``BaseTool`` subclass defined there (instantiated with no arguments), ``ToolsProvider``
(a ``ToolRegistry`` included) and ``Pack`` instance is taken, in the order they appear.
An object named by ``module:attr`` may be any of those, or a list of them.

Installed packages add packs through the ``tooldeck.packs`` entry-point group: each
entry point names a module or object, read the same way. The shipped packs load the
same way, from ``SHIPPED_PACKS``.

Semantics:
    Loading never stops the rest: a spec that cannot be imported (a syntax error, a
    missing module, an exception at import) becomes a ``LoadError`` that names the
    spec, the file and line, and the error; the tools of every other spec load.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import inspect
import sys
import traceback
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from tooldeck.core.pack import Pack
from tooldeck.core.tool import BaseTool, Tool
from tooldeck.providers.base import ToolsProvider

__all__ = [
    "COMMANDS_GROUP",
    "ENTRY_POINT_GROUP",
    "MODULES_PACK",
    "NO_TOOLS",
    "SHIPPED_COMMANDS",
    "SHIPPED_CONFIGS",
    "SHIPPED_PACKS",
    "SHIPPED_PACK_NAMES",
    "LoadError",
    "LoadedTools",
    "is_file_spec",
    "load_tools",
    "pack_commands",
    "spec_files",
]

ENTRY_POINT_GROUP = "tooldeck.packs"
"""The entry-point group installed packages register their packs in."""

SHIPPED_PACKS = (
    "tooldeck.packs.brokerage.pack:pack",
    "tooldeck.packs.builtin.pack:pack",
    "tooldeck.packs.knowledge.pack:pack",
    "tooldeck.packs.context.pack:pack",
    "tooldeck.packs.schedules.pack:pack",
)
"""The packs that come with tooldeck, in registration order."""

SHIPPED_PACK_NAMES = tuple(spec.split(":")[0].split(".")[-2] for spec in SHIPPED_PACKS)
"""Their names (each is its folder's: ``brokerage``, ``builtin``, ...), for ``--with``."""

SHIPPED_CONFIGS = {
    "brokerage": "tooldeck.packs.brokerage.config:BrokerageConfig",
    "builtin": "tooldeck.packs.builtin.config:BuiltinConfig",
    "knowledge": "tooldeck.packs.knowledge.config:KnowledgeConfig",
    "context": "tooldeck.packs.context.config:ContextConfig",
    "schedules": "tooldeck.packs.schedules.config:SchedulesConfig",
}
"""The shipped packs' top-level tables (``[builtin]``) and their models: ``config.Settings``
gets a field for each, so they are read, checked and overridden like any table."""

SHIPPED_COMMANDS = {
    "docs": "tooldeck.packs.knowledge.cli:docs_app",
    "modules": "tooldeck.packs.modules.cli:modules_app",
    "schedule": "tooldeck.packs.schedules.cli:schedule_app",
}
"""The shipped packs' CLI commands: name → ``module:typer_app`` (a light module: the
CLI imports it at start, the pack itself only when a command runs)."""

NO_TOOLS = "defines no tools (decorate a function with @tool)"
"""The load error of a module that imported but holds no tool."""

COMMANDS_GROUP = "tooldeck.commands"
"""Entry-point group of installed packs' commands: name → ``module:typer_app``."""

MODULES_PACK = "tooldeck.packs.modules.pack:pack"
"""Installed modules (``packs.modules``): loaded after the shipped packs, always (a
project without modules gets no tools from it), configured in ``[packs.modules]``."""


@dataclass(frozen=True, slots=True)
class LoadError:
    """A spec whose tools could not be loaded, and why."""

    spec: str
    """The spec as written (``./tools.py``, ``mypkg.tools:registry``)."""
    message: str
    """What went wrong, with the file and line when there is one."""

    def __str__(self) -> str:
        return f"tools {self.spec!r}: {self.message}"


@dataclass(slots=True)
class LoadedTools:
    """What the specs gave: tools for the local registry, whole providers, packs, errors."""

    tools: list[Tool] = field(default_factory=list)
    providers: list[ToolsProvider] = field(default_factory=list)
    packs: list[Pack] = field(default_factory=list)
    errors: list[LoadError] = field(default_factory=list)


def load_tools(
    specs: Iterable[str],
    base_dir: Path | None = None,
    *,
    entry_points: bool = True,
    fresh: bool = False,
) -> LoadedTools:
    """Load the tools of ``specs`` (and of installed packs when ``entry_points``).

    Args:
        specs: Files, modules or ``module:attr`` objects (see the module docstring).
        base_dir: Folder relative file specs start from; default the current one.
        entry_points: Also load the ``tooldeck.packs`` entry points.
        fresh: Import modules again even when already imported (``serve --reload``);
            files are always executed anew.

    Returns:
        The tools, providers and load errors, in spec order. Never raises for a spec
        that fails; see ``LoadedTools.errors``.
    """
    loaded = LoadedTools()
    for spec in specs:
        try:
            _take(_resolve(spec, base_dir or Path.cwd(), fresh), spec, loaded)
        except Exception as exc:  # a user's module can raise anything at import
            loaded.errors.append(LoadError(spec, _describe(exc)))
    if entry_points:
        for point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            label = f"{point.name} ({point.value}, entry point)"
            try:
                _take(point.load(), label, loaded)
            except Exception as exc:
                loaded.errors.append(LoadError(label, _describe(exc)))
    return loaded


def is_file_spec(spec: str) -> bool:
    """Whether a spec names a file (``./tools.py``, ``tools/fx.py``) rather than a module."""
    return spec.endswith(".py") or "/" in spec or "\\" in spec


def spec_files(specs: Iterable[str], base_dir: Path | None = None) -> list[Path]:
    """The source files behind ``specs`` that exist (what ``serve --reload`` watches).

    A file spec is its file; a module spec is its module's file once imported.
    """
    files: list[Path] = []
    for spec in specs:
        if is_file_spec(spec):
            path = ((base_dir or Path.cwd()) / spec).resolve()
        else:
            module = sys.modules.get(spec.partition(":")[0])
            origin = getattr(module, "__file__", None)
            if origin is None:
                continue
            path = Path(origin)
        if path.is_file():
            files.append(path)
    return files


def _resolve(spec: str, base_dir: Path, fresh: bool = False) -> Any:
    """The module or object a spec names; ``fresh`` re-imports an imported module."""
    if is_file_spec(spec):
        return _load_file((base_dir / spec).resolve())
    module_name, _, attr = spec.partition(":")
    module = importlib.import_module(module_name)
    if fresh:
        module = importlib.reload(module)
    if not attr:
        return module
    target: Any = module
    for part in attr.split("."):
        if not hasattr(target, part):
            names = [n for n in dir(target) if not n.startswith("_")]
            raise LookupError(f"{module_name} has no {attr!r}; it has: {', '.join(names)}")
        target = getattr(target, part)
    return target


def _load_file(path: Path) -> ModuleType:
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:8]
    name = f"tooldeck_user_{path.stem}_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    folder = str(path.parent)
    if folder not in sys.path:  # so that the file can import its neighbours
        sys.path.insert(0, folder)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _take(target: Any, spec: str, loaded: LoadedTools) -> None:
    """Add what ``target`` holds to ``loaded``; a module is scanned."""
    if isinstance(target, ModuleType):
        found = [_one(v, target.__name__) for v in vars(target).values()]
        items = [item for item in found if item is not None]
        if not items:
            loaded.errors.append(LoadError(spec, NO_TOOLS))
        for item in items:
            _add(item, loaded)
        return
    if isinstance(target, list | tuple):
        for value in target:
            _take(value, spec, loaded)
        return
    one = _one(target, None)
    if one is None:
        hint = " (decorate it with @tool)" if callable(target) else ""
        raise TypeError(f"{target!r} is not a tool, a tool class, a provider or a pack{hint}")
    _add(one, loaded)


def _one(value: Any, module: str | None) -> Tool | ToolsProvider | Pack | None:
    """``value`` as a tool, provider or pack; a tool class defined in ``module`` is made."""
    if isinstance(value, Tool | ToolsProvider):
        return value
    if not inspect.isclass(value) and isinstance(value, Pack):
        return value
    if (
        inspect.isclass(value)
        and issubclass(value, BaseTool)
        and not inspect.isabstract(value)
        and (module is None or value.__module__ == module)
        and value.name
    ):
        return value()
    return None


def _add(item: Tool | ToolsProvider | Pack, loaded: LoadedTools) -> None:
    if isinstance(item, Tool):
        loaded.tools.append(item)
    elif isinstance(item, ToolsProvider):
        loaded.providers.append(item)
    else:
        loaded.packs.append(item)


def _describe(exc: BaseException) -> str:
    """The error with the file and line it happened at (the user's, not ours)."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{exc.filename}:{exc.lineno}: SyntaxError: {exc.msg}"
    ours = str(Path(__file__).resolve().parents[1])
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if "importlib" not in f.filename and not f.filename.startswith(ours)
    ]
    where = f"{frames[-1].filename}:{frames[-1].lineno}: " if frames else ""
    return f"{where}{type(exc).__name__}: {exc}"


def pack_commands() -> tuple[dict[str, Any], list[LoadError]]:
    """The packs' CLI commands: the shipped ones, then installed ones (``COMMANDS_GROUP``).

    Returns:
        Name → Typer app, and the commands that could not be loaded (a broken
        installed package must not stop the CLI); a name taken already is an error.
    """
    found: dict[str, Any] = {}
    errors: list[LoadError] = []
    specs = [(name, spec) for name, spec in SHIPPED_COMMANDS.items()]
    specs += [
        (point.name, point.value) for point in importlib.metadata.entry_points(group=COMMANDS_GROUP)
    ]
    for name, spec in specs:
        if name in found:
            errors.append(LoadError(f"command {name}", f"{spec}: the name is taken"))
            continue
        module, _, attr = spec.partition(":")
        try:
            found[name] = getattr(importlib.import_module(module), attr)
        except Exception as exc:  # an installed package can raise anything at import
            errors.append(LoadError(f"command {name}", f"{spec}: {type(exc).__name__}: {exc}"))
    return found, errors
