"""OpenAI function calling: chat-completions and responses tool formats, tool messages.

``tools = to_openai_chat(definitions)`` goes to ``client.chat.completions.create(tools=...)``;
``await run_tool_calls(provider, message.tool_calls)`` executes the calls the model made
(concurrently) and returns the ``role: "tool"`` messages to append.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from typing import Any

from tooldeck.core.context import ToolContext
from tooldeck.core.definition import ToolDefinition
from tooldeck.core.names import safe_tool_name
from tooldeck.core.result import DEFAULT_MAX_LLM_CHARS, ToolResult
from tooldeck.core.schema import is_free_form_map, to_strict
from tooldeck.core.tool import ToolExecutor
from tooldeck.exporters._common import exported, model_facing

__all__ = [
    "openai_parameters",
    "run_tool_calls",
    "to_openai_chat",
    "to_openai_responses",
    "tool_message",
]


def openai_parameters(definition: ToolDefinition, *, strict: bool = True) -> dict[str, Any]:
    """The ``parameters`` schema: model-facing, and in strict form when ``strict``.

    A tool whose arguments are a free-form map (``{"type": "object"}``, ``properties:
    {}``) has no strict form (strict mode would close it to no arguments at all), so
    it is given as it is; its function is then exported with ``strict: false``.
    """
    schema = model_facing(definition.input_schema)
    return to_strict(schema) if strict and _strictable(definition) else schema


def _strictable(definition: ToolDefinition) -> bool:
    """Whether strict mode can state the tool's arguments: not a free-form map at the root."""
    return not is_free_form_map(definition.input_schema)


def to_openai_chat(
    definitions: Iterable[ToolDefinition], *, strict: bool = True
) -> list[dict[str, Any]]:
    """Chat-completions ``tools``: ``{"type": "function", "function": {...}}`` each.

    Names are the format-safe aliases (``core.names.safe_tool_name``); strict mode makes
    every property required, optional ones nullable (``core.schema.to_strict``); a tool
    whose arguments are a free-form map is exported without ``strict`` (``openai_parameters``).
    """

    def build(d: ToolDefinition) -> dict[str, Any]:
        function: dict[str, Any] = {
            "name": safe_tool_name(d.name),
            "description": d.description,
            "parameters": openai_parameters(d, strict=strict),
        }
        if strict and _strictable(d):
            function["strict"] = True
        return {"type": "function", "function": function}

    return exported(definitions, f"openai-chat:{strict}", build)


def to_openai_responses(
    definitions: Iterable[ToolDefinition], *, strict: bool = True
) -> list[dict[str, Any]]:
    """Responses-API ``tools``: ``{"type": "function", "name", "description", "parameters", "strict"}``."""

    def build(d: ToolDefinition) -> dict[str, Any]:
        return {
            "type": "function",
            "name": safe_tool_name(d.name),
            "description": d.description,
            "parameters": openai_parameters(d, strict=strict),
            "strict": strict and _strictable(d),
        }

    return exported(definitions, f"openai-responses:{strict}", build)


def tool_message(
    tool_call_id: str, result: ToolResult, max_chars: int = DEFAULT_MAX_LLM_CHARS
) -> dict[str, Any]:
    """The chat ``{"role": "tool", "tool_call_id", "content"}`` message for ``result``."""
    return {"role": "tool", "tool_call_id": tool_call_id, "content": result.to_llm(max_chars)}


def _call_parts(call: Any) -> tuple[str, str, str]:
    if isinstance(call, dict):
        fn = call.get("function") or {}
        return str(call.get("id")), str(fn.get("name")), fn.get("arguments") or "{}"
    return call.id, call.function.name, call.function.arguments or "{}"


async def run_tool_calls(
    executor: ToolExecutor,
    tool_calls: Sequence[Any] | None,
    ctx: ToolContext | None = None,
    *,
    max_chars: int = DEFAULT_MAX_LLM_CHARS,
) -> list[dict[str, Any]]:
    """Execute a chat message's ``tool_calls`` concurrently; return the tool messages, in order.

    Args:
        executor: A registry or provider stack.
        tool_calls: ``openai`` ``ChatCompletionMessageToolCall`` objects or their dicts.
        ctx: Base context; each call gets ``request_id = tool_call.id``.
        max_chars: Cap on each message's content (``ToolResult.to_llm``).
    """
    base = ctx or ToolContext()
    parts = [_call_parts(c) for c in tool_calls or ()]
    results = await asyncio.gather(
        *(
            executor.execute(name, args, base.derive(request_id=call_id))
            for call_id, name, args in parts
        )
    )
    return [
        tool_message(call_id, r, max_chars)
        for (call_id, _, _), r in zip(parts, results, strict=True)
    ]
