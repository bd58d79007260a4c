"""Chat answers about the user's own context, without a model: the pack's ``IntentPack``.

"What's on my calendar today", "how much did I spend on Uber last month", "which shares
did I buy this year", "give me my daily briefing", "will it rain", "what's on my todo
list", "how long to get to work": each routes to one ``user_context`` call, and the
answer is written from its result, citing the sources (``context:<category>:<platform>``)
its numbers come from. A question about a category nobody configured still routes here,
and the answer says how to configure it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from datetime import date, timedelta
from typing import Any, Literal

from tooldeck.core.intents import ComposedAnswer, Figure, Intent, IntentOutcome, IntentStep, Route
from tooldeck.core.result import ToolResult
from tooldeck.packs.context.finance_answers import balances_answer, spending_answer, trades_answer
from tooldeck.packs.context.writing import (
    AnswerWriter,
    calendar_days,
    category_answer,
    commute_answer,
)

__all__ = ["CONTEXT_INTENTS", "ContextAnswers", "spending_window"]


def _step(fixed: Mapping[str, Any], params: tuple[str, ...] = ()) -> tuple[IntentStep, ...]:
    return (IntentStep("user_context", params=params, fixed=fixed),)


CONTEXT_INTENTS = (
    Intent("briefing", _step({"action": "briefing"}), description="The daily briefing."),
    Intent("calendar", _step({"category": "calendar"}), description="Today's and next events."),
    Intent("weather", _step({"category": "weather"}), description="Now and the next days."),
    Intent("tasks", _step({"category": "tasks"}), description="Open, overdue, due today."),
    Intent(
        "commute",
        _step({"action": "commute"}, ("destination",)),
        description="Travel time to a place of the address book.",
    ),
    Intent(
        "balances",
        _step({"category": "finance"}),
        description="Each account's balance and the holdings, as the statements state them.",
    ),
    Intent(
        "trades",
        _step(
            {"action": "query", "kind": "investment", "per_page": 5},
            ("search", "finance_category", "date_from", "date_to"),
        ),
        description="What was bought, sold or received (dividends) in investment accounts.",
    ),
    Intent(
        "spending",
        _step(
            {"action": "query", "kind": "bank", "per_page": 5},
            ("search", "date_from", "date_to", "sort", "sort_dir"),
        ),
        description="What was spent (on a payee, in a period), with the transactions.",
    ),
)

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE))
    for name, pattern in (
        ("briefing", r"\b(briefing|brief me|my day look|rundown|morning summary)\b"),
        (
            "trades",
            r"\b(dividends?|reinvest\w*|trades|traded|investment transactions|sold|did i sell|"
            r"(?:bought|sold|buy|sell|purchased?)\b[^?.!]{0,60}?\b(?:shares?|stocks?|funds?|"
            r"etfs?|units|securities|bonds?)|(?:shares?|stocks?|funds?|etfs?)\b[^?.!]{0,60}?"
            r"\b(?:bought|sold|buy|sell|purchased?))\b",
        ),
        (
            "balances",
            r"\b(balances?|net worth|worth|how much (?:money|cash) (?:do|have) i|"
            r"(?:my|the) (?:holdings|investments|positions))\b",
        ),
        ("spending", r"\b(spen[dt]|spending|paid|pay for|expenses?|purchases?|bought|did i buy)\b"),
        ("calendar", r"\b(calendar|agenda|meetings?|appointments?|schedule|events?)\b"),
        ("weather", r"\b(weather|rain|raining|forecast|temperature|umbrella|snow|sunny)\b"),
        ("tasks", r"\b(to-?dos?|todo\.txt|tasks?|to do list|chores)\b"),
        ("commute", r"\b(commute|travel time|drive to|get to|how long to|minutes to)\b"),
    )
)
_PAYEE = re.compile(r"\b(?:on|at|for|to)\s+([a-z0-9][\w&.' -]*?)(?=\s+(?:in|last|this|since|"
                    r"during|over|today|yesterday)\b|[?.!,]|$)", re.IGNORECASE)  # fmt: skip
_PLACE = re.compile(r".*\bto\s+(?:the\s+)?([a-z][\w -]*?)\s*[?.!,]*$", re.IGNORECASE)
"""The place after the last "to" ("how long to get to work?" → work)."""
_MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"]  # fmt: skip
_FINANCE = frozenset({"balances", "spending", "trades"})
"""The intents that read the user's statements."""
_LARGEST = re.compile(r"\b(?:largest|biggest|most expensive|highest|largest single)\b", re.I)
_NOT_PAYEES = frozenset({"me", "my", "it", "that", "this", "them", "stuff", "things"})
_HOLDING = re.compile(r"\b(?:of|in|from|on)\s+(?:my\s+|the\s+)?([a-z0-9][\w&.' -]*?)(?=\s+(?:did|"
                      r"have|has|in|last|this|since|during|over|today|yesterday|shares?|"
                      r"stocks?)\b|[?.!,]|$)", re.IGNORECASE)  # fmt: skip
"""The security a trade question names: "shares of VTI", "dividends from Visa"."""
_NOT_HOLDINGS = _NOT_PAYEES | {"account", "accounts", "ira", "brokerage", "portfolio",
                               "401k", "investments", "brokerage account", "dividends"}  # fmt: skip
_INCOME = re.compile(r"\b(dividend|interest|capital gains)", re.IGNORECASE)
_ADVICE = re.compile(r"\b(?:should|shall|could|would|will|can) i\b|\btax(?:es)?\b|\bowe\b", re.I)
"""Advice, predictions, tax owed: not what the statements' trades answer."""
_SOLD = re.compile(r"\b(?:sold|sell|sells|selling)\b", re.IGNORECASE)
_BOUGHT = re.compile(r"\b(?:bought|buy|buys|buying|purchased?)\b", re.IGNORECASE)
_NOT_A_NAME = re.compile(
    rf"(?:{'|'.join(_MONTHS)})?,?\s*(?:(?:19|20)\d\d)?|(?:this|last|next|past)\b.*", re.I
)
"""A period said where a security would be ("of July 2023", "in 2023", "of last year")."""


def spending_window(question: str, today: date) -> tuple[str | None, str | None]:
    """(date_from, date_to) of a period named in ``question``, as YYYY-MM-DD, or Nones.

    Understands today, yesterday, this/last week, this/last month, this/last year,
    "in <month>" (the latest one not after today), "<month> <year>", "in <year>",
    "last N days".
    """
    q = question.lower()
    month = next((n for n, name in enumerate(_MONTHS, 1) if re.search(rf"\b{name}\b", q)), 0)
    said = re.search(r"\b(?:in|during|for|of)\s+((?:19|20)\d\d)\b", q)
    if said and not month:  # "in 2009": the whole year
        return f"{said.group(1)}-01-01", f"{said.group(1)}-12-31"
    if "yesterday" in q:
        day = today - timedelta(days=1)
        return day.isoformat(), day.isoformat()
    if "today" in q:
        return today.isoformat(), today.isoformat()
    days = re.search(r"\b(?:last|past)\s+(\d{1,3})\s+days\b", q)
    if days:
        return (today - timedelta(days=int(days.group(1)) - 1)).isoformat(), today.isoformat()
    if "last week" in q or "this week" in q:
        monday = today - timedelta(days=today.weekday())
        if "last week" in q:
            return (monday - timedelta(days=7)).isoformat(), (
                monday - timedelta(days=1)
            ).isoformat()
        return monday.isoformat(), today.isoformat()
    if "last month" in q:
        end = today.replace(day=1) - timedelta(days=1)
        return end.replace(day=1).isoformat(), end.isoformat()
    if "this month" in q:
        return today.replace(day=1).isoformat(), today.isoformat()
    if "last year" in q:
        year = today.year - 1
        return f"{year}-01-01", f"{year}-12-31"
    if "this year" in q:
        return f"{today.year}-01-01", today.isoformat()
    if month:
        written = re.search(rf"\b{_MONTHS[month - 1]},?\s+((?:19|20)\d\d)\b", q)  # "april 2009"
        year = (
            int(written.group(1))
            if written
            else (today.year if month <= today.month else today.year - 1)
        )
        first = date(year, month, 1)
        last = (first.replace(day=28) + timedelta(days=4)).replace(day=1) - timedelta(days=1)
        return first.isoformat(), last.isoformat()
    return None, None


def calendar_window(question: str, today: date) -> tuple[str, str, str] | None:
    """(first day, last day, as said) of the days a calendar question names, or None.

    "today", "tomorrow", "this week" (today to Sunday), "next week" (Monday to Sunday),
    "this weekend"; None: the default view (today and what comes next).
    """
    q = question.lower()
    monday = today - timedelta(days=today.weekday())
    for said, first, last in (
        ("next week", monday + timedelta(days=7), monday + timedelta(days=13)),
        ("this week", today, monday + timedelta(days=6)),
        ("this weekend", monday + timedelta(days=5), monday + timedelta(days=6)),
        ("tomorrow", today + timedelta(days=1), today + timedelta(days=1)),
    ):
        if said in q:
            return first.isoformat(), last.isoformat(), said
    return None


class ContextAnswers:
    """The context intents (see the module docstring).

    Args:
        today: The user's day, in their zone (for "last month").
        finance: Where the user's statements come from, which decides how strongly
            questions about money are claimed: ``configured`` (``[context.finance]``):
            spending, trades and balances at 0.9; ``uploads`` (each user may upload
            theirs): spending and trades at 0.5, so that another pack's data (a
            brokerage file) wins;
            ``none``: neither (issue 54: "Finance: not configured yet" answered a
            question about a holding at 0.9).
    """

    intents: Sequence[Intent] = CONTEXT_INTENTS

    def __init__(
        self, today: Callable[[], date], *,
        finance: Literal["configured", "uploads", "none"] = "none",
    ) -> None:  # fmt: skip
        self.today = today
        self._sure = {"balances": 0.9, "spending": 0.9, "trades": 0.9} if (
            finance == "configured"
        ) else {"spending": 0.5, "trades": 0.5} if finance == "uploads" else {}  # fmt: skip
        self._patterns = [(n, p) for n, p in _PATTERNS if n not in _FINANCE or n in self._sure]

    def route(self, question: str, given: Mapping[str, Any] | None = None) -> Route:
        """The first category the question names; confidence 0.9, or 0 (no claim)."""
        for name, pattern in self._patterns:
            if name == "trades" and _ADVICE.search(question):
                continue  # "should I sell my shares?", "tax I owe on what I sold": not the trades
            if pattern.search(question):
                sure = self._sure.get(name, 0.9)
                return Route(name, self._params(name, question, dict(given or {})), sure)
        return Route("briefing", {}, 0.0)

    def _params(self, intent: str, question: str, given: dict[str, Any]) -> dict[str, Any]:
        if intent == "spending":
            start, end = spending_window(question, self.today())
            payee = _PAYEE.search(question)
            found = payee.group(1).strip() if payee else None
            search = found if found and found.lower() not in _NOT_PAYEES else None
            largest = _LARGEST.search(question)  # the largest expense: the most negative first
            order = {"sort": "amount", "sort_dir": "asc"} if largest else {}
            return {"search": search, "date_from": start, "date_to": end, **order, **given}
        if intent == "trades":
            start, end = spending_window(question, self.today())
            named = _HOLDING.search(question)
            found = named.group(1).strip() if named else ""
            income = _INCOME.search(question)
            category = (
                income.group(1).lower() if income
                else "investment sell" if _SOLD.search(question)
                else "investment buy" if _BOUGHT.search(question)
                else None
            )  # fmt: skip
            name = found.lower() not in _NOT_HOLDINGS and not _NOT_A_NAME.fullmatch(found)
            return {
                "search": found if found and name else None, "finance_category": category,
                "date_from": start, "date_to": end, **given,
            }  # fmt: skip
        if intent == "calendar":
            window = calendar_window(question, self.today())
            return {**dict(zip(("days_from", "days_to", "said"), window or (), strict=False)),
                    **given}  # fmt: skip
        if intent == "commute":
            place = _PLACE.search(question)
            return {"destination": place.group(1).strip() if place else None, **given}
        return given

    def compose(self, route: Route, outcome: IntentOutcome) -> ComposedAnswer:
        """The answer from the ``user_context`` result, citing its sources.

        Every figure and fact is bound to its field (``core.claims``): the claim names
        the source of the record it reads (a category's, a query's, a trip's).
        """
        result = outcome.results[0]
        w = AnswerWriter(result.data)
        if route.intent == "spending":
            text, cited = spending_answer(
                w, "Largest" if route.params.get("sort") == "amount" else "Latest"
            )
        elif route.intent == "trades":
            text, cited = trades_answer(w)
        elif route.intent == "calendar" and route.params.get("days_from"):
            text, cited = calendar_days(w, route.params)
        elif route.intent == "balances":
            text, cited = balances_answer(w)
        elif route.intent == "commute":
            text, cited = commute_answer(w)
        else:
            parts = [category_answer(w, i) for i in range(len(w.data["categories"]))]
            if not parts:
                return ComposedAnswer(
                    "No sources are configured yet: add [context.finance], [context.calendar], "
                    "[context.weather], [context.commute] or [context.tasks] to tooldeck.toml.",
                    (),
                )
            text = "\n\n".join(p[0] for p in parts)
            cited = [c for p in parts for c in p[1]]
        markdown, claims = w.claims.finish(text)
        rid = result.metadata.request_id
        bound = tuple(c.model_copy(update={"result": rid}) for c in claims)
        return ComposedAnswer(markdown, tuple(dict.fromkeys(cited)), (), bound, True)

    def figures(self, results: Sequence[ToolResult]) -> list[Figure]:
        """None: every number of an answer is in the cited data."""
        return []

    def subjects(self) -> Mapping[str, tuple[str, str]]:
        """None: the categories are not subjects of numbers."""
        return {}
