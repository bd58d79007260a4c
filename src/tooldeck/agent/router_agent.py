"""The agent that needs no model: an ``IntentPack`` routes, runs the plan, writes the answer."""

from __future__ import annotations

import asyncio
from typing import Any

from tooldeck.agent.base import Draft, could_not_answer
from tooldeck.agent.calls import RunTools
from tooldeck.core.intents import IntentPack, IntentRouter, Route
from tooldeck.core.result import ToolResult

__all__ = ["RouterAgent"]


class RouterAgent:
    """Answers with an ``IntentPack`` (seed 004: route → single or composite plan → compose).

    Semantics:
        An unclear question gives the route's clarifying question (confidence 0). A
        failed step gives the graceful answer with the tool's message. Otherwise the
        pack composes the answer from the results; its confidence is the route's.
    """

    mode = "router"
    model: str | None = None

    def __init__(self, pack: IntentPack) -> None:
        self.pack = pack

    async def answer(self, question: str, params: dict[str, Any], tools: RunTools) -> Draft:
        """Route ``question`` and answer it (see the class docstring).

        A question in several parts (``Route.also``) gets each part's answer, in order;
        a part that fails is said so, and the confidence drops to at most 0.5.
        """
        # a pack may read its store to route (the knowledge pack's titles): not on the loop
        route = await asyncio.to_thread(self.pack.route, question, params)
        if route.intent is None:
            assert route.clarification is not None
            return Draft(
                markdown=route.clarification.question,
                needs_clarification=True,
                clarifying_question=route.clarification,
                params=dict(route.params),
            )
        drafts = [await self._one(part, tools) for part in (route, *route.also)]
        if len(drafts) == 1:
            draft = drafts[0]
        else:
            answered = [d for d in drafts if d.citations or d.confidence > 0]
            confidence = min(d.confidence for d in drafts)
            if len(answered) < len(drafts):
                confidence = min(confidence, 0.5)
            claims, offset = [], 0
            for d in drafts:  # each part's spans move by the text before it
                claims += [c.shifted(offset) for c in d.claims]
                offset += len(d.markdown) + 2
            draft = Draft(
                markdown="\n\n".join(d.markdown for d in drafts),
                citations=list(dict.fromkeys(c for d in drafts for c in d.citations)),
                confidence=confidence,
                figures=[f for d in drafts for f in d.figures],
                claims=claims,
                bound=all(d.bound for d in drafts),
            )
        draft.intent, draft.params = route.intent, dict(route.params)
        if route.also:
            draft.intent = "+".join(str(r.intent) for r in (route, *route.also))
            draft.params = {"parts": [dict(r.params) for r in (route, *route.also)]}
        return draft

    async def _one(self, route: Route, tools: RunTools) -> Draft:
        """The answer to one routed part."""
        assert route.intent is not None
        outcome = await IntentRouter(tools, self.pack.intents).dispatch(
            route.intent, route.params, tools.ctx
        )
        if not outcome.success:
            failed = next(r for r in outcome.results if not r.success)
            return could_not_answer(_for_people(failed))
        composed = self.pack.compose(route, outcome)
        return Draft(
            markdown=composed.markdown,
            citations=list(composed.citations),
            confidence=route.confidence,
            figures=list(composed.figures),
            claims=list(composed.claims),
            bound=composed.bound,
        )

    async def repair(self, draft: Draft, problems: list[str], tools: RunTools) -> Draft | None:
        """None: a deterministic answer would come out the same."""
        return None


def _for_people(failed: ToolResult) -> str:
    """Why a step failed, said to the person (a tool's message is written for a model)."""
    error = failed.error
    if error is None:
        return ""
    if error.type == "denied":
        details = error.details or {}
        tool = details.get("tool") or "the tool"
        reason = details.get("message")
        why = f" ({reason})" if reason and reason != "no reason given" else ""
        return f"The call to {tool} was declined{why}, so I did not look that up."
    return error.message
