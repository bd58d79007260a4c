"""The deterministic question router: ≥ 95% of the labelled questions right, intent and parameters."""

from __future__ import annotations

from collections import Counter

import pytest
from router_questions import QUESTIONS

from tooldeck.packs.brokerage import BrokerageDataSource, QuestionRouter
from tooldeck.packs.brokerage.router import INTENT_PARAMS


@pytest.fixture(scope="module")
def router() -> QuestionRouter:
    return QuestionRouter(BrokerageDataSource().load())


def routed(router: QuestionRouter, question: str) -> tuple[str, dict[str, object]]:
    route = router.route(question)
    if route.intent is None:
        assert route.clarification is not None
        return f"clarify:{route.clarification.parameter}", {}
    return route.intent, dict(route.params)


def test_the_labelled_set_is_large_and_covers_every_intent() -> None:
    assert len(QUESTIONS) >= 150
    assert len({q for q, _, _ in QUESTIONS}) == len(QUESTIONS), "a question is repeated"
    intents = Counter(intent for _, intent, _ in QUESTIONS)
    assert set(INTENT_PARAMS) <= set(intents)
    assert min(intents[i] for i in INTENT_PARAMS) >= 10
    assert {i for i in intents if i.startswith("clarify:")} == {
        "clarify:symbol", "clarify:timeframe", "clarify:account", "clarify:intent"
    }  # fmt: skip


def test_at_least_95_percent_of_the_labelled_questions_route_right(router: QuestionRouter) -> None:
    wrong = []
    for question, intent, params in QUESTIONS:
        got = routed(router, question)
        if got != (intent, params):
            wrong.append(f"{question!r}: expected {intent} {params}, got {got[0]} {got[1]}")
    accuracy = 1 - len(wrong) / len(QUESTIONS)
    assert accuracy >= 0.95, f"{accuracy:.1%} right; wrong:\n" + "\n".join(wrong)


def test_an_unclear_account_is_asked_about_with_the_accounts_as_options(
    router: QuestionRouter,
) -> None:
    route = router.route("What's my brokerage account worth?")
    assert route.intent is None and route.clarification is not None
    assert route.clarification.model_dump() == {
        "question": "Which account do you mean?",
        "type": "radio",
        "options": ["individual", "roth_ira", "joint", "all"],
        "parameter": "account",
    }
    # answering the question: the parameter is given, the route goes through
    answered = router.route("What's my brokerage account worth?", {"account": "joint"})
    assert (answered.intent, dict(answered.params)) == ("account_value", {"account": "joint"})


def test_a_missing_timeframe_offers_the_timeframes(router: QuestionRouter) -> None:
    route = router.route("How did my portfolio perform?")
    assert route.clarification is not None
    assert route.clarification.type == "radio" and route.clarification.parameter == "timeframe"
    assert route.clarification.options == ["1D", "1W", "1M", "3M", "YTD", "1Y", "ALL"]
    assert dict(router.route("How did my portfolio perform?", {"timeframe": "ytd"}).params) == {
        "timeframe": "YTD"
    }


def test_an_unknown_ticker_suggests_close_symbols_and_a_missing_one_asks_for_text(
    router: QuestionRouter,
) -> None:
    unknown = router.route("What's the price of APPL?").clarification
    assert unknown is not None and unknown.question.startswith("I have no data for APPL")
    assert unknown.options[0] == "AAPL"
    missing = router.route("What's the price?").clarification
    assert missing is not None and (missing.type, missing.options) == ("text", [])


def test_an_ambiguous_company_name_lists_its_symbols(router: QuestionRouter) -> None:
    route = router.route("How are my Vanguard funds doing?")
    assert route.clarification is not None
    assert route.clarification.options == ["VOO", "VTI", "VXUS", "BND"]
