"""tooldeck tools as a pydantic-ai toolset.

For example::

    from pydantic_ai import Agent
    from tooldeck.adapters.pydantic_ai import ToolDeckToolset

    agent = Agent("openai:gpt-5", toolsets=[ToolDeckToolset(runtime.view("support"))])

Each call runs through the view's stack (policies, confirmation, audit with the call's
provenance). A tool a person must approve raises pydantic-ai's ``ApprovalRequired``:
the run ends with ``DeferredToolRequests`` (give the agent ``output_type=[str,
DeferredToolRequests]``), and when you resume it with ``DeferredToolResults(approvals=
{call_id: True})`` the call runs, recorded with the approver ``pydantic-ai``; a denial
never reaches tooldeck. Needs ``tooldeck[pydantic-ai]``.
"""

from __future__ import annotations

from typing import Any

from tooldeck.adapters._calls import approved_by, needs_approval
from tooldeck.core.context import EMPTY_CONTEXT, ToolContext
from tooldeck.core.definition import ToolDefinition as Definition
from tooldeck.core.names import safe_tool_name
from tooldeck.exceptions import ConfigError
from tooldeck.exporters.openai import openai_parameters
from tooldeck.providers.base import ToolsProvider

try:
    from pydantic_ai.exceptions import ApprovalRequired
    from pydantic_ai.tools import RunContext, ToolDefinition
    from pydantic_ai.toolsets import AbstractToolset
    from pydantic_ai.toolsets.abstract import ToolsetTool
    from pydantic_core import SchemaValidator, core_schema
except ImportError:  # pragma: no cover - the extra is missing
    raise ConfigError(
        "the pydantic-ai adapter needs pydantic-ai: pip install 'tooldeck[pydantic-ai]'"
    ) from None

__all__ = ["ToolDeckToolset"]

APPROVER = "pydantic-ai"
"""The approver recorded for a call approved through deferred tool results."""

_ARGUMENTS = SchemaValidator(core_schema.dict_schema())
"""pydantic-ai checks that the arguments are an object; tooldeck validates the rest
(with its own errors, which the model sees)."""


class ToolDeckToolset(AbstractToolset[Any]):
    """A profile's view of tooldeck's tools as a pydantic-ai toolset.

    Semantics:
        ``get_tools`` lists the view's tools under their format-safe names
        (``core.names.safe_tool_name``) with their model-facing schemas; a tool's
        ``source_id`` is in the definition's ``metadata``. ``call_tool`` runs the call
        with the run's ``tool_call_id`` as its ``request_id``, in the session
        ``pydantic-ai:<conversation_id>`` unless ``ctx`` names one (so the data-flow
        rules follow the conversation, across a resume after an approval:
        ``providers.flow``), and answers
        ``ToolResult.to_llm()`` (errors too: a tool-level failure is for the model to
        act on, never an exception).

    Args:
        view: A profile's view (``runtime.view(profile)``).
        ctx: The calls' context (user, profile, session); the channel is
            ``pydantic-ai``.
        id: The toolset's id (durable execution needs one).
    """

    def __init__(
        self, view: ToolsProvider, ctx: ToolContext | None = None, *, id: str | None = None
    ) -> None:
        self.view = view
        self.ctx = (ctx or EMPTY_CONTEXT).derive(channel=APPROVER)
        self._id = id
        self._listed: dict[str, Definition] = {}  # by safe name, as last listed

    @property
    def id(self) -> str | None:
        """The id given, if any."""
        return self._id

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        """The view's tools, by their format-safe names."""
        tools: dict[str, ToolsetTool[Any]] = {}
        listed: dict[str, Definition] = {}
        for definition in await self.view.definitions():
            name = safe_tool_name(definition.name)
            listed[name] = definition
            tools[name] = ToolsetTool(
                toolset=self,
                tool_def=ToolDefinition(
                    name=name,
                    description=definition.description,
                    parameters_json_schema=openai_parameters(definition, strict=False),
                    metadata={"source_id": definition.source_id},
                ),
                max_retries=1,
                args_validator=_ARGUMENTS,
            )
        self._listed = listed
        return tools

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        """Run the call; ``ApprovalRequired`` first for a call a person must approve."""
        definition = self._listed.get(name)
        real = definition.name if definition is not None else name
        conversation = ctx.conversation_id or ctx.run_id  # the same across a deferred resume
        session = self.ctx.session_id or (f"pydantic-ai:{conversation}" if conversation else None)
        call_ctx = self.ctx.derive(request_id=ctx.tool_call_id, session_id=session)
        if definition is not None and needs_approval(definition, tool_args):
            if not ctx.tool_call_approved:
                raise ApprovalRequired(metadata={"tool": real, "arguments": tool_args})
            call_ctx = approved_by(call_ctx, APPROVER)
        result = await self.view.execute(real, tool_args, call_ctx)
        return result.to_llm()
