"""Calendar: iCalendar files and ICS URLs, recurring events expanded, in the user's zone.

Events become ``{uid, title, start, end, all_day, location, calendar}`` with ``start``
and ``end`` as ISO date-times in the configured time zone (dates for all-day events).
Recurrence rules (RRULE, RDATE, EXDATE, moved occurrences) are expanded by
``recurring-ical-events``; time zones come from the file's VTIMEZONEs.

A feed is someone else's file: a URL is read in a stream and refused past
``max_bytes``; the sources are parsed and expanded in a killable process
(``core.isolated``) with a deadline, and the expansion stops after
``max_occurrences`` (a ``FREQ=SECONDLY`` event expands to 1.2 million in two weeks).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from tooldeck.core.isolated import IsolatedProcesses, IsolationError, ProcessLimits
from tooldeck.packs.context.adapter import ContextAdapter, SourceError
from tooldeck.packs.context.ical import describe, ical_file, read_files, reason

__all__ = ["CALENDAR_PARSERS", "CalendarAdapter", "expand_calendars", "normalize_calendar"]

CALENDAR_PARSERS = ("icalendar", "recurring_ical_events")
"""Modules a calendar's parsing process imports (preloaded by the fork server)."""


class CalendarAdapter(ContextAdapter):
    """Events of ``.ics`` files and ICS URLs, from yesterday to ``days`` ahead.

    Args:
        sources: Paths, or ``http(s)://`` URLs of an ICS feed (a CalDAV server's export).
        timezone: The user's zone (IANA name): "today" and every time are in it.
        days: How far ahead to read.
        now: The clock (tests fix it).
        timeout_s: Seconds per URL, and for parsing and expanding every source.
        max_bytes: Largest file or feed read.
        max_occurrences: Most events (occurrences of recurring ones included) kept.
        processes: Where parsing runs; None: a pool of the adapter's own.
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
        max_bytes: int = 10 * 1024 * 1024,
        max_occurrences: int = 5000,
        processes: IsolatedProcesses | None = None,
    ) -> None:
        self.sources = list(sources)
        self.zone = ZoneInfo(timezone)
        self.days = days
        self.now = now or (lambda: datetime.now(self.zone))
        self.timeout_s = timeout_s
        self.max_bytes = max_bytes
        self.max_occurrences = max_occurrences
        self.processes = processes

    async def read(self) -> tuple[list[dict[str, Any]], int, dict[str, Any]]:
        """The events of every source in the window, sorted by start.

        A source that cannot be read (missing, too large, not iCalendar) is named in
        ``details["skipped"]`` while another one answers, as is each event left out;
        what was repaired to read an event is in ``details["relaxed"]``.

        Raises:
            SourceError: no source could be read (a file is missing or too large, a
                URL fails or answers too much, none is iCalendar), or expanding them
                passed the deadline.
        """
        texts, unread = [], []
        for source in self.sources:
            try:
                texts.append(await self._text(source))
            except SourceError as exc:
                unread.append(str(exc))
        if not texts:
            raise SourceError("; ".join(unread))
        today = self.now().astimezone(self.zone).date()
        start = datetime.combine(today - timedelta(days=1), time(), self.zone)
        end = datetime.combine(today + timedelta(days=self.days + 1), time(), self.zone)
        if self.processes is None:
            self.processes = IsolatedProcesses(1, CALENDAR_PARSERS)
        limits = ProcessLimits(timeout_s=self.timeout_s, memory_mb=512)
        try:
            events, cut, report = await asyncio.to_thread(
                self.processes.call,
                expand_calendars,
                texts,
                start,
                end,
                self.max_occurrences,
                limits=limits,
            )
        except IsolationError as exc:
            names = ", ".join(name for name, _ in texts)
            raise SourceError(f"reading {names} {exc}") from None
        details: dict[str, Any] = {
            "today": today.isoformat(),
            "timezone": str(self.zone),
            "skipped": unread + report["skipped"],
            "relaxed": report["relaxed"],
        }
        if cut:
            details["truncated"] = f"only the first {self.max_occurrences} events are read"
        return events, len(events), details

    async def _text(self, source: str) -> tuple[str, bytes]:
        if not source.startswith(("http://", "https://")):
            return await asyncio.to_thread(ical_file, source, self.max_bytes)
        import httpx

        try:
            async with (
                httpx.AsyncClient(timeout=self.timeout_s) as client,
                client.stream("GET", source) as response,
            ):
                response.raise_for_status()
                chunks, size = [], 0
                async for chunk in response.aiter_bytes():
                    size += len(chunk)
                    if size > self.max_bytes:
                        raise SourceError(
                            f"{source} answers more than the {self.max_bytes / 1e6:.0f} MB "
                            "a calendar may be"
                        )
                    chunks.append(chunk)
        except httpx.HTTPStatusError as exc:
            raise SourceError(
                f"{source} answered HTTP {exc.response.status_code}",
                retryable=exc.response.status_code >= 500,
            ) from None
        except httpx.HTTPError as exc:
            raise SourceError(f"{source} cannot be reached: {exc}", retryable=True) from None
        return source, b"".join(chunks)

    def normalize_for_tools(
        self, records: Sequence[Mapping[str, Any]], *, include_alerts: bool = True
    ) -> dict[str, Any]:
        """Today's and the upcoming events, and overlaps (``normalize_calendar``)."""
        today = self.now().astimezone(self.zone).date()
        return normalize_calendar(records, today, include_alerts=include_alerts)


def expand_calendars(
    texts: list[tuple[str, bytes]], start: datetime, end: datetime, max_occurrences: int
) -> tuple[list[dict[str, Any]], bool, dict[str, list[str]]]:
    """The events of ``texts`` (``(name, bytes)``) in ``[start, end)``, sorted by start.

    Runs in a killable process (``CalendarAdapter.read``). Occurrences are taken in
    order of start until ``end``, and ``max_occurrences`` in all. Each file is read
    leniently (``ical.read_calendars``): a component that cannot be read is left out
    and named, and so is a file, as long as another one can be read.

    Returns:
        The events (times in ``start``'s zone), whether ``max_occurrences`` cut them,
        and ``{"skipped": [...], "relaxed": [...]}``: what was left out, what repaired.

    Raises:
        SourceError: no source is iCalendar (each one's reason, in the message).
    """
    zone = start.tzinfo
    events: list[dict[str, Any]] = []
    reads, report = read_files(texts)
    cut = False
    for name, read in reads:
        label = read.name or name
        for calendar in read.calendars:
            window = (start, end, max_occurrences + 1)
            for occurrence in _occurrences(name, calendar, window, report):
                if len(events) >= max_occurrences:
                    cut = True
                    break
                try:
                    events.append(_event(occurrence, label, zone))
                except Exception as exc:  # a value of a type no event should have
                    report["skipped"].append(f"{describe(name, occurrence)}: {reason(exc)}")
    events.sort(key=lambda e: (e["start"], e["title"]))
    return events, cut, report


def _occurrences(
    name: str, calendar: Any, window: tuple[datetime, datetime, int], report: dict[str, list[str]]
) -> list[Any]:
    """The calendar's first occurrences in ``window`` (start, end, how many), sorted.

    When the expansion fails (a rule it rejects: an ``RDATE`` of times, a non-Gregorian
    ``RSCALE``), the events are expanded one UID at a time; one that still fails is
    read as a single occurrence without its rules (said in ``report["relaxed"]``), or
    left out and named in ``report["skipped"]``.
    """
    import recurring_ical_events  # type: ignore[import-untyped]

    _start_near(calendar, window[0])
    try:
        return _taken(recurring_ical_events.of(calendar).after(window[0]), window)
    except Exception:  # recurring_ical_events raises many types for a bad rule
        pass
    import icalendar

    by_uid: dict[str, list[Any]] = {}
    zones = [c for c in calendar.subcomponents if c.name == "VTIMEZONE"]
    for event in calendar.walk("VEVENT"):
        by_uid.setdefault(str(event.get("UID", id(event))), []).append(event)
    found: list[Any] = []
    for group in by_uid.values():
        title = describe(name, group[0])
        single = group[0].copy()
        for rule in ("RRULE", "RDATE", "EXDATE"):
            single.pop(rule, None)
        for attempt in (group, [single]):
            one = icalendar.Calendar()
            for component in zones + attempt:
                one.add_component(component)
            try:
                found += _taken(recurring_ical_events.of(one).after(window[0]), window)
            except Exception as exc:
                if attempt is group:
                    continue
                report["skipped"].append(f"{title}: {reason(exc)}")
            else:
                if attempt is not group:
                    report["relaxed"].append(
                        f"{title}: its recurrence cannot be expanded, read as one occurrence"
                    )
            break
    found.sort(key=lambda o: _start_of(o, window[0].tzinfo))
    return found[: window[2]]


_PERIODS = {"SECONDLY": 1, "MINUTELY": 60}
"""Seconds a step of the sub-hourly frequencies takes (whole minutes: DST keeps alignment)."""


def _start_near(calendar: Any, start: datetime) -> None:
    """Move each secondly or minutely rule's start forward, by whole steps, to before ``start``.

    Its expansion then begins at the window, not at a ``DTSTART`` years back (a feed's
    ``FREQ=SECONDLY`` from 2020 took the whole deadline). The occurrences in the window are the same: a rule without ``COUNT`` or ``BYSETPOS``
    steps from ``DTSTART`` by ``INTERVAL`` periods, and ``DTEND`` moves with it.
    """
    for event in calendar.walk("VEVENT"):
        rule, begin = event.get("RRULE"), event.get("DTSTART")
        if rule is None or begin is None or not isinstance(begin.dt, datetime):
            continue
        frequency = (rule.get("FREQ") or [None])[0]
        if frequency not in _PERIODS or rule.get("COUNT") or rule.get("BYSETPOS"):
            continue
        try:
            step = timedelta(seconds=_PERIODS[frequency] * int((rule.get("INTERVAL") or [1])[0]))
            first = begin.dt if begin.dt.tzinfo else begin.dt.replace(tzinfo=start.tzinfo)
            steps = (start - first) // step - 1
        except (TypeError, ValueError, OverflowError, ZeroDivisionError):
            continue
        if steps < 1:
            continue
        end = event.get("DTEND")
        begin.dt = begin.dt + step * steps
        if end is not None and isinstance(end.dt, datetime):
            end.dt = end.dt + step * steps


def _taken(occurrences: Any, window: tuple[datetime, datetime, int]) -> list[Any]:
    """The occurrences (in order of start) before the window's end, at most its count.

    A ``FREQ=SECONDLY`` rule is never expanded further than that.
    """
    start, end, most = window
    taken: list[Any] = []
    for occurrence in occurrences:
        if len(taken) >= most or _start_of(occurrence, start.tzinfo) >= end:
            break
        taken.append(occurrence)
    return taken


def _start_of(event: Any, zone: Any) -> datetime:
    begin = event.get("DTSTART").dt
    if not isinstance(begin, datetime):
        return datetime.combine(begin, time(), zone)
    return begin if begin.tzinfo is not None else begin.replace(tzinfo=zone)


def _event(event: Any, calendar: str, zone: Any) -> dict[str, Any]:
    begin = event.get("DTSTART").dt
    finish = event.get("DTEND").dt if event.get("DTEND") else None
    all_day = not isinstance(begin, datetime)
    if finish is None:
        finish = begin + (timedelta(days=1) if all_day else timedelta(0))
    return {
        "uid": str(event.get("UID", "")),
        "title": str(event.get("SUMMARY", "")),
        "start": _iso(begin, zone),
        "end": _iso(finish, zone),
        "all_day": all_day,
        "location": str(event.get("LOCATION", "")) or None,
        "calendar": calendar,
    }


def _iso(value: date | datetime, zone: Any) -> str:
    if isinstance(value, datetime):
        if value.tzinfo is None:  # a floating time: the user's own
            value = value.replace(tzinfo=zone)
        return value.astimezone(zone).isoformat()
    return value.isoformat()


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
