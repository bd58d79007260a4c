"""A real ``openai`` chat message with two tool calls, executed through the registry stack."""

from __future__ import annotations

import json

import pytest
from openai.types.chat import (
    ChatCompletionMessage,
    ChatCompletionMessageParam,
    ChatCompletionToolMessageParam,
    ChatCompletionToolParam,
)
from pydantic import TypeAdapter

from tooldeck.exporters import run_tool_calls
from tooldeck.packs.brokerage import brokerage_tools
from tooldeck.providers import ToolRegistry

pytestmark = pytest.mark.anyio


async def test_two_tool_calls_round_trip_through_openai_types() -> None:
    registry = ToolRegistry(brokerage_tools())
    stack = registry.with_policies()
    tools = registry.export("openai")
    TypeAdapter(list[ChatCompletionToolParam]).validate_python(tools)

    assistant = ChatCompletionMessage.model_validate(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_positions",
                    "type": "function",
                    "function": {
                        "name": "get_positions",
                        "arguments": '{"symbol": "AAPL", "account": null}',
                    },
                },
                {
                    "id": "call_quotes",
                    "type": "function",
                    "function": {
                        "name": "get_quotes",
                        "arguments": '{"symbol": "AAPL", "symbols": null}',
                    },
                },
            ],
        }
    )
    messages = await run_tool_calls(stack, assistant.tool_calls)

    validated = TypeAdapter(list[ChatCompletionToolMessageParam]).validate_python(messages)
    assert [m["tool_call_id"] for m in validated] == ["call_positions", "call_quotes"]
    positions_text, quotes_text = (str(m["content"]) for m in validated)
    assert positions_text.endswith("[source_id: tool:positions:v1 | as_of: 2026-11-20]")
    assert json.loads(positions_text.split("\n")[0])["positions"][0]["symbol"] == "AAPL"
    assert "tool:quotes:v1" in quotes_text and "228.42" in quotes_text

    # the whole conversation is acceptable to the openai package as request messages
    conversation = [
        {"role": "user", "content": "How is my AAPL position doing?"},
        assistant.model_dump(exclude_none=True),
        *messages,
    ]
    TypeAdapter(list[ChatCompletionMessageParam]).validate_python(conversation)


async def test_a_bad_call_becomes_a_tool_message_the_model_can_act_on() -> None:
    stack = ToolRegistry(brokerage_tools()).with_policies()
    messages = await run_tool_calls(
        stack,
        [{"id": "c1", "type": "function", "function": {"name": "get_quote", "arguments": "{}"}}],
    )
    assert messages == [
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": messages[0]["content"],
        }
    ]
    assert messages[0]["content"].startswith(
        "Error (not_found): Unknown tool 'get_quote'. Did you mean 'get_quotes'"
    )
