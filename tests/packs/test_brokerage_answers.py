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
