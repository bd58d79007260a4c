"""Calendar: iCalendar files and ICS URLs, recurring events expanded, in the user's zone.

Events become ``{uid, title, start, end, all_day, location, calendar}`` with ``start``
and ``end`` as ISO date-times in the configured time zone (dates for all-day events).
Recurrence rules (RRULE, RDATE, EXDATE, moved occurrences) are expanded by
``recurring-ical-events``; time zones come from the file's VTIMEZONEs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from tooldeck.packs.context.adapter import ContextAdapter, SourceError

__all__ = ["CalendarAdapter", "normalize_calendar"]


def _file(source: str) -> tuple[str, bytes]:
    path = Path(source).expanduser()
    if not path.is_file():
        raise SourceError(f"calendar not found: {path}")
    return path.name, path.read_bytes()


class CalendarAdapter(ContextAdapter):
    """Events of ``.ics`` files and ICS URLs, from yesterday to ``days`` ahead.

    Args:
        sources: Paths, or ``http(s)://`` URLs of an ICS feed (a CalDAV server's export).
        timezone: The user's zone (IANA name): "today" and every time are in it.
        days: How far ahead to read.
        now: The clock (tests fix it).
        timeout_s: Seconds per URL.
    """

    category = "calendar"
    platform = "ical"

    def __init__(
        self,
        sources: Sequence[str],
        timezone: str = "UTC",
        days: int = 14,
        now: Callable[[], datetime] | None = None,
        timeout_s: float = 10.0,
    ) -> None:
        self.sources = list(sources)
        self.zone = ZoneInfo(timezone)
        self.days = days
        self.now = now or (lambda: datetime.now(self.zone))
        self.timeout_s = timeout_s

    async def read(self) -> tuple[list[dict[str, Any]], int, dict[str, Any]]:
        """The events of every source in the window, sorted by start.

        Raises:
            SourceError: a file is missing, a URL fails, or a source is not iCalendar.
        """
        texts = [await self._text(source) for source in self.sources]
        return await asyncio.to_thread(self._events, texts)

    async def _text(self, source: str) -> tuple[str, bytes]:
        if source.startswith(("http://", "https://")):
            import httpx

            try:
                async with httpx.AsyncClient(timeout=self.timeout_s) as client:
                    response = await client.get(source)
                    response.raise_for_status()
            except httpx.HTTPStatusError as exc:
                raise SourceError(
                    f"{source} answered HTTP {exc.response.status_code}",
                    retryable=exc.response.status_code >= 500,
                ) from None
            except httpx.HTTPError as exc:
                raise SourceError(f"{source} cannot be reached: {exc}", retryable=True) from None
            return source, response.content
        return await asyncio.to_thread(_file, source)

    def _events(
        self, texts: list[tuple[str, bytes]]
    ) -> tuple[list[dict[str, Any]], int, dict[str, Any]]:
        import icalendar
        import recurring_ical_events  # type: ignore[import-untyped]

        today = self.now().astimezone(self.zone).date()
        start = datetime.combine(today - timedelta(days=1), time(), self.zone)
        end = datetime.combine(today + timedelta(days=self.days + 1), time(), self.zone)
        events: list[dict[str, Any]] = []
        for name, data in texts:
            try:
                calendar = icalendar.Calendar.from_ical(data)
                occurrences = recurring_ical_events.of(calendar).between(start, end)
            except Exception as exc:  # icalendar raises ValueError and more for bad input
                raise SourceError(f"{name} is not a readable iCalendar file: {exc}") from None
            label = str(calendar.get("X-WR-CALNAME") or name)
            for event in occurrences:
                events.append(self._event(event, label))
        events.sort(key=lambda e: (e["start"], e["title"]))
        return events, len(events), {"today": today.isoformat(), "timezone": str(self.zone)}

    def _event(self, event: Any, calendar: str) -> dict[str, Any]:
        begin = event.get("DTSTART").dt
        finish = event.get("DTEND").dt if event.get("DTEND") else None
        all_day = not isinstance(begin, datetime)
        if finish is None:
            finish = begin + (timedelta(days=1) if all_day else timedelta(0))
        return {
            "uid": str(event.get("UID", "")),
            "title": str(event.get("SUMMARY", "")),
            "start": self._iso(begin),
            "end": self._iso(finish),
            "all_day": all_day,
            "location": str(event.get("LOCATION", "")) or None,
            "calendar": calendar,
        }

    def _iso(self, value: date | datetime) -> str:
        if isinstance(value, datetime):
            if value.tzinfo is None:  # a floating time: the user's own
                value = value.replace(tzinfo=self.zone)
            return value.astimezone(self.zone).isoformat()
        return value.isoformat()

    def normalize_for_tools(
        self, records: Sequence[Mapping[str, Any]], *, include_alerts: bool = True
    ) -> dict[str, Any]:
        """Today's and the upcoming events, and overlaps (``normalize_calendar``)."""
        today = self.now().astimezone(self.zone).date()
        return normalize_calendar(records, today, include_alerts=include_alerts)


def normalize_calendar(
    records: Sequence[Mapping[str, Any]], today: date, *, include_alerts: bool = True
) -> dict[str, Any]:
    """Today's events, the upcoming ones, and conflicts.

    ``today_events``: those taking place on ``today``; ``upcoming``: those starting
    after it (at most 20); ``conflicts``: timed events of today or later that overlap.
    Alerts name the conflicts.
    """
    day = today.isoformat()
    todays = [e for e in records if _touches(e, day)]
    upcoming = [e for e in records if e["start"][:10] > day]
    timed = sorted((e for e in records if not e["all_day"] and e["end"][:10] >= day),
                   key=lambda e: e["start"])  # fmt: skip
    conflicts = [
        {"first": a["title"], "second": b["title"], "at": b["start"]}
        for i, a in enumerate(timed)
        for b in timed[i + 1 :]
        if _parse(b["start"]) < _parse(a["end"])
    ]
    shaped: dict[str, Any] = {
        "summary": {
            "today": day,
            "today_events": [_brief(e) for e in todays],
            "upcoming": [_brief(e) for e in upcoming[:20]],
            "conflicts": conflicts,
        }
    }
    if include_alerts:
        shaped["alerts"] = [f"{c['first']} overlaps {c['second']} at {c['at']}" for c in conflicts]
    return shaped


def _touches(event: Mapping[str, Any], day: str) -> bool:
    """Whether the event takes place on ``day`` (an all-day event's end is exclusive)."""
    first, last = str(event["start"])[:10], str(event["end"])[:10]
    return first <= day < last if event["all_day"] else first <= day <= last


def _parse(value: str) -> datetime:
    return datetime.fromisoformat(value)


def _brief(event: Mapping[str, Any]) -> dict[str, Any]:
    return {k: event[k] for k in ("title", "start", "end", "all_day", "location")}
