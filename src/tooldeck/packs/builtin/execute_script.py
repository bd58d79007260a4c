"""``execute_script``: Python that calls other tools, in the same sandbox (seed 002 code mode).

Example::

    await tool.execute({"code": '''
    quote = tools.get_quotes(symbol="AAPL")
    held = tools.get_positions(symbol="AAPL")
    result = quote["quotes"][0]["price"] * sum(p["quantity"] for p in held["positions"])
    '''}, ctx)
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from tooldeck.core.context import ToolContext
from tooldeck.core.result import ToolResult
from tooldeck.core.tool import ToolViews
from tooldeck.exceptions import ToolUnavailableError
from tooldeck.packs.builtin.python import PythonRequest, PythonResponse, PythonTool

__all__ = ["ExecuteScriptResponse", "ExecuteScriptTool"]


class ExecuteScriptResponse(PythonResponse):
    """What a successful script returns."""

    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    """Each tool call the script made: name, arguments, status, error_type."""


class ExecuteScriptTool(PythonTool):
    """Runs a Python script whose ``tools.<name>(**arguments)`` calls other tools.

    Semantics:
        Each call made by the script travels back to the host and through the
        provider stack of the caller's profile (``ToolViews`` service): the profile's
        filter, confirmation, policies and audit apply, so a script reaches exactly
        the tools its caller could call. A call returns the result's ``data`` (its
        ``output`` text when there is no data) or raises ``ToolCallError`` with the
        error's ``type`` and ``message``. Scripts cannot call ``execute_script``
        itself. The result (success or error) lists every call in ``tool_calls``.
        Everything else is as for ``python``.
    """

    name = "execute_script"
    source_id = "tool:execute_script:v1"
    description = (
        "Run a Python script that calls other tools as functions: "
        "`tools.get_quotes(symbol='AAPL')` returns that tool's data, or raises "
        "ToolCallError (with .type and .message) when the call fails; "
        "`tools.call(name, arguments)` does the same for any name. Use it to combine "
        "several tool calls and compute over their results in one step. Assign the "
        "answer to `result`. Runs in the same isolated process as the python tool, "
        "with the same pre-imported modules."
    )
    ResponseModel = ExecuteScriptResponse
    tags = ("builtin", "code")

    async def execute_internal(self, request: PythonRequest, ctx: ToolContext) -> ToolResult:
        """Run the script, serving its tool calls through the caller's view."""
        views = ctx.services.get_optional(ToolViews)  # type: ignore[type-abstract]
        if views is None:
            raise ToolUnavailableError(
                "execute_script needs the provider stack; register a ToolViews service "
                "(the runtime does this)"
            )
        view = views.view(ctx.profile)
        names = [n for n in await views.names(ctx.profile) if n != self.name]

        async def on_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            if name == self.name:
                return {
                    "status": "error",
                    "error": {"type": "denied", "message": "a script cannot call execute_script"},
                }
            result = await view.execute(name, arguments, ctx.derive(request_id=None))
            return result.model_dump(
                mode="json", include={"status", "data", "output", "error", "source_id", "as_of"}
            )

        outcome = await self.run(request, names, on_call, ctx)
        return self.to_result(outcome, tool_calls=outcome.calls)
