"""tooldeck tools as OpenAI Agents SDK ``FunctionTool`` objects.

For example::

    from agents import Agent, Runner
    from tooldeck.adapters.openai_agents import openai_agents_tools

    tools = await openai_agents_tools(runtime.view("support"), runtime.context(user="ana"))
    result = await Runner.run(Agent(name="support", tools=tools), "What is AAPL at?")

Each call runs through the view's stack (policies, confirmation, audit with the call's
provenance). The schemas are tooldeck's own strict form (``exporters.openai``): the SDK
converting MCP schemas itself falls back to non-strict for maps and a composite tool's
root union; here every tool with a strict form is strict. A tool a person must approve
gets ``needs_approval``: the SDK interrupts the run, and once your app approves
(``RunState.approve``), the call runs with that approval recorded as the approver
``openai-agents``. Needs ``tooldeck[openai-agents]``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tooldeck.adapters._calls import approved_by, needs_approval
from tooldeck.core.context import EMPTY_CONTEXT, ToolContext
from tooldeck.core.definition import ToolDefinition
from tooldeck.exceptions import ConfigError
from tooldeck.exporters.openai import to_openai_chat

if TYPE_CHECKING:
    from agents import FunctionTool

    from tooldeck.providers.base import ToolsProvider

__all__ = ["openai_agents_tools"]

APPROVER = "openai-agents"
"""The approver recorded for a call the SDK's ``needs_approval`` step approved."""


async def openai_agents_tools(
    view: ToolsProvider, ctx: ToolContext | None = None, *, strict: bool = True
) -> list[FunctionTool]:
    """The view's tools as ``FunctionTool`` s (one per tool, in the view's order).

    Args:
        view: A profile's view (``runtime.view(profile)``).
        ctx: The calls' context (user, profile, session); each call gets the SDK's
            ``tool_call_id`` as its ``request_id`` and the channel ``openai-agents``.
            Give each agent run its own ``session_id``: the data-flow rules
            (``providers.flow``) follow a session's calls (the SDK's tool context
            carries no run id to take one from).
        strict: Send strict schemas (tools whose arguments are a free-form map have
            none and are sent non-strict).

    Returns:
        The tools; a call answers the model with ``ToolResult.to_llm()`` (errors too:
        a tool-level failure is for the model to act on, never an exception).

    Raises:
        ConfigError: the ``openai-agents`` package is not installed.
    """
    try:
        from agents import FunctionTool
    except ImportError:
        raise ConfigError(
            "the OpenAI Agents SDK adapter needs the openai-agents package: "
            "pip install 'tooldeck[openai-agents]'"
        ) from None
    base = (ctx or EMPTY_CONTEXT).derive(channel=APPROVER)
    definitions = await view.definitions()
    exported = to_openai_chat(definitions, strict=strict)
    return [
        _function_tool(FunctionTool, view, base, d, e["function"])
        for d, e in zip(definitions, exported, strict=True)
    ]


def _function_tool(
    kind: type[FunctionTool],
    view: ToolsProvider,
    base: ToolContext,
    definition: ToolDefinition,
    function: dict[str, Any],
) -> FunctionTool:
    asks = definition.requires_confirmation or bool(definition.confirm_actions)

    async def invoke(tool_ctx: Any, arguments: str) -> str:
        ctx = base.derive(request_id=tool_ctx.tool_call_id)
        if needs_approval(definition, arguments):
            ctx = approved_by(ctx, APPROVER)  # the SDK only invokes it once approved
        result = await view.execute(definition.name, arguments or "{}", ctx)
        return result.to_llm()

    async def approval(run_ctx: Any, arguments: dict[str, Any], call_id: str) -> bool:
        return needs_approval(definition, arguments)

    return kind(
        name=function["name"],
        description=function["description"],
        params_json_schema=function["parameters"],
        on_invoke_tool=invoke,
        strict_json_schema=bool(function.get("strict")),
        needs_approval=approval if asks else False,
    )
