"""Chat answers about the user's own context, without a model: the pack's ``IntentPack``.

"What's on my calendar today", "how much did I spend on Uber last month", "give me my
daily briefing", "will it rain", "what's on my todo list", "how long to get to work":
each routes to one ``user_context`` call, and the answer is written from its result,
citing the sources (``context:<category>:<platform>``) its numbers come from. A
question about a category nobody configured still routes here, and the answer says
how to configure it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from datetime import date, timedelta
from typing import Any

from tooldeck.core.intents import ComposedAnswer, Figure, Intent, IntentOutcome, IntentStep, Route
from tooldeck.core.result import ToolResult

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
        "spending",
        _step({"action": "query", "per_page": 5}, ("search", "date_from", "date_to")),
        description="What was spent (on a payee, in a period), with the transactions.",
    ),
)

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE))
    for name, pattern in (
        ("briefing", r"\b(briefing|brief me|my day look|rundown|morning summary)\b"),
        ("spending", r"\b(spen[dt]|spending|paid|pay for|expenses?|purchases?|bought)\b"),
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
_NOT_PAYEES = frozenset({"me", "my", "it", "that", "this", "them", "stuff", "things"})


def spending_window(question: str, today: date) -> tuple[str | None, str | None]:
    """(date_from, date_to) of a period named in ``question``, as YYYY-MM-DD, or Nones.

    Understands today, yesterday, this/last week, this/last month, this/last year,
    "in <month>" (the latest one not after today), "last N days".
    """
    q = question.lower()
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
    for number, name in enumerate(_MONTHS, start=1):
        if re.search(rf"\b{name}\b", q):
            year = today.year if number <= today.month else today.year - 1
            first = date(year, number, 1)
            last = (first.replace(day=28) + timedelta(days=4)).replace(day=1) - timedelta(days=1)
            return first.isoformat(), last.isoformat()
    return None, None


class ContextAnswers:
    """The context intents (see the module docstring).

    Args:
        today: The user's day, in their zone (for "last month").
    """

    intents: Sequence[Intent] = CONTEXT_INTENTS

    def __init__(self, today: Callable[[], date]) -> None:
        self.today = today

    def route(self, question: str, given: Mapping[str, Any] | None = None) -> Route:
        """The first category the question names; confidence 0.9, or 0 (no claim)."""
        for name, pattern in _PATTERNS:
            if pattern.search(question):
                return Route(name, self._params(name, question, dict(given or {})), 0.9)
        return Route("briefing", {}, 0.0)

    def _params(self, intent: str, question: str, given: dict[str, Any]) -> dict[str, Any]:
        if intent == "spending":
            start, end = spending_window(question, self.today())
            payee = _PAYEE.search(question)
            found = payee.group(1).strip() if payee else None
            search = found if found and found.lower() not in _NOT_PAYEES else None
            return {"search": search, "date_from": start, "date_to": end, **given}
        if intent == "commute":
            place = _PLACE.search(question)
            return {"destination": place.group(1).strip() if place else None, **given}
        return given

    def compose(self, route: Route, outcome: IntentOutcome) -> ComposedAnswer:
        """The answer from the ``user_context`` result, citing its sources."""
        data = outcome.results[0].data
        if route.intent == "spending":
            return _spending(data)
        if route.intent == "commute":
            return _commute(data)
        parts = [_category(c) for c in data["categories"]]
        if not parts:
            return ComposedAnswer(
                "No sources are configured yet: add [context.finance], [context.calendar], "
                "[context.weather], [context.commute] or [context.tasks] to tooldeck.toml.",
                (),
            )
        text = "\n\n".join(p[0] for p in parts)
        return ComposedAnswer(text, tuple(dict.fromkeys(c for p in parts for c in p[1])))

    def figures(self, results: Sequence[ToolResult]) -> list[Figure]:
        """None: every number of an answer is in the cited data."""
        return []

    def subjects(self) -> Mapping[str, tuple[str, str]]:
        """None: the categories are not subjects of numbers."""
        return {}


def _not_ready(category: Mapping[str, Any]) -> str | None:
    name = category["category"].capitalize()
    if category["status"] == "not_configured":
        return f"**{name}**: not configured yet; add {category['how_to_configure']}."
    if category["status"] == "error":
        errors = "; ".join(s["error"] for s in category["sources"] if s["error"])
        return f"**{name}**: could not be read ({errors})."
    return None


def _category(category: Mapping[str, Any]) -> tuple[str, list[str]]:
    """A category's paragraph and the sources it cites."""
    problem = _not_ready(category)
    if problem is not None:
        return problem, []
    summary, name = category["summary"], category["category"]
    writer = _WRITERS.get(name)
    text = writer(summary) if writer else f"**{name.capitalize()}**: {len(summary)} items."
    alerts = category.get("alerts") or []
    if alerts:
        text += " Heads-up: " + "; ".join(alerts) + "."
    return text, list(category["source_ids"])


def _calendar(summary: Mapping[str, Any]) -> str:
    events = summary["today_events"]
    if not events:
        head = f"**Calendar**: nothing today ({summary['today']})."
    else:
        listed = ", ".join(f"{e['title']} ({_clock(e)})" for e in events)
        head = f"**Calendar**: today ({summary['today']}): {listed}."
    upcoming = summary["upcoming"][:3]
    if upcoming:
        head += " Next: " + ", ".join(f"{e['title']} ({e['start'][:10]})" for e in upcoming) + "."
    return head


def _clock(event: Mapping[str, Any]) -> str:
    """``all day``, or the start's time of day (``09:30``)."""
    return "all day" if event["all_day"] else f"at {event['start'][11:16]}"


def _weather(summary: Mapping[str, Any]) -> str:
    now, days = summary["now"], summary["days"]
    text = "**Weather**:"
    if now:
        text += f" now {now['conditions']}, {now['temperature']}°"
    if days:
        d = days[0]
        text += f"; {d['date']}: {d['conditions']}, {d['low']}° to {d['high']}°"
    return text + "."


def _tasks(summary: Mapping[str, Any]) -> str:
    text = f"**Tasks**: {summary['open']} open, {summary['overdue']} overdue"
    if summary["next"]:
        text += f"; next: {summary['next'][0]['text']}"
    return text + "."


_SIGNS = {"USD": "$", "EUR": "€", "GBP": "£"}


def _money(amount: float, currency: str) -> str:
    """``$1,234.50``, ``€12.00``, or ``1,234.50 CHF`` (a sign before the symbol)."""
    sign, value = ("-" if amount < 0 else ""), f"{abs(amount):,.2f}"
    symbol = _SIGNS.get(currency)
    return f"{sign}{symbol}{value}" if symbol else f"{sign}{value} {currency}"


def _finance(summary: Mapping[str, Any]) -> str:
    if not summary.get("transactions"):
        return "**Finance**: no transactions."
    currency = summary["currency"]
    return (
        f"**Finance** ({summary['month']}): spent {_money(summary['spent'], currency)} and "
        f"received {_money(summary['received'], currency)}."
    )


def _commute_summary(summary: Mapping[str, Any]) -> str:
    trips = ", ".join(f"{t['destination']} {t['minutes']} min" for t in summary["trips"])
    return f"**Commute** from {summary['from']}: {trips}."


_WRITERS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "calendar": _calendar, "weather": _weather, "tasks": _tasks, "finance": _finance,
    "commute": _commute_summary,
}  # fmt: skip


def _spending(data: Mapping[str, Any]) -> ComposedAnswer:
    (finance,) = data["categories"]
    problem = _not_ready(finance)
    query = data.get("query")
    if problem is not None or not query:
        return ComposedAnswer(problem or "I could not read your transactions.", ())
    what = f" on {query['search']}" if query.get("search") else ""
    when = (
        f" from {query['date_from']} to {query['date_to']}"
        if query.get("date_from") and query.get("date_to")
        else ""
    )
    totals = query["totals"]
    transactions = query["transactions"]
    currency = transactions[0]["currency"] if transactions else "USD"
    if not totals["count"]:
        return ComposedAnswer(f"I found no transactions{what}{when}.", tuple(query["source_ids"]))
    count = totals["count"]
    text = (
        f"You spent {_money(totals['spent'], currency)}{what}{when}, in {count} "
        f"transaction{'s' if count != 1 else ''}"
        + (f" (and received {_money(totals['received'], currency)})" if totals["received"] else "")
        + "."
    )
    latest = query["transactions"][:3]
    if latest:
        text += (
            " Latest: "
            + "; ".join(
                f"{t['date']} {t['payee']} {_money(t['amount'], t['currency'])}" for t in latest
            )
            + "."
        )
    return ComposedAnswer(text, tuple(query["source_ids"]))


def _commute(data: Mapping[str, Any]) -> ComposedAnswer:
    (commute,) = data["categories"]
    problem = _not_ready(commute)
    trip = data.get("commute")
    if problem is not None or not trip:
        return ComposedAnswer(problem or "I could not reach the routing server.", ())
    return ComposedAnswer(
        f"To {trip['destination']}: {trip['minutes']} minutes ({trip['km']} km, "
        f"{trip['profile']}).",
        tuple(trip["source_ids"]),
    )
