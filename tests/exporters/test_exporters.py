from __future__ import annotations

import json
from typing import Any, Literal

import jsonschema
import pytest
from inline_snapshot import snapshot
from openai.types.chat import ChatCompletionToolParam
from openai.types.responses import FunctionToolParam
from pydantic import BaseModel, Field, TypeAdapter

from tooldeck.core import JsonSchemaTool, ToolAnnotations, ToolDefinition, tool
from tooldeck.exporters import FORMATS, export
from tooldeck.exporters.mcp import to_mcp_result
from tooldeck.providers import ToolRegistry

pytestmark = pytest.mark.anyio


class Args(BaseModel):
    symbol: str = Field(description="Ticker symbol.")
    days: int = Field(7, description="Days back.")


@tool(
    name="crm.search",
    annotations=ToolAnnotations(read_only=True, open_world=False),
    source_id="tool:crm:v1",
)
def crm_search(query: str, limit: int = 5) -> dict[str, Any]:
    """Search CRM contacts.

    Args:
        query: Name or e-mail fragment.
        limit: Maximum contacts.
    """
    return {"query": query, "limit": limit}


def _registry() -> ToolRegistry:
    return ToolRegistry([crm_search])


def test_openai_chat_export() -> None:
    tools = _registry().export("openai")
    assert tools == snapshot(
        [
            {
                "type": "function",
                "function": {
                    "name": "crm_search",
                    "description": "Search CRM contacts.",
                    "parameters": {
                        "additionalProperties": False,
                        "properties": {
                            "query": {"description": "Name or e-mail fragment.", "type": "string"},
                            "limit": {
                                "description": "Maximum contacts. Default: 5.",
                                "type": ["integer", "null"],
                            },
                        },
                        "required": ["query", "limit"],
                        "type": "object",
                    },
                    "strict": True,
                },
            }
        ]
    )
    for item in tools:
        TypeAdapter(ChatCompletionToolParam).validate_python(item)


def test_openai_non_strict_export() -> None:
    assert _registry().export("openai", strict=False) == snapshot(
        [
            {
                "type": "function",
                "function": {
                    "name": "crm_search",
                    "description": "Search CRM contacts.",
                    "parameters": {
                        "additionalProperties": False,
                        "properties": {
                            "query": {"description": "Name or e-mail fragment.", "type": "string"},
                            "limit": {
                                "default": 5,
                                "description": "Maximum contacts.",
                                "type": "integer",
                            },
                        },
                        "required": ["query"],
                        "type": "object",
                    },
                },
            }
        ]
    )


def test_openai_responses_export() -> None:
    tools = _registry().export("openai-responses")
    assert tools == snapshot(
        [
            {
                "type": "function",
                "name": "crm_search",
                "description": "Search CRM contacts.",
                "parameters": {
                    "additionalProperties": False,
                    "properties": {
                        "query": {"description": "Name or e-mail fragment.", "type": "string"},
                        "limit": {
                            "description": "Maximum contacts. Default: 5.",
                            "type": ["integer", "null"],
                        },
                    },
                    "required": ["query", "limit"],
                    "type": "object",
                },
                "strict": True,
            }
        ]
    )
    for item in tools:
        TypeAdapter(FunctionToolParam).validate_python(item)


def test_anthropic_export() -> None:
    assert _registry().export("anthropic") == snapshot(
        [
            {
                "name": "crm_search",
                "description": "Search CRM contacts.",
                "input_schema": {
                    "additionalProperties": False,
                    "properties": {
                        "query": {"description": "Name or e-mail fragment.", "type": "string"},
                        "limit": {
                            "default": 5,
                            "description": "Maximum contacts.",
                            "type": "integer",
                        },
                    },
                    "required": ["query"],
                    "type": "object",
                },
            }
        ]
    )


def test_gemini_export() -> None:
    assert _registry().export("gemini") == snapshot(
        [
            {
                "name": "crm_search",
                "description": "Search CRM contacts.",
                "parameters": {
                    "properties": {
                        "query": {"description": "Name or e-mail fragment.", "type": "string"},
                        "limit": {"description": "Maximum contacts.", "type": "integer"},
                    },
                    "required": ["query"],
                    "type": "object",
                },
            }
        ]
    )


def test_mcp_export_keeps_the_real_name_and_annotations() -> None:
    assert _registry().export("mcp") == snapshot(
        [
            {
                "name": "crm.search",
                "description": "Search CRM contacts.",
                "inputSchema": {
                    "additionalProperties": False,
                    "properties": {
                        "query": {"description": "Name or e-mail fragment.", "type": "string"},
                        "limit": {
                            "default": 5,
                            "description": "Maximum contacts.",
                            "type": "integer",
                        },
                    },
                    "required": ["query"],
                    "type": "object",
                },
                "_meta": {"source_id": "tool:crm:v1"},
                "outputSchema": {"additionalProperties": True, "type": "object"},
                "annotations": {"readOnlyHint": True, "openWorldHint": False},
            }
        ]
    )


async def test_a_call_under_the_safe_alias_reaches_the_tool() -> None:
    registry = _registry()
    exported = registry.export("openai")[0]["function"]["name"]
    assert exported == "crm_search"
    result = await registry.execute(exported, '{"query": "ada", "limit": null}')
    assert result.success and result.data == {"query": "ada", "limit": 5}
    assert result.metadata.tool_name == "crm.search"


def test_unknown_format_lists_formats() -> None:
    with pytest.raises(
        ValueError, match="formats: openai, openai-responses, anthropic, gemini, mcp"
    ):
        export([], "cohere")
    assert FORMATS == ("openai", "openai-responses", "anthropic", "gemini", "mcp")


@pytest.mark.parametrize("format", FORMATS)
def test_an_export_is_built_once_per_definition_and_never_shared_by_mutation(
    format: str,
) -> None:
    """A model loop exports the same tools every turn: the second export is the cache's."""
    definition = ToolDefinition(
        name="lookup",
        description="Look a word up.",
        input_schema={
            "type": "object",
            "properties": {"word": {"type": "string"}},
            "required": ["word"],
        },
    )
    first = export([definition], format)
    assert export([definition], format) == first
    for item in first:  # a caller changing what it got changes nothing for the next turn
        for value in item.values():
            if isinstance(value, dict):
                value.clear()  # function, parameters, inputSchema ...
        item.clear()
    again = export([definition], format)
    assert again and again[0] and again == export([definition], format)
    changed = definition.model_copy(update={"description": "Look a word up, in Latin."})
    assert "Latin" in json.dumps(export([changed], format))
    assert "Latin" not in json.dumps(export([definition], format))


@tool
def pick(level: Literal[1, 2, 3], scale: Literal[0.5, 2.0] = 0.5) -> int:
    """Pick a level."""
    return int(level * scale * 2)


async def test_gemini_takes_number_enums_as_texts_and_the_call_gets_the_numbers() -> None:
    from google.genai import types

    (declaration,) = export([pick.definition], "gemini")
    types.FunctionDeclaration.model_validate(declaration)  # refused [1, 2, 3] before
    props = declaration["parameters"]["properties"]
    assert props["level"] == {"type": "string", "enum": ["1", "2", "3"]}
    assert props["scale"]["enum"] == ["0.5", "2.0"]
    result = await ToolRegistry([pick]).execute("pick", {"level": "3", "scale": "2.0"})
    assert result.data == 12
    refused = await ToolRegistry([pick]).execute("pick", {"level": "4"})
    assert refused.error is not None and refused.error.type == "validation"


async def test_an_object_declaring_no_properties_is_open() -> None:
    anything = JsonSchemaTool(
        name="anything",
        description="Takes any keys.",
        input_schema={
            "type": "object",
            "properties": {"options": {"type": "object", "properties": {}}},
        },
        function=lambda **kw: kw,
    )
    result = await anything.execute({"options": {"colour": "red", "size": 2}})
    assert result.data == {"options": {"colour": "red", "size": 2}}
    (listed,) = export([anything.definition], "mcp")
    assert "additionalProperties" not in listed["inputSchema"]["properties"]["options"]
    strict = export([anything.definition], "openai")[0]["function"]["parameters"]
    options = strict["properties"]["options"]  # a map: a nullable list of pairs
    assert options["type"] == ["array", "null"]
    assert options["items"]["required"] == ["key", "value"]

    root = JsonSchemaTool(
        name="root_map",
        description="Takes any keys at the top.",
        input_schema={"type": "object"},
        function=lambda **kw: kw,
    )
    assert (await root.execute({"a": 1})).data == {"a": 1}
    (chat,) = export([root.definition], "openai")
    assert "strict" not in chat["function"]  # strict mode would allow no key at all
    assert chat["function"]["parameters"] == {"type": "object"}
    (responses,) = export([root.definition], "openai-responses")
    assert responses["strict"] is False


async def test_properties_declaring_none_at_the_root_mean_no_arguments() -> None:
    """Issue 55, item 14: ``{"type": "object", "properties": {}}`` at the root is how
    FastMCP and the MCP SDK write a function without parameters: no argument is taken,
    and strict mode can say so (it was exported non-strict and took any key)."""
    ping = JsonSchemaTool(
        name="ping",
        description="No arguments.",
        input_schema={"type": "object", "properties": {}},
        function=lambda: "pong",
    )
    assert (await ping.execute({})).data == "pong"
    refused = await ping.execute({"host": "example.org"})
    assert refused.error is not None and refused.error.type == "validation"
    assert "host" in refused.error.message and "unexpected argument" in refused.error.message
    (chat,) = export([ping.definition], "openai")
    assert chat["function"]["strict"] is True
    assert chat["function"]["parameters"] == {
        "type": "object", "properties": {}, "required": [], "additionalProperties": False,
    }  # fmt: skip
    (listed,) = export([ping.definition], "mcp")
    assert listed["inputSchema"]["additionalProperties"] is False


def test_a_schema_nested_deeper_than_strict_mode_allows_is_exported_non_strict() -> None:
    """Issue 55, item 14: OpenAI strict mode refuses more than 10 levels of nesting, and
    with it the whole request; such a tool goes non-strict, the others stay strict."""

    def nested(levels: int) -> dict[str, Any]:
        node: dict[str, Any] = {"type": "string"}
        for _ in range(levels):
            node = {"type": "object", "properties": {"inner": node}, "required": ["inner"]}
        return node

    deep, shallow = (
        JsonSchemaTool(name=name, description="Nested.", input_schema=nested(levels),
                       function=lambda **kw: kw)
        for name, levels in (("deep", 11), ("shallow", 10))
    )  # fmt: skip
    chat = {t["function"]["name"]: t["function"] for t in export(
        [deep.definition, shallow.definition], "openai")}  # fmt: skip
    assert "strict" not in chat["deep"] and chat["shallow"]["strict"] is True
    assert chat["deep"]["parameters"]["required"] == ["inner"]  # as written, not strict form


@tool
def count(text: str) -> int:
    """Count the words of a text."""
    return len(text.split())


def test_a_scalar_result_is_wrapped_for_mcp() -> None:
    from mcp_types import CallToolResult, Tool

    (listed,) = export([count.definition], "mcp")
    assert listed["outputSchema"] == {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    }
    Tool.model_validate(listed)
    wire = to_mcp_result(ToolRegistry([count]).execute_sync("count", {"text": "a b c"}))
    assert wire["structuredContent"] == {"result": 3}
    assert wire["content"][0]["text"] == "3"
    jsonschema.validate(wire["structuredContent"], listed["outputSchema"])
    CallToolResult.model_validate(wire)
