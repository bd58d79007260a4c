"""An installed module's tools and context adapters as the server serves them: each use sandboxed.

``ModuleTool`` and ``ModuleAdapter`` hold no module code: a definition (or an adapter's
category and platform) read from the module in the sandbox (``runner.Description``),
and the version's files. Each call, or fetch, runs the module in a fresh sandboxed
process (``runner.ModuleSandbox``) and turns what comes back into an envelope here:
what the code returns is checked like any foreign data (a result that is not a
``ToolResult`` is an ``execution`` error), and what the server vouches for (the
metadata, the version, the data-flow labels) is set by the server, not by the code.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from time import perf_counter
from typing import Any

from pydantic import ValidationError

from tooldeck.core.context import EMPTY_CONTEXT, ToolContext, principal_of
from tooldeck.core.definition import ToolDefinition
from tooldeck.core.extensions import AdapterResult
from tooldeck.core.result import ResultMetadata, ToolResult, trusted_metadata
from tooldeck.core.tool import Arguments, Tool, error_result
from tooldeck.core.validation import parse_arguments
from tooldeck.exceptions import InvalidArgumentsError
from tooldeck.isolation.sandbox import SandboxLimits, SandboxOutcome
from tooldeck.packs.modules.runner import InstalledVersion, ModuleSandbox

__all__ = ["ModuleAdapter", "ModuleTool", "served_definition"]


def served_definition(described: Mapping[str, Any], version: InstalledVersion) -> ToolDefinition:
    """The definition the server serves for a tool a module described.

    The version is the server's (``<manifest version>+<version id>``), the tool is tagged
    ``module:<id>``, and a module that declares hosts gets the labels of a tool that
    reaches the web (results ``untrusted``, effect ``egress``, ``open_world``) on top of
    its own: the code cannot declare its way past the data-flow rules.

    Raises:
        pydantic.ValidationError: the description is not a ``ToolDefinition``.
    """
    own = ToolDefinition.model_validate(described)
    update: dict[str, Any] = {
        "version": version.version,
        "tags": (*own.tags, f"module:{version.module_id}"),
        "provider": None,
        "server_id": None,
    }
    if version.manifest.hosts:
        update["labels"] = tuple(dict.fromkeys((*(own.labels or ()), "untrusted")))
        update["effects"] = tuple(dict.fromkeys((*(own.effects or ()), "egress")))
        update["annotations"] = own.annotations.model_copy(update={"open_world": True})
    return own.model_copy(update=update)


class ModuleTool(Tool):
    """An installed module's tool: every call runs the module in the sandbox.

    Semantics:
        The call's arguments go to a fresh sandboxed process with the version's files;
        the module's own tool validates and runs them there, for ``ctx.user``, and may
        read that caller's key for this module (``caller_secret(ctx)``), nothing else
        of the server. The result's ``source_id`` is kept when it is the module's own
        (``module:<id>...``), else prefixed with ``module:<id>:`` (a module cannot cite
        as another tool), and an error type only the server gives
        (``confirmation_required``, ``circuit_open``) is read as ``execution``. A run
        that breaks a sandbox limit (``timeout_s``, memory) is an ``execution`` or
        ``timeout`` error naming the limit.

    Args:
        definition: What the server serves (``served_definition``).
        version: The installed version it runs.
        sandbox: Gives the module sandbox (a service, made on first use).
        limits: The limits of one call.
    """

    def __init__(
        self,
        definition: ToolDefinition,
        version: InstalledVersion,
        sandbox: Callable[[], ModuleSandbox],
        limits: SandboxLimits,
    ) -> None:
        self._definition = definition
        self.module = version
        self.sandbox = sandbox
        self.limits = limits

    @property
    def definition(self) -> ToolDefinition:
        """The tool's definition, with the version that serves it."""
        return self._definition

    async def execute(
        self, arguments: Arguments = None, ctx: ToolContext | None = None
    ) -> ToolResult:
        """Run one call in the sandbox (see the class docstring); never raises."""
        ctx = ctx or EMPTY_CONTEXT
        start = perf_counter()
        name = self._definition.name

        def meta() -> ResultMetadata:
            took = round((perf_counter() - start) * 1000, 3)
            return trusted_metadata(name, self._definition.version, ctx.request_id, took)

        try:
            job = {
                "op": "call",
                "name": name,
                "arguments": parse_arguments(arguments),
                "user": ctx.user,
                "request_id": ctx.request_id,
            }
            json.dumps(job["arguments"])  # what the sandbox is sent must be JSON
            outcome = await self.sandbox().call(
                self.module, job, limits=self.limits, principal=principal_of(ctx)
            )
        except InvalidArgumentsError as exc:
            return error_result("validation", str(exc), meta())
        except (TypeError, ValueError) as exc:  # arguments json cannot send
            return error_result("validation", f"arguments must be JSON data: {exc}", meta())
        except RuntimeError as exc:
            return error_result("unavailable", f"the module sandbox: {exc}", meta(), retryable=True)
        return self._envelope(outcome, meta())

    def _envelope(self, outcome: SandboxOutcome, metadata: ResultMetadata) -> ToolResult:
        """The ``ToolResult`` of a sandboxed call, built and checked here."""
        failed = _failure(outcome)
        if failed is not None:
            return error_result(*failed, metadata)
        body = outcome.result.get("result") if isinstance(outcome.result, dict) else None
        if not isinstance(body, dict):
            return error_result("execution", "the module answered no result", metadata)
        source = body.get("source_id")
        own = f"module:{self.module.module_id}"
        if isinstance(source, str) and source != own and not source.startswith(own + ":"):
            body = {**body, "source_id": f"{own}:{source}"}
        error = body.get("error")
        if isinstance(error, dict) and error.get("type") in _SERVERS_VERDICTS:
            body = {**body, "error": {**error, "type": "execution"}}  # not the module's to say
        try:
            return ToolResult.model_validate({**body, "metadata": metadata})
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(str(p) for p in problem["loc"])
            return error_result(
                "execution", f"the module's result is not a ToolResult: {where}: {problem['msg']}",
                metadata,
            )  # fmt: skip


_SERVERS_VERDICTS = ("confirmation_required", "circuit_open")
"""Error types only the server's own layers give (a module's are read as ``execution``)."""


def _failure(outcome: SandboxOutcome) -> tuple[str, str] | None:
    """``(error type, message)`` for a sandboxed run that gave no answer, or None."""
    if outcome.error is None:
        errors = outcome.result.get("errors") if isinstance(outcome.result, dict) else None
        if errors:
            return "unavailable", "the module does not load: " + "; ".join(map(str, errors))
        return None
    error = outcome.error
    kind = "timeout" if error.kind == "timeout" else "execution"
    return kind, "\n".join(p for p in (error.message, error.traceback) if p)


class ModuleAdapter:
    """An installed module's context adapter: each fetch runs the module in the sandbox.

    What the context pack reads of a ``ContextAdapter`` (``category``, ``platform``,
    ``async fetch()``, ``normalize_for_tools``). The module's own
    ``normalize_for_tools`` runs in the sandbox with each fetch, over that fetch's
    records; ``normalize_for_tools`` here gives that shape when asked about those
    records. Records of several sources merged (another module adapter of the same
    category listed first) are shaped as ``{"summary": {"records": n}}``.

    Args:
        category: The manifest's category.
        platform: What the adapter says it reads.
        index: Its place among the entry file's adapters.
        version: The installed version it runs.
        sandbox: Gives the module sandbox.
        limits: The limits of one fetch.
    """

    def __init__(
        self,
        *,
        category: str,
        platform: str,
        index: int,
        version: InstalledVersion,
        sandbox: Callable[[], ModuleSandbox],
        limits: SandboxLimits,
    ) -> None:
        self.category, self.platform, self.index = category, platform, index
        self.module, self.sandbox, self.limits = version, sandbox, limits
        self._shaped: tuple[Sequence[Any], dict[str, Any]] | None = None

    async def fetch(self) -> AdapterResult:
        """The adapter's fetch, run in the sandbox; never raises for the source."""
        try:
            job = {"op": "fetch", "name": self.index, "arguments": {}, "user": None,
                   "request_id": None}  # fmt: skip
            outcome = await self.sandbox().call(
                self.module, job, limits=self.limits, principal=None
            )
        except RuntimeError as exc:
            return self._failed(f"the module sandbox: {exc}")
        failed = _failure(outcome)
        answer = outcome.result if isinstance(outcome.result, dict) else {}
        fetched = answer.get("fetched")
        if failed is not None or not isinstance(fetched, dict):
            return self._failed(failed[1] if failed else "the module answered no records")
        try:
            values = {**fetched, "category": self.category, "platform": self.platform}
            values["fetched_at"] = datetime.fromisoformat(str(values["fetched_at"]))
            result = AdapterResult(**values)
        except (TypeError, ValueError, KeyError) as exc:
            return self._failed(f"the module's fetch is not an AdapterResult: {exc}")
        self._shaped = (result.data, answer.get("shaped") or {})
        return result

    def _failed(self, why: str) -> AdapterResult:
        return AdapterResult(False, self.category, self.platform, error=why)

    def normalize_for_tools(
        self, records: Sequence[Any], *, include_alerts: bool = True
    ) -> dict[str, Any]:
        """The module's shape of its last fetch's records (see the class docstring)."""
        if self._shaped is not None and list(records) == list(self._shaped[0]):
            shaped = self._shaped[1].get("alerts" if include_alerts else "plain")
            if isinstance(shaped, dict):
                return shaped
        return {"summary": {"records": len(records)}}
