"""LangChain tools both ways: tooldeck's as ``StructuredTool`` s, LangChain's as tooldeck's.

For example::

    from tooldeck.adapters.langchain import from_langchain, langchain_tools

    tools = await langchain_tools(runtime.view("support"))   # for a LangChain agent
    mine = from_langchain(wikipedia_tool)                     # register it with tooldeck

Out, each call runs through the view's stack (policies, confirmation, audit with the
call's provenance and the view's profile) and answers ``ToolResult.to_llm()``, in a
``ToolMessage`` whose ``status`` is ``"error"`` when the call failed; the tool's JSON
Schema is the model-facing one. A tool a person must approve answers ``confirmation_required``
unless your ``ctx`` has a ``confirm`` callback, or the agent has
``human_in_the_loop(tools)``: LangChain's own middleware, asking before exactly those
calls (a composite tool's ``confirm_actions`` only); a call it let through runs with
the approver ``langchain`` in tooldeck's audit::

    agent = create_agent(model, tools, middleware=[human_in_the_loop(tools)],
                         checkpointer=InMemorySaver())

In, a LangChain tool keeps its name, description and argument schema; its
``ToolException`` s become ``execution`` errors with their message. Needs
``tooldeck[langchain]`` (the middleware: the ``langchain`` package too).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Literal

from tooldeck.adapters._calls import approved_by, needs_approval
from tooldeck.core.context import EMPTY_CONTEXT, ToolContext
from tooldeck.core.definition import ToolDefinition
from tooldeck.core.json_schema_tool import JsonSchemaTool
from tooldeck.core.names import safe_tool_name
from tooldeck.core.schema import model_schema
from tooldeck.exceptions import ConfigError, ToolFailure
from tooldeck.exporters.openai import openai_parameters

if TYPE_CHECKING:
    from langchain.agents.middleware import HumanInTheLoopMiddleware
    from langchain_core.tools import BaseTool, StructuredTool

    from tooldeck.providers.base import ToolsProvider

__all__ = ["from_langchain", "human_in_the_loop", "langchain_tools"]

CHANNEL = "langchain"
"""The calls' channel, and the approver of a call the middleware let through."""

_LET_THROUGH: ContextVar[str | None] = ContextVar("tooldeck_langchain_let_through", default=None)
"""The name of the tool whose call ``human_in_the_loop``'s middleware is running."""


def _require() -> None:
    try:
        import langchain_core  # noqa: F401
    except ImportError:
        raise ConfigError(
            "the LangChain adapter needs langchain-core: pip install 'tooldeck[langchain]'"
        ) from None


async def langchain_tools(
    view: ToolsProvider, ctx: ToolContext | None = None
) -> list[StructuredTool]:
    """The view's tools as LangChain ``StructuredTool`` s (async; in the view's order).

    Args:
        view: A profile's view (``runtime.view(profile)``).
        ctx: The calls' context (user, profile, a ``confirm`` callback); the channel
            is ``langchain``. Give each agent run its own ``session_id``: the
            data-flow rules (``providers.flow``) follow a session's calls.

    Raises:
        ConfigError: ``langchain-core`` is not installed.
    """
    _require()
    from langchain_core.tools import StructuredTool

    base = (ctx or EMPTY_CONTEXT).derive(channel=CHANNEL)
    return [_structured(StructuredTool, view, base, d) for d in await view.definitions()]


def _structured(
    kind: type[StructuredTool], view: ToolsProvider, base: ToolContext, definition: ToolDefinition
) -> StructuredTool:
    """One view tool as a ``StructuredTool``.

    A failed call raises ``ToolException``, which the tool handles: the model gets
    ``to_llm()`` in a ``ToolMessage`` with ``status="error"``.
    """
    from langchain_core.tools import ToolException

    name = safe_tool_name(definition.name)

    async def call(**arguments: Any) -> str:
        ctx = base
        if _LET_THROUGH.get() == name and needs_approval(definition, arguments):
            ctx = approved_by(base, CHANNEL)  # the middleware asked, and a person said yes
        result = await view.execute(definition.name, arguments, ctx)
        if not result.success:
            raise ToolException(result.to_llm())
        return result.to_llm()

    rule = _approval_rule(definition)
    return kind(
        name=name,
        description=definition.description,
        args_schema=openai_parameters(definition, strict=False),
        coroutine=call,
        handle_tool_error=True,
        metadata={"tooldeck_asks": rule} if rule else None,
    )


def _approval_rule(definition: ToolDefinition) -> bool | list[str]:
    """True: every call asks; a list: the ``action`` s that ask (empty: none ask)."""
    return True if definition.requires_confirmation else list(definition.confirm_actions)


def human_in_the_loop(
    tools: Sequence[BaseTool],
    *,
    decisions: Sequence[Literal["approve", "edit", "reject"]] = ("approve", "edit", "reject"),
    interrupt_mode: Literal["batched", "per_call"] = "batched",
) -> HumanInTheLoopMiddleware:
    """LangChain's human-in-the-loop middleware, asking before the calls tooldeck would.

    Semantics:
        ``interrupt_on`` names each of ``tools`` (from ``langchain_tools``) that needs a
        person's approval; a composite tool asks only for its ``confirm_actions``
        (the middleware's ``when``). A call the middleware lets run (approved, or
        edited by the reviewer) runs with the approver ``langchain`` in tooldeck's
        audit; rejected, it never reaches tooldeck. Only calls that pass through this
        middleware are approved so: the same tools in an agent without it still
        answer ``confirmation_required``. The agent needs a checkpointer (LangGraph
        keeps the interrupted run there).

    Args:
        tools: The agent's tools; those not made by ``langchain_tools`` are left alone.
        decisions: What the reviewer may decide (``respond`` is not offered: it would
            answer for a tool that changes things).
        interrupt_mode: The middleware's: one interrupt for a turn's calls, or one each.

    Raises:
        ConfigError: the ``langchain`` package is not installed.
    """
    try:
        from langchain.agents.middleware import HumanInTheLoopMiddleware
    except ImportError:
        raise ConfigError(
            "human_in_the_loop needs LangChain's agents: pip install langchain"
        ) from None

    interrupt_on: dict[str, Any] = {}
    for tool in tools:
        rule = (tool.metadata or {}).get("tooldeck_asks")
        if rule is None:
            continue
        config: dict[str, Any] = {"allowed_decisions": list(decisions)}
        if rule is not True:
            actions = frozenset(rule)
            config["when"] = lambda request, actions=actions: (
                request.tool_call["args"].get("action") in actions
            )
        interrupt_on[tool.name] = config

    class _LetThrough(HumanInTheLoopMiddleware):
        async def awrap_tool_call(
            self, request: Any, handler: Callable[[Any], Awaitable[Any]]
        ) -> Any:
            async def run(let_through: Any) -> Any:
                token = _LET_THROUGH.set(let_through.tool_call["name"])
                try:
                    return await handler(let_through)
                finally:
                    _LET_THROUGH.reset(token)

            return await super().awrap_tool_call(request, run)

    return _LetThrough(interrupt_on, interrupt_mode=interrupt_mode)


def from_langchain(tool: BaseTool, *, source_id: str | None = None) -> JsonSchemaTool:
    """A LangChain tool as a tooldeck tool (register it like any other).

    Args:
        tool: A ``BaseTool`` (``@tool`` functions, ``StructuredTool``, community tools).
        source_id: Provenance for its results (``tool:<domain>:v<N>``), if it has one.

    Raises:
        ConfigError: ``langchain-core`` is not installed.
    """
    _require()
    from langchain_core.tools import ToolException

    schema = tool.tool_call_schema  # what a model fills in: injected arguments left out
    input_schema: dict[str, Any] = (
        dict(schema) if isinstance(schema, dict) else model_schema(schema)  # type: ignore[arg-type]
    )
    input_schema.setdefault("type", "object")

    async def run(arguments: dict[str, Any]) -> Any:
        try:
            return await tool.ainvoke(arguments)
        except ToolException as exc:
            raise ToolFailure(f"{tool.name}: {exc}") from None

    return JsonSchemaTool(
        name=tool.name,
        description=tool.description or tool.name,
        input_schema=input_schema,
        function=run,
        pass_dict=True,
        source_id=source_id,
        tags=("langchain",),
    )
