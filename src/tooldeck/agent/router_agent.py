"""The agent that needs no model: an ``IntentPack`` routes, runs the plan, writes the answer."""

from __future__ import annotations

from typing import Any

from tooldeck.agent.base import Draft, could_not_answer
from tooldeck.agent.calls import RunTools
from tooldeck.core.intents import IntentPack, IntentRouter

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
        """Route ``question`` and answer it (see the class docstring)."""
        route = self.pack.route(question, params)
        if route.intent is None:
            assert route.clarification is not None
            return Draft(
                markdown=route.clarification.question,
                needs_clarification=True,
                clarifying_question=route.clarification,
                params=dict(route.params),
            )
        outcome = await IntentRouter(tools, self.pack.intents).dispatch(
            route.intent, route.params, tools.ctx
        )
        if not outcome.success:
            failed = next(r for r in outcome.results if not r.success)
            draft = could_not_answer(failed.error.message if failed.error else "")
        else:
            composed = self.pack.compose(route, outcome)
            draft = Draft(
                markdown=composed.markdown,
                citations=list(composed.citations),
                confidence=route.confidence,
                figures=list(composed.figures),
            )
        draft.intent, draft.params = route.intent, dict(route.params)
        return draft

    async def repair(self, draft: Draft, problems: list[str], tools: RunTools) -> Draft | None:
        """None: a deterministic answer would come out the same."""
        return None
