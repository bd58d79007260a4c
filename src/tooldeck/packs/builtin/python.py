"""``python``: run Python in a fresh, limited process (seed 001 PythonTool).

Example::

    await tool.execute({"code": "result = sum(x)", "context": {"x": [1, 2, 3]}})
    # data: {"result": 6, "stdout": "", "stderr": "", "warnings": [], "duration_ms": 4.1}
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pydantic import BaseModel, Field, field_validator

from tooldeck.core.context import ToolContext
from tooldeck.core.definition import ToolAnnotations
from tooldeck.core.result import Artifact, ToolResult
from tooldeck.core.tool import BaseTool
from tooldeck.exceptions import ToolUnavailableError
from tooldeck.isolation.sandbox import CallHandler, Sandbox, SandboxLimits, SandboxOutcome
from tooldeck.packs.builtin.config import PythonConfig
from tooldeck.packs.builtin.roots import Roots

__all__ = ["PythonRequest", "PythonResponse", "PythonTool"]

_DETAIL_CHARS = 4000


class PythonRequest(BaseModel):
    """Arguments of ``python``."""

    code: str = Field(
        min_length=1,
        max_length=200_000,
        description="Python source; assign the answer to `result`.",
    )
    context: dict[str, Any] = Field(
        default_factory=dict,
        description="Values bound as top-level variables of the code (JSON values).",
        json_schema_extra={"propertyNames": {"pattern": "^[A-Za-z_][A-Za-z0-9_]*$"}},
    )
    cwd: str | None = Field(
        None,
        max_length=4096,
        description="Working directory inside the allowed roots; default: a new empty "
        "temporary directory.",
    )
    timeout_s: float | None = Field(
        None, gt=0, description="Wall-clock limit in seconds, up to the configured maximum."
    )

    @field_validator("context")
    @classmethod
    def _identifiers(cls, value: dict[str, Any]) -> dict[str, Any]:
        bad = [k for k in value if not k.isidentifier()]
        if bad:
            raise ValueError(f"context keys must be Python identifiers; not: {bad}")
        return value


class PythonResponse(BaseModel):
    """What a successful run returns."""

    result: Any = None
    """The code's ``result`` variable (JSON; pandas/numpy values converted)."""
    stdout: str = ""
    """Printed output, cut after the configured size with a marker."""
    stderr: str = ""
    """Error output, cut the same way."""
    warnings: list[str] = Field(default_factory=list)
    """Conversions applied to ``result``."""
    duration_ms: float = 0.0
    """Wall time of the run."""


class PythonTool(BaseTool[PythonRequest, ToolResult]):
    """Runs Python code in a separate process with time, CPU, memory and output limits.

    Needs a human's confirmation by default, like ``shell`` and ``execute_script``
    (``[policy.tools.python] requires_confirmation = false`` relaxes it for a trusted
    setup).

    Semantics:
        Each call runs in a fresh namespace in a new process forked from a warm
        server (``sandbox.Sandbox``): nothing persists between calls, and a crash,
        ``os._exit`` or endless loop in the code only ends that process. Errors:
        an exception in the code → ``execution`` with the code's own traceback (line
        numbers as submitted); the wall or CPU limit → ``timeout``; the memory limit →
        ``execution`` with ``details.limit = "memory_mb"``; a result that is not JSON
        → ``execution`` naming the type. Open matplotlib figures come back as PNG
        artifacts.

    Args:
        config: Limits and preloaded modules.
        roots: Where ``cwd`` may point.
        sandbox: The fork server (shared with ``execute_script``).
    """

    name = "python"
    source_id = "tool:python:v1"
    description = (
        "Run Python code in an isolated process and return the value of `result`. Each "
        "call starts from an empty namespace: variables do NOT persist between calls, so "
        "pass data in `context` (keys become variables) or re-read it from files. "
        "Pre-imported: os, sys, json, re, pathlib, shutil, subprocess, datetime, time, "
        "random, base64, hashlib, tempfile, csv, and pd (pandas), np (numpy), plt "
        "(matplotlib) when installed; open figures are returned as PNG images. On long "
        "work, report_progress(done, total, message) tells the user how far it is."
    )
    RequestModel = PythonRequest
    ResponseModel = PythonResponse
    annotations = ToolAnnotations(
        title="Run Python", read_only=False, destructive=True, idempotent=False, open_world=True
    )
    tags = ("builtin", "code")
    requires_confirmation = True  # runs arbitrary code: a human approves (relax per policy)

    def __init__(self, config: PythonConfig, roots: Roots, sandbox: Sandbox) -> None:
        self.config = config
        self.roots = roots
        self.sandbox = sandbox
        self.timeout_s = config.timeout_s + 5  # the run's own limit reports first

    def limits(self, timeout_s: float | None) -> SandboxLimits:
        """The configured limits, the wall time lowered to ``timeout_s`` if asked."""
        config = self.config
        wall = min(timeout_s, config.timeout_s) if timeout_s else config.timeout_s
        return SandboxLimits(
            timeout_s=wall,
            cpu_s=config.cpu_s,
            memory_mb=config.memory_mb,
            max_output_bytes=config.max_output_bytes,
            max_processes=config.max_processes,
            max_file_mb=config.max_file_mb,
        )

    async def execute_internal(self, request: PythonRequest, ctx: ToolContext) -> ToolResult:
        """Run the code once (see the class docstring)."""
        return self.to_result(await self.run(request, None, None, ctx))

    async def run(
        self,
        request: PythonRequest,
        tools: list[str] | None,
        on_call: CallHandler | None,
        ctx: ToolContext | None = None,
    ) -> SandboxOutcome:
        """Run ``request`` in the sandbox (see ``Sandbox.run`` for ``tools``, ``on_call``).

        The code's ``report_progress(progress, total, message)`` reports ``ctx`` 's
        progress (``ToolContext.report_progress``).

        Raises:
            ToolUnavailableError: the sandbox's fork server cannot start.
            InvalidArgumentsError, ToolDeniedError: ``cwd`` is not a directory in the roots.
        """
        cwd = None if request.cwd is None else self.roots.directory(request.cwd)
        try:
            outcome = await self.sandbox.run(
                request.code,
                context=request.context,
                cwd=cwd,
                limits=self.limits(request.timeout_s),
                tools=tools,
                on_call=on_call,
                on_progress=ctx.report_progress if ctx is not None else None,
            )
        except RuntimeError as exc:
            raise ToolUnavailableError(f"{self.name}: {exc}") from None
        maximum = self.config.timeout_s
        if request.timeout_s is not None and request.timeout_s > maximum:  # say so
            note = (
                f"timeout_s {request.timeout_s:g} was lowered to {maximum:g} s, the "
                "configured maximum ([builtin.python] timeout_s)"
            )
            outcome.warnings.append(note)
            if outcome.error is not None and outcome.error.kind == "timeout":
                outcome.error = dataclasses.replace(
                    outcome.error, message=f"{outcome.error.message} ({note})"
                )
        return outcome

    def to_result(self, outcome: SandboxOutcome, **extra: Any) -> ToolResult:
        """The ``ToolResult`` of a run: data on success, a typed error otherwise.

        ``extra`` fields are added to the data, or to the error's details.
        """
        error = outcome.error
        if error is None:
            data = PythonResponse(
                result=outcome.result,
                stdout=outcome.stdout,
                stderr=outcome.stderr,
                warnings=outcome.warnings,
                duration_ms=outcome.duration_ms,
            ).model_dump(mode="json")
            return ToolResult.ok({**data, **extra}, artifacts=_figures(outcome.figures))
        message = f"{self.name}: {error.message}"
        if error.traceback:
            message += "\n" + error.traceback.rstrip()
        if outcome.stderr and error.kind != "exception":
            message += "\nstderr:\n" + outcome.stderr[-_DETAIL_CHARS:]
        details: dict[str, Any] = {
            "kind": error.kind,
            "limit": error.limit,
            "traceback": error.traceback,
            "stdout": outcome.stdout[-_DETAIL_CHARS:],
            "stderr": outcome.stderr[-_DETAIL_CHARS:],
            "duration_ms": outcome.duration_ms,
            **extra,
        }
        kind = "timeout" if error.kind in ("timeout", "cpu") else "execution"
        return ToolResult.fail(kind, message, details=details)


def _figures(figures: list[str]) -> list[Artifact]:
    return [
        Artifact(
            kind="image",
            uri=f"data:image/png;base64,{png}",
            mime_type="image/png",
            name=f"figure-{n}.png",
        )
        for n, png in enumerate(figures, 1)
    ]
