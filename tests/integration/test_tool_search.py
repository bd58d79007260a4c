"""Tool search for large registries (issue 32, part 1), through the real entry points.

The model agent against a scripted OpenAI-compatible server: past ``[agent]
defer_tools_over`` tools, a turn is sent ``search_tools`` and the always-visible tools
only; what a search finds is sent from the next turn on and can be called.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from scripted_openai import ScriptedModel, text, tool_calls

from tooldeck.agent.contracts import ChatRequest
from tooldeck.config import load_settings
from tooldeck.runtime import build_runtime

pytestmark = [pytest.mark.anyio, pytest.mark.integration]


def sent_names(request: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools", [])]


async def test_a_run_over_many_tools_searches_then_calls_what_it_found() -> None:
    model = ScriptedModel(
        [
            tool_calls(("s1", "search_tools", {"query": "stock quote price of a symbol"})),
            tool_calls(("q1", "get_quotes", {"symbols": ["AAPL"]})),
            text("AAPL trades at $228.42 [tool:quotes:v1]."),
        ]
    )
    with model.serve() as base_url:
        settings = load_settings(
            agent={
                "model": "scripted",
                "base_url": base_url,
                "defer_tools_over": 5,
                "always_visible": ["get_positions"],
            },
        )
        runtime = build_runtime(settings)
        try:
            every = [d.name for d in await runtime.view(None).definitions()]
            run = await runtime.runs.start(ChatRequest(question="AAPL price?"), user="ana")
            run = await runtime.runs.wait(run.run_id)
        finally:
            await runtime.aclose()
    assert len(every) > 5 and "get_quotes" in every
    assert run.state == "completed", run.error
    first, second, third = model.requests
    assert sent_names(first) == ["search_tools", "get_positions"]  # not the other tools
    assert "get_quotes" in sent_names(second) and len(sent_names(second)) <= 2 + 5
    assert sent_names(third) == sent_names(second)  # found tools stay for the run
    found = json.loads(
        next(m for m in second["messages"] if m.get("tool_call_id") == "s1")["content"].split(
            "\n["
        )[0]
    )
    assert found["tools"][0]["name"] == "get_quotes"
    assert [(c.name, c.status) for c in run.answer.tool_calls] == [
        ("search_tools", "success"),
        ("get_quotes", "success"),
    ]


async def test_under_the_threshold_every_tool_is_sent() -> None:
    model = ScriptedModel([text("Nothing to look up.")])
    with model.serve() as base_url:
        runtime = build_runtime(load_settings(agent={"model": "scripted", "base_url": base_url}))
        try:
            count = len(await runtime.view(None).definitions())
            run = await runtime.runs.start(ChatRequest(question="Hello?"), user="ana")
            await runtime.runs.wait(run.run_id)
        finally:
            await runtime.aclose()
    assert count <= 40  # the default threshold; the default tools are all sent
    assert len(sent_names(model.requests[0])) == count
    assert "search_tools" not in sent_names(model.requests[0])
