"""``grounded_answer``: a draft through the grounding validator, repaired or replaced.

Both run engines (``RunManager`` in process, the Temporal worker's turn activity) end a
run's answer here, so an answer is validated the same way whichever engine runs it.
"""

from __future__ import annotations

from collections.abc import Mapping

from tooldeck.agent.base import Agent, Draft, could_not_answer
from tooldeck.agent.calls import RunTools
from tooldeck.agent.contracts import ChatAnswer
from tooldeck.agent.grounding import Grounding, GroundingReport, check_grounding
from tooldeck.providers.base import ToolsProvider

__all__ = ["answer_chunks", "grounded_answer"]


async def grounded_answer(
    agent: Agent,
    draft: Draft,
    tools: RunTools,
    view: ToolsProvider,
    question: str,
    subjects: Mapping[str, tuple[str, str]] | None = None,
) -> ChatAnswer:
    """Validate ``draft``; repair once (models) or fall back to the graceful answer.

    The validator reads value kinds, subjects and totals from the output schemas of the
    tools the run called (``tools.results``).

    Args:
        agent: The run's agent (its ``repair`` is asked once when the draft fails).
        draft: The agent's answer.
        tools: The run's tools: the results the answer must rest on, and its records.
        view: The profile's provider stack (for the output schemas).
        question: The user's question (what kind of answer was asked).
        subjects: Display names of subjects (``IntentPack.subjects``), or None.

    Raises:
        ModelError: the model endpoint failed while repairing.
    """
    called = {r.metadata.tool_name for r in tools.results if r.metadata}
    schemas = {d.name: d.output_schema for d in await view.definitions() if d.name in called}

    def check(d: Draft) -> GroundingReport:
        return check_grounding(
            d.markdown,
            d.citations,
            tools.results,
            d.figures,
            schemas=schemas,
            subjects=subjects,
            question=None if d.needs_clarification else question,
            claims=d.claims,
            bound=d.bound,
        )

    report = check(draft)
    verdict: Grounding
    if report.ok:
        verdict = report.verdict("grounded")
    else:
        problems = [f.message for f in report.findings]
        repaired = await agent.repair(draft, problems, tools)
        second = check(repaired) if repaired is not None else None
        if repaired is not None and second is not None and second.ok:
            draft, verdict = repaired, second.verdict("repaired")
        else:
            failed = second if second is not None else report
            off = [f.message for f in failed.findings if f.kind == "off_question"]
            fallback = could_not_answer(
                "Ask again, or look at the tool calls below.", verify=True,
                off_question=off[0] if len(off) == len(failed.findings) else "",
            )  # fmt: skip
            fallback.intent, fallback.params = draft.intent, draft.params
            draft, verdict = fallback, failed.verdict("ungrounded")
    confidence = draft.confidence
    if verdict.verdict == "quoted":
        confidence = min(confidence, QUOTED_CONFIDENCE)
    return ChatAnswer(
        answer_markdown=draft.markdown,
        citations=draft.citations,
        confidence=confidence,
        needs_clarification=draft.needs_clarification,
        clarifying_question=draft.clarifying_question,
        tool_calls=tools.records,
        grounding=verdict,
        claims=draft.claims,
        intent=draft.intent,
        params=draft.params,
        mode="model" if agent.mode == "model" else "router",
        model=agent.model,
    )


QUOTED_CONFIDENCE = 0.5
"""The most confidence an answer resting on quotations gets (verdict ``quoted``): how
often such an answer held the answering phrase on documentation questions written by
others (``benchmarks/docs_answers.py --corpus outside``: 32 of the 64 answers that quoted
passages, the questions the documents do not answer included),
whatever the route's confidence that the question was about the documents."""


def answer_chunks(text: str, size: int = 200) -> list[str]:
    """``text`` in pieces of whole lines, about ``size`` characters each (``message.delta``)."""
    chunks: list[str] = []
    current = ""
    for line in text.splitlines(keepends=True):
        if current and len(current) + len(line) > size:
            chunks.append(current)
            current = ""
        current += line
    if current:
        chunks.append(current)
    return chunks
