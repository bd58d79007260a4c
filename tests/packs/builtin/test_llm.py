"""``llm``: a local OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tooldeck.packs.builtin import LLMTool
from tooldeck.packs.builtin.config import LLMConfig

from .conftest import LocalServer

pytestmark = pytest.mark.anyio

pytest.importorskip("openai")


def completion(handler: Any) -> tuple[int, dict[str, str], bytes]:
    request = json.loads(handler.seen[-1]["body"])
    text = f"{request['model']} saw {len(request['messages'])} messages"
    body = {
        "id": "c1", "object": "chat.completion", "created": 0, "model": request["model"],
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 4, "total_tokens": 16},
    }  # fmt: skip
    return 200, {}, json.dumps(body).encode()


async def test_generates_with_context_through_the_endpoint(server: LocalServer) -> None:
    server.routes[("POST", "/v1/chat/completions")] = completion
    tool = LLMTool(LLMConfig(base_url=f"{server.url}/v1", model="tiny", api_key="k"))  # type: ignore[arg-type]
    result = await tool.execute(
        {
            "prompt": "Summarise",
            "context": {"price": 193.12},
            "system": "Be brief",
            "temperature": 0,
        }
    )
    assert result.success, result.error
    assert result.data == {"text": "tiny saw 2 messages", "model": "tiny", "finish_reason": "stop",
                           "usage": {"prompt_tokens": 12, "completion_tokens": 4, "total_tokens": 16}}  # fmt: skip
    sent = json.loads(server.seen[-1]["body"])
    assert sent["temperature"] == 0 and sent["max_tokens"] == 1024
    assert '"price": 193.12' in sent["messages"][1]["content"]
    assert server.seen[-1]["headers"]["Authorization"] == "Bearer k"


async def test_unconfigured_and_failing_endpoints(server: LocalServer) -> None:
    unconfigured = await LLMTool(LLMConfig()).execute({"prompt": "hi"})
    assert unconfigured.error is not None and unconfigured.error.type == "unavailable"
    assert "[builtin.llm]" in unconfigured.error.message
    server.json("POST", "/v1/chat/completions", {"error": {"message": "overloaded"}}, status=503)
    failing = await LLMTool(LLMConfig(base_url=f"{server.url}/v1", model="m")).execute(
        {"prompt": "hi"}
    )
    assert (
        failing.error is not None
        and failing.error.retryable
        and "HTTP 503" in failing.error.message
    )
