"""Imports point downward only (docs/architecture.md, "Layers"), lazy ones included.

Every ``import`` in ``src/tooldeck`` is read from the source (inside functions too), and
each layer may import only itself and the layers below it. Packs do not know each other:
a pack imports the core, the intents, ``isolation`` and ``packs.loader``, never another pack.
What a pack adds to an entry point uses that entry point's helpers, as a pytest or
Datasette plugin does: its ``cli.py`` imports ``tooldeck.cli.shared``, its ``routes.py``
``tooldeck.server.http``, and nothing else of theirs.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "tooldeck"

# Each layer and the layers it may import (besides itself and `tooldeck.exceptions`).
BELOW: dict[str, set[str]] = {
    "core": set(),
    "isolation": {"core"},
    "observability": {"core"},
    "exporters": {"core"},
    "providers": {"core", "isolation", "observability", "exporters"},
    "packs": {"core", "isolation", "exporters"},
}
# The loader finds your tools, which may be whole providers: it knows their interface.
ALSO = {"packs/loader.py": {"providers"}}
HELPERS = {"cli.py": "tooldeck.cli.shared", "routes.py": "tooldeck.server.http"}
"""A pack's contribution to an entry point, and the one module of it that it may use."""
ENTRY_POINTS = {
    "adapters",
    "cli",
    "server",
    "agent",
    "worker",
    "runtime",
    "config",
    "config_names",
    "pack_setup",
}


def _layer(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "tooldeck" or len(parts) < 2:
        return None
    return parts[1]


def _imports(path: Path) -> list[tuple[int, str]]:
    package = ".".join(path.relative_to(SRC.parent).with_suffix("").parts)
    if path.name == "__init__.py":
        package = package.removesuffix(".__init__")
    else:
        package = package.rsplit(".", 1)[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found.append((node.lineno, base))
    return found


def test_every_import_points_downward() -> None:
    problems: list[str] = []
    for path in sorted(SRC.rglob("*.py")):
        relative = path.relative_to(SRC)
        layer = relative.parts[0].removesuffix(".py")
        if layer in ENTRY_POINTS or layer not in BELOW:
            continue
        pack = relative.parts[1] if layer == "packs" and len(relative.parts) > 2 else None
        for line, module in _imports(path):
            target = _layer(module)
            if target in (None, "exceptions") or (target == layer != "packs"):
                continue
            if layer == "packs" and module == HELPERS.get(path.name):
                continue
            if layer == "packs" and target == "packs":
                parts = module.split(".")
                other = parts[2] if len(parts) > 2 else None
                if other in (None, "loader", pack):
                    continue
                problems.append(f"{relative}:{line}: pack {pack!r} imports pack {other!r}")
                continue
            if target not in BELOW[layer] | ALSO.get(relative.as_posix(), set()):
                problems.append(f"{relative}:{line}: {layer} imports {module} ({target})")
    assert not problems, "imports that point up or across:\n" + "\n".join(problems)


def test_the_entry_points_name_no_pack() -> None:
    """config, runtime, server, cli and agent reach packs through ``packs.loader`` only."""
    problems: list[str] = []
    for path in sorted(SRC.rglob("*.py")):
        relative = path.relative_to(SRC)
        if relative.parts[0].removesuffix(".py") not in ENTRY_POINTS:
            continue
        for line, module in _imports(path):
            parts = module.split(".")
            if parts[:2] == ["tooldeck", "packs"] and parts[2:3] != ["loader"] and len(parts) > 2:
                problems.append(f"{relative}:{line}: imports {module}")
    assert not problems, "entry points that name a pack:\n" + "\n".join(problems)
