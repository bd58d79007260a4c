"""LangChain tools both ways: tooldeck's as ``StructuredTool`` s, LangChain's as tooldeck's.

For example::

    from tooldeck.adapters.langchain import from_langchain, langchain_tools

    tools = await langchain_tools(runtime.view("support"))   # for a LangChain agent
    mine = from_langchain(wikipedia_tool)                     # register it with tooldeck

Out, each call runs through the view's stack (policies, confirmation, audit with the
call's provenance) and answers ``ToolResult.to_llm()``; the tool's JSON Schema is the
model-facing one. A tool a person must approve answers ``confirmation_required``
unless your ``ctx`` has a ``confirm`` callback (LangChain's human-in-the-loop
middleware lives in the ``langchain`` package; put it in front of these tools to ask
first). In, a LangChain tool keeps its name, description and argument schema; its
``ToolException`` s become ``execution`` errors with their message. Needs
``tooldeck[langchain]``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tooldeck.core.context import EMPTY_CONTEXT, ToolContext
from tooldeck.core.definition import ToolDefinition
from tooldeck.core.json_schema_tool import JsonSchemaTool
from tooldeck.core.names import safe_tool_name
from tooldeck.core.schema import model_schema
from tooldeck.exceptions import ConfigError, ToolFailure
from tooldeck.exporters.openai import openai_parameters

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool, StructuredTool

    from tooldeck.providers.base import ToolsProvider

__all__ = ["from_langchain", "langchain_tools"]

CHANNEL = "langchain"


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
    async def call(**arguments: Any) -> str:
        result = await view.execute(definition.name, arguments, base)
        return result.to_llm()

    return kind(
        name=safe_tool_name(definition.name),
        description=definition.description,
        args_schema=openai_parameters(definition, strict=False),
        coroutine=call,
    )


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
