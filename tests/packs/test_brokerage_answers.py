"""Every labelled question the router answers is answered from the data, and grounded.

The default runtime also has the context pack: a weather question, out of the
brokerage's scope, is its (and says how to configure the weather).
"""

from __future__ import annotations

import pytest
from router_questions import QUESTIONS

from tooldeck.agent.contracts import ChatRequest
from tooldeck.config import load_settings
from tooldeck.runtime import build_runtime

pytestmark = pytest.mark.anyio


async def test_every_answerable_labelled_question_is_answered_and_grounded() -> None:
    runtime = build_runtime(load_settings(builtin={"enabled": False}, audit={"enabled": False}))
    try:
        for question, intent, _ in QUESTIONS:
            run = await runtime.runs.start(ChatRequest(question=question))
            run = await runtime.runs.wait(run.run_id)
            assert run.state == "completed", question
            answer = run.answer
            if intent.startswith("clarify:"):
                assert answer.needs_clarification and not answer.tool_calls, question
                continue
            if intent == "out_of_scope" and answer.intent == "weather":  # the context pack's
                assert "**Weather**: not configured yet" in answer.answer_markdown
                continue
            assert answer.intent == intent, question
            assert answer.grounding.verdict == "grounded", (question, answer.grounding)
            if intent == "out_of_scope":
                assert "can't answer that from your brokerage data" in answer.answer_markdown
                assert answer.confidence <= 0.5 and not answer.tool_calls
                continue
            assert answer.citations, question
            assert answer.grounding.numbers_checked > 0 or intent == "facts", question
    finally:
        await runtime.aclose()


async def test_a_quote_answer_binds_each_figure_to_its_field_and_a_wrong_binding_fails() -> None:
    """Issue 29: the router's figures are bound as it writes them (``answer.claims``); the
    validator checks each at its pointer, so a figure bound to the wrong field fails."""
    from tooldeck.agent.grounding import check_grounding

    runtime = build_runtime(load_settings(builtin={"enabled": False}, audit={"enabled": False}))
    try:
        run = await runtime.runs.start(ChatRequest(question="What's the price of AAPL?"))
        answer = (await runtime.runs.wait(run.run_id)).answer
        assert answer.grounding.verdict == "grounded", answer.grounding
        markdown, claims = answer.answer_markdown, answer.claims
        said = {c.pointer or c.inputs[0]: markdown[slice(*c.span)] for c in claims}
        assert said == {
            "/quotes/0/price": "$228.42", "/quotes/0/change": "$2.51",
            "/quotes/0/change_pct": "1.11%", "/quotes/0/previous_close": "$225.91",
        }  # fmt: skip
        (call,) = answer.tool_calls
        assert all(c.source_id == "tool:quotes:v1" and c.result == call.id for c in claims)
        quotes = await runtime.provider.execute(call.name, call.arguments)
        results = [quotes.with_metadata(request_id=call.id)]  # the data the claims name
        assert check_grounding(markdown, answer.citations, results, claims=claims).ok
        swapped = [
            c.model_copy(update={"pointer": "/quotes/0/previous_close"})
            if c.pointer == "/quotes/0/price" else c
            for c in claims
        ]  # fmt: skip
        report = check_grounding(markdown, answer.citations, results, claims=swapped)
        assert [f.kind for f in report.findings] == ["claim_mismatch"], report.findings
        assert "says 228.42; tool:quotes:v1/quotes/0/previous_close is 225.91" in (
            report.findings[0].message
        )
    finally:
        await runtime.aclose()
