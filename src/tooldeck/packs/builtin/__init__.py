"""The built-in tools (seeds 000, 001, 002).

python, execute_script, files, shell, web, git, github, math, llm.

Each is a ``BaseTool``/``CompositeTool`` with typed requests, annotations and
confirmation defaults (shell; files write; git commit; github create_issue).
``builtin_tools`` builds them from ``BuiltinConfig``; the ``BuiltinPack`` registers
them and the runtime closes the ``Sandbox`` on exit.

Names load on first use (``__getattr__``), so that ``BuiltinConfig`` (read by
``tooldeck.config``) needs none of the ``[builtin]`` extra's libraries.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "CALLER_CODE_TOOLS",
    "AddressGuard",
    "BuiltinConfig",
    "ExecuteScriptTool",
    "FilesTool",
    "GitHubTool",
    "GitTool",
    "LLMTool",
    "MathTool",
    "PythonTool",
    "Roots",
    "Sandbox",
    "SandboxLimits",
    "ShellTool",
    "WebTool",
    "builtin_tools",
    "make_sandbox",
    "parse_math",
]

_HOMES = {
    "CALLER_CODE_TOOLS": "toolset",
    "AddressGuard": "tooldeck.isolation.address_guard",
    "BuiltinConfig": "config",
    "ExecuteScriptTool": "execute_script",
    "FilesTool": "files",
    "GitHubTool": "github",
    "GitTool": "git",
    "LLMTool": "llm",
    "MathTool": "math_solver",
    "PythonTool": "python",
    "Roots": "roots",
    "Sandbox": "tooldeck.isolation.sandbox",
    "SandboxLimits": "tooldeck.isolation.sandbox",
    "ShellTool": "shell",
    "WebTool": "web",
    "builtin_tools": "toolset",
    "make_sandbox": "toolset",
    "parse_math": "math_solver",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = home if home.startswith("tooldeck.") else f"{__name__}.{home}"
    return getattr(importlib.import_module(module), name)
