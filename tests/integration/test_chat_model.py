"""The model agent against a scripted OpenAI-compatible server on 127.0.0.1.

The loop sends the tool definitions, runs a turn's tool calls concurrently through the
provider stack, feeds back ``to_llm()`` texts; the grounding validator catches a citation
of a source never called and a number in no result, repairs once, else falls back.
"""

from __future__ import annotations

from typing import Any

import pytest
from scripted_openai import ScriptedModel, text, tool_calls

from portfolio import user_portfolio
from tooldeck.agent.contracts import ChatRequest
from tooldeck.config import load_settings
from tooldeck.runtime import build_runtime

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

QUESTION = "How much is my AAPL position worth and how is it doing?"
CALLS = tool_calls(
    ("call_pos", "get_positions", {"symbol": "AAPL", "account": "individual"}),
    ("call_quote", "get_quotes", {"symbol": "AAPL"}),
)
GOOD = (
    "Your 42 AAPL shares in Individual Brokerage are worth $9,593.64 at $228.42 a share "
    "[tool:quotes:v1], bought at $150.25 [tool:positions:v1]: a gain of $3,283.14 (+52.03%)."
)


async def ask(
    model: ScriptedModel, question: str = QUESTION, *, example: bool = False, **agent: Any
) -> Any:
    """Run ``question`` with the scripted model, on the user's copy of the portfolio (on
    the shipped example file with ``example``)."""
    with model.serve() as base_url:
        settings = load_settings(
            builtin={"enabled": False},
            agent={"model": "scripted", "base_url": base_url, **agent},
            profiles={"careful": {"confirm": ["get_quotes"]}},
            brokerage={"enabled": True} if example else {"data_path": user_portfolio()},
        )
        runtime = build_runtime(settings)
        try:
            run = await runtime.runs.start(ChatRequest(question=question), user="tester")
            run = await runtime.runs.wait(run.run_id)
            events = [e async for e in runtime.runs.events(run.run_id)]
            return run, events
        finally:
            await runtime.aclose()


async def test_parallel_tool_calls_then_a_grounded_answer() -> None:
    model = ScriptedModel([CALLS, text(GOOD)])
    run, events = await ask(model)
    answer = run.answer
    assert run.state == "completed" and answer.mode == "model" and answer.model == "scripted"
    assert answer.answer_markdown == GOOD
    assert answer.citations == ["tool:quotes:v1", "tool:positions:v1"]
    assert answer.grounding.verdict == "grounded" and answer.grounding.numbers_checked == 6
    assert [(c.id, c.name, c.status) for c in answer.tool_calls] == [
        ("call_pos", "get_positions", "success"),
        ("call_quote", "get_quotes", "success"),
    ]
    # one turn's calls ran concurrently: both started before either completed
    kinds = [e.type for e in events if e.type.startswith("tool_call.")]
    assert kinds == ["tool_call.started"] * 2 + ["tool_call.completed"] * 2
    # what the model was sent: the tools, then the results' to_llm() text
    first, second = model.requests
    assert {t["function"]["name"] for t in first["tools"]} >= {"get_positions", "get_quotes"}
    # issue 55: tool_choice said (a server defaulting to "none" renders no tool), and the
    # model's tool-call turn sent back with its content (chat templates read it)
    assert first["tool_choice"] == "auto"
    [called] = [m for m in second["messages"] if m["role"] == "assistant"]
    assert called["content"] == "" and len(called["tool_calls"]) == 2
    tool_messages = [m for m in second["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_pos", "call_quote"]
    assert tool_messages[0]["content"].endswith(
        "[source_id: tool:positions:v1 | as_of: 2026-11-20]"
    )
    assert "228.42" in tool_messages[1]["content"]


async def test_a_model_must_say_that_example_data_is_example_data() -> None:
    said = "In the example portfolio (demo data shipped with tooldeck, not yours): " + GOOD
    model = ScriptedModel([CALLS, text(GOOD), text(said)])
    run, _ = await ask(model, example=True)
    assert run.answer.grounding.verdict == "repaired", run.answer.grounding
    assert run.answer.answer_markdown == said
    prompt = model.requests[2]["messages"][-1]["content"]
    assert "hold example data" in prompt and "never state them as the user's own" in prompt


async def test_a_citation_of_a_source_never_called_is_repaired_once() -> None:
    fake = GOOD + " Analysts rate it a buy [tool:news:v1]."
    model = ScriptedModel([CALLS, text(fake), text(GOOD)])
    run, _ = await ask(model)
    grounding = run.answer.grounding
    assert grounding.verdict == "repaired" and run.answer.answer_markdown == GOOD
    repair = model.requests[2]
    assert "tools" not in repair  # the repair turn gets no tools
    prompt = repair["messages"][-1]["content"]
    assert prompt.startswith("Your answer failed verification")
    assert "tool:news:v1 is not the source_id of any tool result of this run" in prompt


async def test_a_number_in_no_result_is_caught_and_replaced_by_the_graceful_answer() -> None:
    invented = "Your AAPL position is worth $12,345.67 [tool:positions:v1] [tool:quotes:v1]."
    model = ScriptedModel([CALLS, text(invented)])  # the repair says it again
    run, events = await ask(model)
    answer = run.answer
    assert run.state == "completed"
    assert answer.grounding.verdict == "ungrounded"
    assert [(f.kind, f.text) for f in answer.grounding.findings] == [
        ("untraced_number", "$12,345.67")
    ]
    assert answer.answer_markdown.startswith("I could not verify the figures of my answer")
    assert "12,345.67" not in "".join(
        e.data.get("text", "") for e in events if e.type == "message.delta"
    )  # never streamed
    assert answer.citations == [] and answer.confidence == 0.0 and answer.needs_clarification
    assert len(answer.tool_calls) == 2  # the calls are still reported


async def test_a_fake_citation_alone_is_caught() -> None:
    model = ScriptedModel([CALLS, text("AAPL is at $228.42 [tool:quote:v1]")])
    run, _ = await ask(model)
    assert run.answer.grounding.verdict == "ungrounded"
    kinds = [(f.kind, f.text) for f in run.answer.grounding.findings]
    assert ("unknown_citation", "tool:quote:v1") in kinds


async def test_the_step_limit_ends_a_model_that_never_answers() -> None:
    model = ScriptedModel([tool_calls(("c", "get_quotes", {"symbol": "AAPL"}))])
    run, _ = await ask(model, max_steps=2)
    assert run.state == "completed" and len(model.requests) == 2
    assert "step limit" in run.answer.answer_markdown
    assert run.answer.grounding.verdict == "grounded" and len(run.answer.tool_calls) == 2


async def test_an_endpoint_error_fails_the_run_with_its_message() -> None:
    run, events = await ask(ScriptedModel([], status=500))
    assert run.state == "failed" and "HTTP 500" in (run.error or "")
    assert events[-1].type == "run.failed" and events[-1].data["error"] == run.error


MARKED = (
    "AAPL is at [$228.42](claim:tool:quotes:v1#/quotes/0/price) [tool:quotes:v1]; you hold "
    "[42](claim:tool:positions:v1#/positions/0/quantity) shares [tool:positions:v1]."
)


async def test_figures_the_model_marks_become_claims_and_a_wrong_field_is_repaired() -> None:
    """Issue 29: a model binds each figure to its field with a marker; the marker is gone
    from the answer, the claim is checked at its pointer, and a figure bound to the wrong
    field (the previous close, 225.91, stated as 228.42) is sent back to be repaired."""
    swapped = MARKED.replace("/quotes/0/price", "/quotes/0/previous_close")
    model = ScriptedModel([CALLS, text(swapped), text(MARKED)])
    run, _ = await ask(model)
    answer = run.answer
    assert answer.grounding.verdict == "repaired", answer.grounding
    assert answer.answer_markdown == (
        "AAPL is at $228.42 [tool:quotes:v1]; you hold 42 shares [tool:positions:v1]."
    )
    assert [(answer.answer_markdown[slice(*c.span)], c.pointer) for c in answer.claims] == [
        ("$228.42", "/quotes/0/price"),
        ("42", "/positions/0/quantity"),
    ]
    assert "the JSON pointer of the field" in model.requests[0]["messages"][0]["content"]
    repair = model.requests[-1]["messages"][-1]["content"]
    assert "says 228.42; tool:quotes:v1/quotes/0/previous_close is 225.91" in repair
