"""Writing an answer from a ``user_context`` result: every figure bound to its field.

``AnswerWriter`` holds the result and the claims (``core.claims``) of what is written
from it; ``category_answer`` writes one category's paragraph (calendar, weather, tasks,
finance's month, commute), ``calendar_days`` and ``commute_answer`` the answers to those
questions, ``not_ready`` what to say of a category that is not configured or failed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tooldeck.core.claims import ClaimWriter, resolve_pointer

__all__ = [
    "AnswerWriter",
    "calendar_days",
    "category_answer",
    "commute_answer",
    "each_currency",
    "format_money",
    "not_ready",
]


class AnswerWriter:
    """The ``user_context`` result's data, and the claims of the figures written from it."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = data
        self.claims = ClaimWriter()

    def at(self, pointer: str) -> Any:
        """The field of the result's data at the JSON ``pointer``."""
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
        """The amount at ``pointer`` said in ``currency`` (``format_money``), bound."""
        return self.bind(format_money(self.at(pointer), currency), source, pointer, "money")


def not_ready(w: AnswerWriter, at: str) -> tuple[str, list[str]] | None:
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


def category_answer(w: AnswerWriter, i: int) -> tuple[str, list[str]]:
    """A category's paragraph and the sources it cites."""
    at = f"/categories/{i}"
    problem = not_ready(w, at)
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


def calendar_days(w: AnswerWriter, params: Mapping[str, Any]) -> tuple[str, list[str]]:
    """The events of the days the question names ("this week"), each with its day."""
    at = "/categories/0"
    problem = not_ready(w, at)
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


def _calendar(w: AnswerWriter, source: str, at: str) -> str:
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


def _clock(w: AnswerWriter, source: str, at: str) -> str:
    """``all day``, or the start's time of day (``at 09:30``)."""
    event = w.at(at)
    if event["all_day"]:
        return "all day"
    return f"at {w.bind(event['start'][11:16], source, f'{at}/start', 'time')}"


def _weather(w: AnswerWriter, source: str, at: str) -> str:
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


def _tasks(w: AnswerWriter, source: str, at: str) -> str:
    text = (
        f"**Tasks**: {w.value(source, f'{at}/open')} open, "
        f"{w.value(source, f'{at}/overdue')} overdue"
    )
    if w.at(f"{at}/next"):
        text += f"; next: {w.value(source, f'{at}/next/0/text')}"
    return text + "."


_SIGNS = {"USD": "$", "EUR": "€", "GBP": "£"}


def format_money(amount: float, currency: str) -> str:
    """``$1,234.50``, ``€12.00``, or ``1,234.50 CHF`` (a sign before the symbol)."""
    sign, value = ("-" if amount < 0 else ""), f"{abs(amount):,.2f}"
    symbol = _SIGNS.get(currency)
    return f"{sign}{symbol}{value}" if symbol else f"{sign}{value} {currency}"


def _finance(w: AnswerWriter, source: str, at: str) -> str:
    summary = w.at(at)
    if not summary.get("transactions"):
        return "**Finance**: no transactions."
    currency = summary["currency"]
    if currency is None:  # several currencies: each its own, never added
        return f"**Finance** ({w.value(source, f'{at}/month')}): " + each_currency(
            w, source, f"{at}/by_currency"
        )
    return (
        f"**Finance** ({w.value(source, f'{at}/month')}): spent "
        f"{w.money(source, f'{at}/spent', currency)} and received "
        f"{w.money(source, f'{at}/received', currency)}."
    )


def each_currency(w: AnswerWriter, source: str, at: str) -> str:
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


def _commute_summary(w: AnswerWriter, source: str, at: str) -> str:
    trips = ", ".join(
        f"{w.value(source, f'{at}/trips/{k}/destination')} "
        f"{w.value(source, f'{at}/trips/{k}/minutes')} min"
        for k in range(len(w.at(f"{at}/trips")))
    )
    return f"**Commute** from {w.value(source, f'{at}/from')}: {trips}."


_WRITERS: dict[str, Callable[[AnswerWriter, str, str], str]] = {
    "calendar": _calendar, "weather": _weather, "tasks": _tasks, "finance": _finance,
    "commute": _commute_summary,
}  # fmt: skip


def commute_answer(w: AnswerWriter) -> tuple[str, list[str]]:
    """The travel time of the ``commute`` action's trip, and the sources it cites."""
    problem = not_ready(w, "/categories/0")
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
