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
from typing import Any, Literal

from tooldeck.core.claims import ClaimWriter, resolve_pointer
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
        "balances",
        _step({"category": "finance"}),
        description="Each account's balance and the holdings, as the statements state them.",
    ),
    Intent(
        "spending",
        _step(
            {"action": "query", "per_page": 5},
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
            "balances",
            r"\b(balances?|net worth|worth|how much (?:money|cash) (?:do|have) i|"
            r"(?:my|the) (?:holdings|investments|positions))\b",
        ),
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
_FINANCE = frozenset({"balances", "spending"})
"""The intents that read the user's statements."""
_LARGEST = re.compile(r"\b(?:largest|biggest|most expensive|highest|largest single)\b", re.I)
_NOT_PAYEES = frozenset({"me", "my", "it", "that", "this", "them", "stuff", "things"})


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
            spending and balances at 0.9; ``uploads`` (each user may upload theirs):
            spending at 0.5, so that another pack's data (a brokerage file) wins;
            ``none``: neither (issue 54: "Finance: not configured yet" answered a
            question about a holding at 0.9).
    """

    intents: Sequence[Intent] = CONTEXT_INTENTS

    def __init__(
        self, today: Callable[[], date], *,
        finance: Literal["configured", "uploads", "none"] = "none",
    ) -> None:  # fmt: skip
        self.today = today
        self._sure = {"balances": 0.9, "spending": 0.9} if finance == "configured" else (
            {"spending": 0.5} if finance == "uploads" else {}
        )  # fmt: skip
        self._patterns = [(n, p) for n, p in _PATTERNS if n not in _FINANCE or n in self._sure]

    def route(self, question: str, given: Mapping[str, Any] | None = None) -> Route:
        """The first category the question names; confidence 0.9, or 0 (no claim)."""
        for name, pattern in self._patterns:
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
        w = _Writer(result.data)
        if route.intent == "spending":
            text, cited = _spending(
                w, "Largest" if route.params.get("sort") == "amount" else "Latest"
            )
        elif route.intent == "calendar" and route.params.get("days_from"):
            text, cited = _calendar_days(w, route.params)
        elif route.intent == "balances":
            text, cited = _balances(w)
        elif route.intent == "commute":
            text, cited = _commute(w)
        else:
            parts = [_category(w, i) for i in range(len(w.data["categories"]))]
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


class _Writer:
    """The ``user_context`` result's data, and the claims of the figures written from it."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = data
        self.claims = ClaimWriter()

    def at(self, pointer: str) -> Any:
        return resolve_pointer(self.data, pointer)

    def bind(self, text: str, source: str, pointer: str, kind: str | None = None) -> str:
        """``text``, bound to the field at ``pointer`` of a record of ``source``."""
        return self.claims.figure(text, source, pointer, kind=kind)

    def value(self, source: str, pointer: str, kind: str | None = None) -> str:
        """The field at ``pointer`` said as itself (a number, a title, a date)."""
        value = self.at(pointer)
        text = str(value)[:10] if kind == "date" else str(value)
        return self.bind(text, source, pointer, kind)

    def money(self, source: str, pointer: str, currency: str) -> str:
        return self.bind(_money(self.at(pointer), currency), source, pointer, "money")


def _not_ready(w: _Writer, at: str) -> tuple[str, list[str]] | None:
    """What to say of a category that is not ready, and the sources it cites; or None.

    Not configured, or could not be read: each error is bound to its source's record,
    so the answer cites those sources.
    """
    category = w.at(at)
    name = category["category"].capitalize()
    if category["status"] == "not_configured":
        return f"**{name}**: not configured yet; add {category['how_to_configure']}.", []
    if category["status"] == "error":
        failed = [(i, s) for i, s in enumerate(category["sources"]) if s["error"]]
        errors = "; ".join(w.value(s["source_id"], f"{at}/sources/{i}/error") for i, s in failed)
        cited = list(dict.fromkeys(s["source_id"] for _, s in failed))
        return f"**{name}**: could not be read ({errors}).", cited
    return None


def _category(w: _Writer, i: int) -> tuple[str, list[str]]:
    """A category's paragraph and the sources it cites."""
    at = f"/categories/{i}"
    problem = _not_ready(w, at)
    if problem is not None:
        return problem
    category = w.at(at)
    name, source = category["category"], category["source_ids"][0]
    writer = _WRITERS.get(name)
    if writer is not None:
        text = writer(w, source, f"{at}/summary")
    else:
        count = w.claims.figure(
            str(len(category["summary"])), source, op="count", inputs=(f"{at}/summary",)
        )
        text = f"**{name.capitalize()}**: {count} items."
    alerts = category.get("alerts") or []
    if alerts:
        said = [w.value(source, f"{at}/alerts/{k}") for k in range(len(alerts))]
        text += " Heads-up: " + "; ".join(said) + "."
    return text, list(category["source_ids"])


def _balances(w: _Writer) -> tuple[str, list[str]]:
    """Each balance and the largest holdings the statements state, or what they cannot say.

    Only what a statement states (``LEDGERBAL``, ``INVBAL``, ``INVPOSLIST``), each figure
    bound to its record, with its date: nothing is added up across accounts or currencies.
    """
    at = "/categories/0"
    problem = _not_ready(w, at)
    if problem is not None:
        return problem
    summary = w.at(f"{at}/summary")
    balances, holdings = summary.get("balances", []), summary.get("holdings", [])
    cited = list(w.at(at)["source_ids"])
    if not balances and not holdings:
        return (
            "Your statements state no balance and no holding (OFX LEDGERBAL, INVBAL or "
            "INVPOSLIST), so I cannot say how much you have; I can say what you spent "
            "or received."
        ), cited
    lines = []
    for k, b in enumerate(balances):
        here, source = f"{at}/summary/balances/{k}", b["source_id"]
        line = (
            f"- {w.value(source, f'{here}/account')} ({b['kind']}): "
            f"{w.money(source, f'{here}/balance', b['currency'])}"
        )
        if b.get("as_of"):
            line += f" on {w.value(source, f'{here}/as_of', 'date')}"
        lines.append(line)
    for k, h in enumerate(holdings[:5]):
        here, source = f"{at}/summary/holdings/{k}", h["source_id"]
        name = (
            w.value(source, f"{here}/ticker")
            if h.get("ticker")
            else w.value(source, f"{here}/security")
        )
        worth = h.get("market_value")
        lines.append(
            f"- {name}: {w.value(source, f'{here}/units')} units"
            + (f" worth {w.money(source, f'{here}/market_value', h['currency'])}"
               if worth is not None else "")
        )  # fmt: skip
    more = f" ({len(holdings) - 5} more holdings)" if len(holdings) > 5 else ""
    return "**Balances** from your statements" + more + ":\n" + "\n".join(lines), cited


def _calendar_days(w: _Writer, params: Mapping[str, Any]) -> tuple[str, list[str]]:
    """The events of the days the question names ("this week"), each with its day."""
    at = "/categories/0"
    problem = _not_ready(w, at)
    if problem is not None:
        return problem
    category = w.at(at)
    source, first, last = category["source_ids"][0], params["days_from"], params["days_to"]
    listed = [
        (f"{at}/summary/{part}/{k}", event)
        for part in ("today_events", "upcoming")
        for k, event in enumerate(category["summary"][part])
        if first <= event["start"][:10] <= last
    ]
    if not listed:
        return f"**Calendar**: nothing {params['said']}.", list(category["source_ids"])
    said = ", ".join(
        f"{w.value(source, f'{here}/title')} ({w.value(source, f'{here}/start', 'date')}"
        + ("" if event["all_day"] else f" {_clock(w, source, here)}")
        + ")"
        for here, event in listed
    )
    return f"**Calendar**, {params['said']}: {said}.", list(category["source_ids"])


def _calendar(w: _Writer, source: str, at: str) -> str:
    summary = w.at(at)
    today = w.value(source, f"{at}/today", "date")
    events = summary["today_events"]
    if not events:
        head = f"**Calendar**: nothing today ({today})."
    else:
        listed = ", ".join(
            f"{w.value(source, f'{at}/today_events/{k}/title')} "
            f"({_clock(w, source, f'{at}/today_events/{k}')})"
            for k in range(len(events))
        )
        head = f"**Calendar**: today ({today}): {listed}."
    upcoming = summary["upcoming"][:3]
    if upcoming:
        head += (
            " Next: "
            + ", ".join(
                f"{w.value(source, f'{at}/upcoming/{k}/title')} "
                f"({w.value(source, f'{at}/upcoming/{k}/start', 'date')})"
                for k in range(len(upcoming))
            )
            + "."
        )
    return head


def _clock(w: _Writer, source: str, at: str) -> str:
    """``all day``, or the start's time of day (``at 09:30``)."""
    event = w.at(at)
    if event["all_day"]:
        return "all day"
    return f"at {w.bind(event['start'][11:16], source, f'{at}/start', 'time')}"


def _weather(w: _Writer, source: str, at: str) -> str:
    now, days = w.at(f"{at}/now"), w.at(f"{at}/days")
    text = "**Weather**:"
    if now:
        text += (
            f" now {w.value(source, f'{at}/now/conditions')}, "
            f"{w.value(source, f'{at}/now/temperature')}°"
        )
    if days:
        d = f"{at}/days/0"
        text += (
            f"; {w.value(source, f'{d}/date', 'date')}: {w.value(source, f'{d}/conditions')}, "
            f"{w.value(source, f'{d}/low')}° to {w.value(source, f'{d}/high')}°"
        )
    return text + "."


def _tasks(w: _Writer, source: str, at: str) -> str:
    text = (
        f"**Tasks**: {w.value(source, f'{at}/open')} open, "
        f"{w.value(source, f'{at}/overdue')} overdue"
    )
    if w.at(f"{at}/next"):
        text += f"; next: {w.value(source, f'{at}/next/0/text')}"
    return text + "."


_SIGNS = {"USD": "$", "EUR": "€", "GBP": "£"}


def _money(amount: float, currency: str) -> str:
    """``$1,234.50``, ``€12.00``, or ``1,234.50 CHF`` (a sign before the symbol)."""
    sign, value = ("-" if amount < 0 else ""), f"{abs(amount):,.2f}"
    symbol = _SIGNS.get(currency)
    return f"{sign}{symbol}{value}" if symbol else f"{sign}{value} {currency}"


def _finance(w: _Writer, source: str, at: str) -> str:
    summary = w.at(at)
    if not summary.get("transactions"):
        return "**Finance**: no transactions."
    currency = summary["currency"]
    if currency is None:  # several currencies: each its own, never added
        return f"**Finance** ({w.value(source, f'{at}/month')}): " + _each_currency(
            w, source, f"{at}/by_currency"
        )
    return (
        f"**Finance** ({w.value(source, f'{at}/month')}): spent "
        f"{w.money(source, f'{at}/spent', currency)} and received "
        f"{w.money(source, f'{at}/received', currency)}."
    )


def _each_currency(w: _Writer, source: str, at: str) -> str:
    """Each currency's totals: ``spent $5.00 and received $0.00 in USD; spent €3.00 …``."""
    return (
        "; ".join(
            f"spent {w.money(source, f'{at}/{k}/spent', each['currency'])} and received "
            f"{w.money(source, f'{at}/{k}/received', each['currency'])} in "
            f"{w.value(source, f'{at}/{k}/currency')}"
            for k, each in enumerate(w.at(at))
        )
        + "."
    )


def _commute_summary(w: _Writer, source: str, at: str) -> str:
    trips = ", ".join(
        f"{w.value(source, f'{at}/trips/{k}/destination')} "
        f"{w.value(source, f'{at}/trips/{k}/minutes')} min"
        for k in range(len(w.at(f"{at}/trips")))
    )
    return f"**Commute** from {w.value(source, f'{at}/from')}: {trips}."


_WRITERS: dict[str, Callable[[_Writer, str, str], str]] = {
    "calendar": _calendar, "weather": _weather, "tasks": _tasks, "finance": _finance,
    "commute": _commute_summary,
}  # fmt: skip


def _spending(w: _Writer, listed: str = "Latest") -> tuple[str, list[str]]:
    """What was spent (and received) in the query's window, and its first transactions.

    ``listed``: "Latest" (by date), or "Largest" (by amount: the largest expense is
    said first, as the question asks for it).
    """
    problem = _not_ready(w, "/categories/0")
    query = w.data.get("query")
    if problem is not None or not query:
        return problem or ("I could not read your transactions.", [])
    source = query["source_ids"][0] if query["source_ids"] else ""
    what = f" on {w.value(source, '/query/search')}" if query.get("search") else ""
    when = (
        f" from {w.value(source, '/query/date_from', 'date')} to "
        f"{w.value(source, '/query/date_to', 'date')}"
        if query.get("date_from") and query.get("date_to")
        else ""
    )
    totals, transactions = query["totals"], query["transactions"]
    currency = totals["currency"]
    if not totals["count"]:
        return f"I found no transactions{what}{when}.", list(query["source_ids"])
    count = totals["count"]
    if currency is None:  # several currencies: each its own, never added
        text = (
            f"In the {w.value(source, '/query/totals/count')} transactions{what}{when}, you "
            + _each_currency(w, source, "/query/totals/by_currency")
        )
    else:
        text = (
            f"You spent {w.money(source, '/query/totals/spent', currency)}{what}{when}, in "
            f"{w.value(source, '/query/totals/count')} transaction{'s' if count != 1 else ''}"
            + (
                f" (and received {w.money(source, '/query/totals/received', currency)})"
                if totals["received"]
                else ""
            )
            + "."
        )
    if transactions:
        text += (
            f" {listed}: "
            + "; ".join(
                f"{w.value(source, f'/query/transactions/{k}/date', 'date')} "
                f"{w.value(source, f'/query/transactions/{k}/payee')} "
                f"{w.money(source, f'/query/transactions/{k}/amount', t['currency'])}"
                for k, t in enumerate(transactions[:3])
            )
            + "."
        )
    if listed == "Largest" and transactions and transactions[0]["amount"] < 0:
        first = transactions[0]
        text = (
            f"Your largest expense{what}{when}: "
            f"{w.value(source, '/query/transactions/0/payee')} "
            f"{w.money(source, '/query/transactions/0/amount', first['currency'])} on "
            f"{w.value(source, '/query/transactions/0/date', 'date')}. " + text
        )
    return text, list(query["source_ids"])


def _commute(w: _Writer) -> tuple[str, list[str]]:
    problem = _not_ready(w, "/categories/0")
    trip = w.data.get("commute")
    if problem is not None or not trip:
        return problem or ("I could not reach the routing server.", [])
    source = trip["source_ids"][0]
    text = (
        f"To {w.value(source, '/commute/destination')}: "
        f"{w.value(source, '/commute/minutes')} minutes "
        f"({w.value(source, '/commute/km')} km, {w.value(source, '/commute/profile')})."
    )
    return text, list(trip["source_ids"])
