"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for agent tests.

Each ``POST /v1/chat/completions`` answers with the next scripted reply and records the
request body, so a test can check what the agent sent (tools, tool messages, the repair
prompt). Runs uvicorn in a thread; use it as a context manager.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from processes import serve_app
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


def tool_calls(*calls: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    """A reply asking for tool calls: (id, name, arguments) each."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": cid,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for cid, name, args in calls
        ],
    }


def text(content: str) -> dict[str, Any]:
    """A final reply."""
    return {"role": "assistant", "content": content}


Reply = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]
"""A message, or a function of the request body that makes one (a model that reads the
tool results it was sent)."""


class ScriptedModel:
    """Serves ``replies`` in order (the last one repeats); ``status`` replaces them with errors."""

    def __init__(self, replies: list[Reply], status: int = 200) -> None:
        self.replies = replies
        self.status = status
        self.requests: list[dict[str, Any]] = []

    async def completions(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.requests.append(body)
        if self.status != 200:
            return JSONResponse({"error": {"message": "scripted failure"}}, status_code=self.status)
        message = self.replies[min(len(self.requests), len(self.replies)) - 1]
        if callable(message):
            message = message(body)
        return JSONResponse(
            {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        )

    @contextmanager
    def serve(self) -> Iterator[str]:
        """Serve on 127.0.0.1; yields the base URL (``http://127.0.0.1:<port>/v1``)."""
        app = Starlette(routes=[Route("/v1/chat/completions", self.completions, methods=["POST"])])
        with serve_app(app, "the scripted OpenAI server", lifespan="off") as url:
            yield f"{url}/v1"
