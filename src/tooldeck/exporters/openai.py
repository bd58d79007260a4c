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
from tooldeck.core.schema import is_free_form_map, takes_no_arguments, to_strict
from tooldeck.core.tool import ToolExecutor
from tooldeck.exporters._common import exported, model_facing

__all__ = [
    "openai_parameters",
    "run_tool_calls",
    "to_openai_chat",
    "to_openai_responses",
    "tool_message",
]


STRICT_DEPTH = 10
"""The deepest nesting OpenAI's strict mode accepts (its structured outputs' "up to 10
levels of nesting"); a deeper schema fails the whole request. Counted here as objects and
arrays along a path, the root included (erring towards non-strict)."""


def openai_parameters(definition: ToolDefinition, *, strict: bool = True) -> dict[str, Any]:
    """The ``parameters`` schema: model-facing, and in strict form when it has one.

    No strict form (the tool is then exported with ``strict: false``): a free-form map
    at the root (``{"type": "object"}``: strict mode would close it to no arguments at
    all), or a schema nested deeper than ``STRICT_DEPTH``. A root of ``properties: {}``
    is a tool with no arguments (``core.schema.takes_no_arguments``): strict, closed.
    """
    return _parameters(definition, strict)[0]


def _parameters(definition: ToolDefinition, strict: bool) -> tuple[dict[str, Any], bool]:
    """(the parameters, whether they are in strict form); see ``openai_parameters``."""
    schema = model_facing(definition.input_schema)
    root = definition.input_schema
    if not strict or (is_free_form_map(root) and not takes_no_arguments(root)):
        return schema, False
    converted = to_strict(schema)
    if _depth(converted) > STRICT_DEPTH:
        return schema, False
    return converted, True


def _depth(node: Any) -> int:
    """Objects and arrays nested along the deepest path of ``node``."""
    if isinstance(node, list):
        return max((_depth(n) for n in node), default=0)
    if not isinstance(node, dict):
        return 0
    inner = max((_depth(v) for v in node.values()), default=0)
    return inner + (node.get("type") in ("object", "array") or "properties" in node)


def to_openai_chat(
    definitions: Iterable[ToolDefinition], *, strict: bool = True
) -> list[dict[str, Any]]:
    """Chat-completions ``tools``: ``{"type": "function", "function": {...}}`` each.

    Names are the format-safe aliases (``core.names.safe_tool_name``); strict mode makes
    every property required, optional ones nullable (``core.schema.to_strict``); a tool
    whose arguments have no strict form is exported without ``strict``
    (``openai_parameters``).
    """

    def build(d: ToolDefinition) -> dict[str, Any]:
        parameters, is_strict = _parameters(d, strict)
        function: dict[str, Any] = {
            "name": safe_tool_name(d.name),
            "description": d.description,
            "parameters": parameters,
        }
        if is_strict:
            function["strict"] = True
        return {"type": "function", "function": function}

    return exported(definitions, f"openai-chat:{strict}", build)


def to_openai_responses(
    definitions: Iterable[ToolDefinition], *, strict: bool = True
) -> list[dict[str, Any]]:
    """Responses-API ``tools``: ``{"type": "function", "name", "description", "parameters", "strict"}``."""

    def build(d: ToolDefinition) -> dict[str, Any]:
        parameters, is_strict = _parameters(d, strict)
        return {
            "type": "function",
            "name": safe_tool_name(d.name),
            "description": d.description,
            "parameters": parameters,
            "strict": is_strict,
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
