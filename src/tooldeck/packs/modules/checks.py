"""Static checks of a module's code, and the attestation they produce (seed 000: validate).

Each check reads the files only; nothing is imported or run here (running the code, its
tests and one call per tool happen in the sandbox, in a later step of ``validate``).

- ``manifest``: ``module.toml`` is present and valid (``manifest.py``).
- ``parse``: every ``.py`` file parses.
- ``imports``: no module that reaches around the sandbox's rules (``ctypes``,
  ``subprocess``, raw ``socket``, ``multiprocessing``, ``pickle``/``marshal``,
  ``importlib``, tooldeck's own internals such as the credential store), and no
  network client unless the manifest declares ``hosts``.
- ``lint``: ``ruff check`` for what is certainly a bug (syntax errors, undefined names:
  ``E9``, ``F63``, ``F7``, ``F82``), when ruff is installed (``tooldeck[dev]``); without
  it the check passes and says it was skipped.
- ``calls``: no ``eval``, ``exec``, ``compile``, ``__import__``, ``os.system``,
  ``os.popen``, ``os.exec*``/``os.spawn*``, ``globals()``, no interpreter internals
  (``__builtins__``, ``__subclasses__``, ``__globals__``, frames), no ``open`` of an
  absolute path given as a literal.

A check that fails says where (``tools.py:12``) and what to use instead. The checks are
a first line, not the wall: the sandbox's isolation is (no network but the declared
hosts, no files outside the module's folder).
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from tooldeck.packs.modules.manifest import ManifestError, ModuleManifest, read_manifest
from tooldeck.packs.modules.versions import Attestation, content_hash

__all__ = ["Check", "attest", "static_checks"]

_BANNED_MODULES = {
    "ctypes": "native code escapes every check",
    "cffi": "native code escapes every check",
    "subprocess": "a module runs no programs",
    "multiprocessing": "a module starts no processes",
    "socket": "use httpx with the manifest's hosts",
    "ssl": "use httpx with the manifest's hosts",
    "pickle": "loading pickles runs code; use json",
    "marshal": "loading marshalled code runs it; use json",
    "shelve": "it is pickle underneath; use json",
    "importlib": "import what you need by name",
    "builtins": "the builtins are the sandbox's",
    "pty": "a module opens no terminals",
    "signal": "the sandbox owns signals",
    "resource": "the sandbox sets the limits",
    "tooldeck.providers": "a module reaches tooldeck through its tool context only",
    "tooldeck.runtime": "a module reaches tooldeck through its tool context only",
    "tooldeck.observability": "a module reaches tooldeck through its tool context only",
    "tooldeck.config": "a module reaches tooldeck through its tool context only",
}
_NETWORK = ("httpx", "requests", "urllib", "urllib3", "aiohttp", "http")
_BANNED_CALLS = {
    "eval": "evaluating text as code",
    "exec": "running text as code",
    "compile": "compiling text into code",
    "__import__": "importing by a computed name",
    "globals": "changing the module's globals",
    "breakpoint": "a debugger in a sandbox",
}
_BANNED_ATTRIBUTES = {
    ("os", "system"),
    ("os", "popen"),
    ("os", "fork"),
    ("os", "kill"),
    ("os", "setuid"),
    ("os", "chroot"),
}


@dataclass(frozen=True, kw_only=True)
class Check:
    """One check's outcome."""

    name: str
    passed: bool
    output: str = ""
    """What failed and where, one problem per line; empty when it passed."""


def static_checks(folder: Path) -> list[Check]:
    """Run the static checks on the module in ``folder`` (see the module docstring)."""
    checks: list[Check] = []
    manifest: ModuleManifest | None = None
    try:
        manifest = read_manifest(folder)
        checks.append(Check(name="manifest", passed=True))
    except ManifestError as exc:
        checks.append(Check(name="manifest", passed=False, output=str(exc)))
    trees: dict[str, ast.Module] = {}
    errors: list[str] = []
    for path in sorted(folder.rglob("*.py")):
        relative = path.relative_to(folder).as_posix()
        try:
            trees[relative] = ast.parse(path.read_bytes(), filename=relative)
        except (SyntaxError, ValueError) as exc:
            line = getattr(exc, "lineno", None)
            errors.append(f"{relative}:{line or '?'}: {getattr(exc, 'msg', exc)}")
    if not trees and not errors:
        errors.append("no .py file: a module's tools are Python code")
    checks.append(Check(name="parse", passed=not errors, output="\n".join(errors)))
    hosts = bool(manifest and manifest.hosts)
    imports = [p for name, tree in trees.items() for p in _import_problems(name, tree, hosts)]
    checks.append(Check(name="imports", passed=not imports, output="\n".join(imports)))
    calls = [p for name, tree in trees.items() for p in _call_problems(name, tree)]
    checks.append(Check(name="calls", passed=not calls, output="\n".join(calls)))
    checks.append(_lint(folder))
    return checks


def _lint(folder: Path) -> Check:
    """``ruff check`` of the bug classes only, with a deadline; skipped without ruff."""
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        return Check(name="lint", passed=True, output="skipped: ruff is not installed")
    command = [ruff, "check", "--isolated", "--no-cache", "--select", "E9,F63,F7,F82",
               "--output-format", "concise", "--quiet", "."]  # fmt: skip
    try:
        done = subprocess.run(
            command, cwd=folder, capture_output=True, text=True, timeout=30, env={}
        )
    except subprocess.TimeoutExpired:
        return Check(name="lint", passed=False, output="ruff did not finish within 30 s")
    problems = [line.removeprefix("./") for line in done.stdout.splitlines() if line.strip()]
    if done.returncode not in (0, 1):
        return Check(name="lint", passed=False, output=done.stderr.strip()[-2000:])
    return Check(name="lint", passed=not problems, output="\n".join(problems))


def attest(module_id: str, folder: Path, checks: list[Check]) -> Attestation:
    """The attestation of ``checks`` run on exactly the content of ``folder`` now."""
    return Attestation(
        module_id=module_id,
        content_hash=content_hash(folder),
        checks={c.name: c.passed for c in checks},
        validated_at=datetime.now(UTC).isoformat(),
    )


def _import_problems(name: str, tree: ast.Module, hosts: bool) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: within the module
                continue
            base = node.module or ""
            modules = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        for module in modules:
            for banned, why in _BANNED_MODULES.items():
                if module == banned or module.startswith(banned + "."):
                    yield f"{name}:{node.lineno}: import of {module}: {why}"
                    break
            else:
                if not hosts and module.split(".")[0] in _NETWORK:
                    yield (
                        f"{name}:{node.lineno}: import of {module}: the manifest declares "
                        'no hosts; add hosts = ["api.example.com"] to module.toml'
                    )


_ESCAPES = {
    "__builtins__", "__subclasses__", "__globals__", "__code__", "__closure__",
    "f_globals", "f_locals", "f_back", "gi_frame", "cr_frame", "tb_frame",
}  # fmt: skip
"""Names that reach interpreter internals: the usual ways around the lists above."""


def _call_problems(name: str, tree: ast.Module) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Name | ast.Attribute):
            reached = node.id if isinstance(node, ast.Name) else node.attr
            if reached in _ESCAPES:
                yield f"{name}:{node.lineno}: {reached}: a module does not reach interpreter internals"
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in _BANNED_CALLS:
            yield f"{name}:{node.lineno}: {func.id}(): {_BANNED_CALLS[func.id]}"
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            pair = (func.value.id, func.attr)
            if pair in _BANNED_ATTRIBUTES or (
                func.value.id == "os" and func.attr.startswith(("exec", "spawn"))
            ):
                yield f"{name}:{node.lineno}: {func.value.id}.{func.attr}(): a module runs no programs"
        if (
            isinstance(func, ast.Name)
            and func.id == "open"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and node.args[0].value.startswith(("/", "~"))
        ):
            yield f"{name}:{node.lineno}: open({node.args[0].value!r}): files outside the module's folder"
