"""What an agent gives back before grounding, and the graceful answers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from tooldeck.agent.calls import RunTools
from tooldeck.core.claims import Claim
from tooldeck.core.intents import ClarifyingQuestion, Figure

__all__ = ["Agent", "Draft", "could_not_answer"]


@dataclass(kw_only=True)
class Draft:
    """An agent's answer before the grounding validator has seen it."""

    markdown: str
    citations: list[str] = field(default_factory=list)
    confidence: float = 0.0
    needs_clarification: bool = False
    clarifying_question: ClarifyingQuestion | None = None
    figures: list[Figure] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)
    """Figures bound to the fields they state (``core.claims``), spans in ``markdown``."""
    bound: bool = False
    """Every figure of ``markdown`` is among ``claims`` (``ComposedAnswer.bound``)."""
    intent: str | None = None
    params: dict[str, Any] = field(default_factory=dict)


class Agent(Protocol):
    """Answers a question with tools; ``repair`` re-asks once with the validator's findings."""

    @property
    def mode(self) -> str:
        """``router`` or ``model``: who answers."""
        ...

    @property
    def model(self) -> str | None:
        """The model's name, None without one."""
        ...

    async def answer(self, question: str, params: dict[str, Any], tools: RunTools) -> Draft:
        """Answer ``question``, calling tools only through ``tools``."""
        ...

    async def repair(self, draft: Draft, problems: list[str], tools: RunTools) -> Draft | None:
        """A corrected answer, or None when this agent cannot repair."""
        ...


def could_not_answer(reason: str, *, verify: bool = False, off_question: str = "") -> Draft:
    """The graceful answer (seed 004): nothing stated that the data does not back.

    Args:
        reason: What went wrong, in the user's terms (shown after the apology).
        verify: The failure is grounding (figures could not be verified), not retrieval.
        off_question: With ``verify``: what the answer missed of the question (an
            ``off_question`` finding's message): the figures held, but they answer a
            neighbouring question, and the apology says which part (issue 54).
    """
    head = (
        "I could not retrieve the data needed to answer."
        if not verify
        else f"I can't answer that as asked from the data ({_lowered(off_question)})."
        if off_question
        else "I could not verify the figures of my answer against the data, so I will not state them."
    )  # fmt: skip
    return Draft(
        markdown=f"{head} {reason}".strip(),
        confidence=0.0,
        needs_clarification=True,
        clarifying_question=ClarifyingQuestion(
            question="Can you double-check the request, or rephrase it?",
            type="text",
            parameter="question",
        ),
    )


def _lowered(message: str) -> str:
    """A finding's sentence inside another: "The question asks …." → "the question asks …"."""
    return message[:1].lower() + message[1:].rstrip(".")
