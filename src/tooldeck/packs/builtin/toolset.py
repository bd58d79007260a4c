"""Assembly of the built-in tools: ``builtin_tools`` from ``BuiltinConfig``, and the sandbox."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from tooldeck.core.names import closest_names
from tooldeck.core.tool import Tool
from tooldeck.exceptions import ConfigError
from tooldeck.isolation.sandbox import Sandbox, SandboxLimits
from tooldeck.packs.builtin.config import BuiltinConfig, PythonConfig
from tooldeck.packs.builtin.execute_script import ExecuteScriptTool
from tooldeck.packs.builtin.files import FilesTool
from tooldeck.packs.builtin.git import GitTool
from tooldeck.packs.builtin.github import GitHubTool
from tooldeck.packs.builtin.llm import LLMTool
from tooldeck.packs.builtin.math_solver import MathTool
from tooldeck.packs.builtin.python import PythonTool
from tooldeck.packs.builtin.roots import Roots
from tooldeck.packs.builtin.shell import ShellTool
from tooldeck.packs.builtin.web import WebTool

__all__ = ["CALLER_CODE_TOOLS", "MATH_LIMITS", "MATH_MODULES", "builtin_tools", "make_sandbox"]

MATH_MODULES = ("sympy", "tooldeck.packs.builtin.math_solver")
"""Preloaded by the sandbox too: ``math`` computes in its killable processes."""
MATH_LIMITS = SandboxLimits(timeout_s=30, cpu_s=30, memory_mb=1024, max_processes=1)
"""Limits of one ``math`` computation (a policy timeout kills it sooner)."""

CALLER_CODE_TOOLS = ("python", "execute_script", "shell")
"""Tools whose failures are usually the caller's code, not the tool: the runtime turns
their circuit breaker off by default so a model debugging its code is not locked out."""


def make_sandbox(
    config: PythonConfig, environ: Mapping[str, str], roots: Sequence[Path] = ()
) -> Sandbox:
    """The fork server for ``python`` and ``execute_script``; a run's cwd may be in ``roots``.

    Its environment is built, not inherited: PATH, HOME, LANG and TMPDIR of
    ``environ``, single-threaded math libraries, the Agg matplotlib backend, then
    ``config.env``. The server's secrets (API keys, tokens) stay out of reach.

    Raises:
        ValueError: ``config.user`` does not exist.
    """
    env = {k: environ[k] for k in ("PATH", "HOME", "TMPDIR", "TZ") if k in environ}
    env.update(
        {
            "LANG": "C.UTF-8",
            "MPLBACKEND": "Agg",
            "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
            **config.env,
        }
    )
    return Sandbox(
        preload=[*config.preload, *MATH_MODULES],
        env=env,
        user=config.user,
        isolate=config.isolate,
        network=config.network,
        exposed=roots,
        spares=config.spares,
    )


def builtin_tools(
    config: BuiltinConfig,
    *,
    environ: Mapping[str, str],
    sandbox: Sandbox,
    excluded: Sequence[Path] = (),
) -> list[Tool]:
    """The enabled built-in tools.

    Args:
        config: The ``[builtin]`` settings.
        environ: The server's environment (shell and git pick allowed variables).
        sandbox: The fork server ``python`` and ``execute_script`` share.
        excluded: Folders inside the roots no tool reaches (tooldeck's data folder).

    Raises:
        ConfigError: ``config.disabled`` names a tool that is not built in.
    """
    roots = Roots(config.roots, excluded)
    tools: list[Tool] = [
        PythonTool(config.python, roots, sandbox),
        ExecuteScriptTool(config.python, roots, sandbox),
        FilesTool(config.files, roots),
        ShellTool(config.shell, roots, environ),
        WebTool(config.web),
        GitTool(config.git, roots, environ),
        GitHubTool(config.github),
        MathTool(sandbox, MATH_LIMITS),
        LLMTool(config.llm),
    ]
    names = [t.definition.name for t in tools]
    for name in config.disabled:
        if name not in names:
            near = closest_names(name, names)
            hint = f"; did you mean {', '.join(repr(n) for n in near)}?" if near else ""
            raise ConfigError(
                f"builtin.disabled: unknown tool {name!r}{hint} (built-in tools: {', '.join(names)})"
            )
    return [t for t in tools if t.definition.name not in config.disabled]
