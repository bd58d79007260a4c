"""The deterministic question router: ≥ 97% of the labelled questions right, intent and parameters."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from router_questions import QUESTIONS

from tooldeck.packs.brokerage import BrokerageDataSource, QuestionRouter
from tooldeck.packs.brokerage.router import INTENT_PARAMS


@pytest.fixture(scope="module")
def router() -> QuestionRouter:
    return QuestionRouter(BrokerageDataSource().load())


def routed(router: QuestionRouter, question: str) -> tuple[str, object]:
    """(intent, params); ``a+b`` and a list of params for a question in parts."""
    route = router.route(question)
    if route.intent is None:
        assert route.clarification is not None
        return f"clarify:{route.clarification.parameter}", {}
    if route.also:
        parts = [route, *route.also]
        return "+".join(str(r.intent) for r in parts), [dict(r.params) for r in parts]
    return route.intent, dict(route.params)


def test_the_labelled_set_is_large_and_covers_every_intent() -> None:
    assert len(QUESTIONS) >= 300
    assert len({q for q, _, _ in QUESTIONS}) == len(QUESTIONS), "a question is repeated"
    intents = Counter(intent for _, intent, _ in QUESTIONS)
    assert set(INTENT_PARAMS) <= set(intents)
    assert min(intents[i] for i in INTENT_PARAMS) >= 10
    assert {i for i in intents if i.startswith("clarify:")} == {
        "clarify:symbol", "clarify:timeframe", "clarify:account", "clarify:intent"
    }  # fmt: skip


def test_at_least_97_percent_of_the_labelled_questions_route_right(router: QuestionRouter) -> None:
    wrong = []
    for question, intent, params in QUESTIONS:
        got = routed(router, question)
        if got != (intent, params):
            wrong.append(f"{question!r}: expected {intent} {params}, got {got[0]} {got[1]}")
    accuracy = 1 - len(wrong) / len(QUESTIONS)
    assert accuracy >= 0.97, f"{accuracy:.1%} right; wrong:\n" + "\n".join(wrong)


def test_an_unclear_account_is_asked_about_with_the_accounts_as_options(
    router: QuestionRouter,
) -> None:
    route = router.route("What's my brokerage account worth?")
    assert route.intent is None and route.clarification is not None
    assert route.clarification.model_dump() == {
        "question": "Which account do you mean?",
        "type": "radio",
        "options": ["Individual Brokerage", "Roth IRA", "Joint Brokerage", "All accounts"],
        "parameter": "account",
    }
    # answering the question: the parameter is given, the route goes through; the
    # option as shown (a name) or the id both work
    for answer in ("joint", "Joint Brokerage"):
        answered = router.route("What's my brokerage account worth?", {"account": answer})
        assert (answered.intent, dict(answered.params)) == ("account_value", {"account": "joint"})
    every = router.route("What's my brokerage account worth?", {"account": "All accounts"})
    assert (every.intent, dict(every.params)) == ("account_value", {})


def test_clarifying_options_are_words_a_person_understands(router: QuestionRouter) -> None:
    route = router.route("Hello")
    assert route.clarification is not None and route.clarification.parameter == "intent"
    assert "cash balance" in route.clarification.options
    assert not any("_" in option for option in route.clarification.options)
    picked = router.route("Hello", {"intent": "cash balance"})
    assert picked.intent == "cash_balance"


def test_out_of_scope_questions_are_said_so_with_low_confidence(router: QuestionRouter) -> None:
    for question in ("what's the weather", "bitcoin price", "book me a flight to denver"):
        route = router.route(question)
        assert (route.intent, route.confidence) == ("out_of_scope", 0.3), question


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


WORDS = ["since", "before", "between", "and", "in", "last", "past", "top", "not", "except",
         "feb", "nov", "sept", "30", "0", "99999999999", "days", "weeks", "my", "cash", "AAPL",
         "trades", "deposits", "worth", "?", "$", "it", "roth", "biggest", "2025"]  # fmt: skip


DATES = st.tuples(
    st.sampled_from(["since", "before", "between", "in", "from", "after", "and"]),
    st.sampled_from(["feb", "nov", "sept", "dec", "june"]),
    st.integers(-1, 40).map(str),
).map(" ".join)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(WORDS) | DATES | st.text(max_size=8), max_size=12).map(" ".join))
def test_the_router_never_raises(question: str) -> None:
    """Any words, in any order: a route or a clarifying question, never an exception."""
    route = ROUTER.route(question)
    assert (route.intent is None) == (route.clarification is not None)


ROUTER = QuestionRouter(BrokerageDataSource().load())
