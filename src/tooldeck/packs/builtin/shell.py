"""``shell``: run a command with bash/sh (POSIX) or PowerShell (Windows) (seed 001).

Example::

    await tool.execute({"command": "ls -la | head -5", "cwd": "src"})
    # data: {"exit_code": 0, "stdout": "...", "stderr": "", "duration_ms": 7.2, ...}
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, field_validator

from tooldeck.core.context import ToolContext
from tooldeck.core.definition import ToolAnnotations
from tooldeck.core.result import ToolResult
from tooldeck.core.tool import BaseTool
from tooldeck.exceptions import ToolUnavailableError
from tooldeck.isolation.process import run_process
from tooldeck.packs.builtin.config import ShellConfig
from tooldeck.packs.builtin.roots import Roots

if TYPE_CHECKING:
    from tooldeck.packs.builtin.allow_list import CommandAllowList

__all__ = ["ShellRequest", "ShellResponse", "ShellTool"]


class ShellRequest(BaseModel):
    """Arguments of ``shell``."""

    command: str = Field(min_length=1, max_length=100_000, description="The command line to run.")
    cwd: str | None = Field(
        None, description="Working directory inside the allowed roots; default: the first root."
    )
    timeout_s: float | None = Field(
        None,
        gt=0,
        description="Seconds before the command is killed, up to the configured maximum.",
    )
    env: dict[str, str] = Field(
        default_factory=dict,
        description="Extra environment variables for this command (not PATH, LD_*, "
        "BASH_ENV, ENV, IFS, BASH_FUNC_* or others that change what runs).",
    )

    @field_validator("env")
    @classmethod
    def _safe_names(cls, value: dict[str, str]) -> dict[str, str]:
        from tooldeck.packs.builtin.allow_list import unsafe_env_name

        unsafe = sorted(name for name in value if unsafe_env_name(name))
        if unsafe:
            raise ValueError(
                f"cannot set {', '.join(unsafe)}: these variables change which program "
                "runs or inject code into the shell"
            )
        return value


class ShellResponse(BaseModel):
    """What a finished command returns (a non-zero exit code is not an error)."""

    exit_code: int
    """The command's exit code; negative: killed by that signal."""
    stdout: str
    """Standard output, cut after the configured size with a marker."""
    stderr: str
    """Standard error, cut the same way."""
    shell: str
    """The shell that ran the command."""
    duration_ms: float
    """Wall time."""


class ShellTool(BaseTool[ShellRequest, ToolResult]):
    """Runs a shell command; needs a human's confirmation by default.

    Semantics:
        POSIX: ``bash -c`` (``sh -c`` without bash); Windows: ``powershell -Command``.
        The command runs in its own process group, killed on timeout (``timeout``
        error with the partial output in details) and after it exits. Its environment
        holds only ``env_allow`` variables of the server's plus the call's ``env``.
        With ``allowed_commands`` set, every command of the line, as bash parses it,
        must be allowed and every file it writes must be inside the roots, or the call
        is ``denied`` (``allow_list.CommandAllowList``). ``env`` cannot set variables
        that change what runs (``validation``). A non-zero exit code is a success
        result with that ``exit_code``.

    Args:
        config: Timeout, output cap, allow-lists.
        roots: Where ``cwd`` may point.
        environ: The server's environment (the variables ``env_allow`` picks from).
    """

    effects = ("egress", "destructive")  # any program, the network included

    name = "shell"
    source_id = "tool:shell:v1"
    description = (
        "Run a shell command (bash on Linux/macOS, PowerShell on Windows) and return its "
        "exit code, stdout and stderr. Needs the user's approval."
    )
    RequestModel = ShellRequest
    ResponseModel = ShellResponse
    annotations = ToolAnnotations(
        title="Shell", read_only=False, destructive=True, idempotent=False, open_world=True
    )
    requires_confirmation = True
    tags = ("builtin", "shell")

    def __init__(self, config: ShellConfig, roots: Roots, environ: Mapping[str, str]) -> None:
        self.config = config
        self.roots = roots
        self.env = {k: environ[k] for k in config.env_allow if k in environ}
        self.timeout_s = config.timeout_s + 5
        self.allow_list: CommandAllowList | None = None
        if config.allowed_commands is not None:
            from tooldeck.packs.builtin.allow_list import CommandAllowList

            self.allow_list = CommandAllowList(
                config.allowed_commands, roots=roots, path=self.env.get("PATH")
            )

    def argv(self, command: str) -> list[str]:
        """The program and arguments that run ``command`` on this platform."""
        if sys.platform == "win32":  # pragma: no cover - Windows
            shell = shutil.which("pwsh") or "powershell"
            return [shell, "-NoProfile", "-NonInteractive", "-Command", command]
        return [shutil.which("bash") or "/bin/sh", "-c", command]

    async def execute_internal(self, request: ShellRequest, ctx: ToolContext) -> ToolResult:
        """Run the command (see the class docstring)."""
        cwd = self.roots.directory(request.cwd)
        if self.allow_list is not None:
            self.allow_list.check(request.command, cwd=cwd)
        limit = self.config.timeout_s
        timeout = min(request.timeout_s, limit) if request.timeout_s else limit
        argv = self.argv(request.command)
        try:
            done = await run_process(
                argv,
                cwd=cwd,
                env={**self.env, **request.env},
                timeout_s=timeout,
                max_output_bytes=self.config.max_output_bytes,
            )
        except OSError as exc:
            raise ToolUnavailableError(f"shell: cannot start {argv[0]}: {exc}") from None
        data: dict[str, Any] = {
            "stdout": done.stdout,
            "stderr": done.stderr,
            "shell": os.path.basename(argv[0]),
            "duration_ms": done.duration_ms,
        }
        if done.timed_out:
            lowered = (
                f" (timeout_s {request.timeout_s:g} was lowered to {limit:g} s, the "
                "configured maximum: [builtin.shell] timeout_s)"
                if request.timeout_s and request.timeout_s > limit
                else ""
            )
            return ToolResult.fail(
                "timeout",
                f"shell: the command did not finish within {timeout:g} s and was killed "
                f"with its process group{lowered}",
                details={**data, "timeout_s": timeout},
            )
        return ToolResult.ok({"exit_code": done.exit_code, **data})
