"""Reading a stranger's iCalendar file: every component that can be read, and why not the rest.

Real files break RFC 5545 in small ways (measured on the 45 ``.ics`` test files of the
vobject 0.9.9 and ics 0.7.3 sdists): several ``VCALENDAR`` objects concatenated, a
value with a space after its colon (``DTEND: 20240812T223000Z``, a bank's export), an
event without ``DTSTART``, an alarm whose trigger is not a duration, vCards saved as
``.ics``. ``icalendar`` refuses a whole file for one bad property outside an event
(its ``VALARM`` and ``VTODO`` are strict), so one bad alarm hid every event of a file.

``read_calendars`` reads the file whole when it can; otherwise each top-level
component on its own (``VTIMEZONE`` first, so the others keep their zones), naming
each one it could not read in ``skipped``. What it repaired or ignored to read a
component is named in ``relaxed``. It runs inside the killable parsing process of
``CalendarAdapter`` (a feed is someone else's file).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tooldeck.packs.context.adapter import SourceError

__all__ = ["ReadCalendars", "describe", "ical_file", "read_calendars", "read_files", "reason"]

_TIMES = ("DTSTART", "DTEND", "DUE", "RECURRENCE-ID", "EXDATE", "RDATE", "COMPLETED")
_SPACED = re.compile(
    rb"^(" + b"|".join(n.encode() for n in _TIMES) + rb")((?:;[^:\r\n]*)?):[ \t]+",
    re.IGNORECASE | re.MULTILINE,
)
"""A date-time property whose value starts with spaces (``DTEND: 2024…``)."""
_OPTIONAL = {
    "DTEND": "the event ends when it starts (or after its DURATION)",
    "DURATION": "the event ends when it starts",
    "DUE": "no due day",
    "RRULE": "read as a single occurrence",
    "RDATE": "read without its extra dates",
    "EXDATE": "read without its exceptions",
}
"""A broken property that can be dropped → what the component becomes without it."""
_BARE = re.compile(rb"^BEGIN:(VEVENT|VTODO)\s*$", re.I | re.M)
"""A file of bare components (an event copied out of a calendar)."""
_LINE = re.compile(r"^(BEGIN|END):([A-Za-z-]+)[ \t]*$", re.IGNORECASE)
_ALARM = re.compile(r"^BEGIN:VALARM\s*$.*?^END:VALARM\s*$\n?", re.I | re.M | re.S)
_NAMED = [re.compile(rf"^{n}(?:;[^:\r\n]*)?:(.+)$", re.I | re.M) for n in ("SUMMARY", "UID")]
"""A block's ``SUMMARY`` value, else its ``UID`` (what names a component in a message)."""


def ical_file(source: str, max_bytes: int) -> tuple[str, bytes]:
    """``(file name, bytes)`` of an iCalendar file.

    Raises:
        SourceError: the file is missing or over ``max_bytes``.
    """
    path = Path(source).expanduser()
    if not path.is_file():
        raise SourceError(f"calendar not found: {path}")
    if path.stat().st_size > max_bytes:
        raise SourceError(f"{path.name} is over the {max_bytes / 1e6:.0f} MB a calendar may be")
    return path.name, path.read_bytes()


@dataclass
class ReadCalendars:
    """What ``read_calendars`` could read of one file.

    Attributes:
        calendars: The ``icalendar.Calendar`` objects (several when the file
            concatenates them), their events and to-dos readable.
        name: The file's calendar name (``X-WR-CALNAME``) or None.
        skipped: One line per component left out, with the reason.
        relaxed: One line per repair or ignored property.
    """

    calendars: list[Any]
    name: str | None = None
    skipped: list[str] = field(default_factory=list)
    relaxed: list[str] = field(default_factory=list)


def read_calendars(name: str, data: bytes) -> ReadCalendars:
    """The readable calendars of one iCalendar file (see the module docstring).

    Args:
        name: The file's name or URL, for the messages.
        data: Its bytes.

    Raises:
        SourceError: the file is not iCalendar (no ``BEGIN:VCALENDAR``; a vCard says so).
    """
    import icalendar

    upper = data.upper()
    read = ReadCalendars([])
    if b"BEGIN:VCALENDAR" not in upper:
        if not _BARE.search(data):
            kind = "a vCard (contacts)" if b"BEGIN:VCARD" in upper else "not an iCalendar calendar"
            raise SourceError(f"{name} is {kind} (no BEGIN:VCALENDAR)")
        data = b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\n" + data.strip() + b"\r\nEND:VCALENDAR\r\n"
        read.relaxed.append(
            f"{name}: events or to-dos without a VCALENDAR around them, read as one"
        )
    fixed = _SPACED.sub(rb"\1\2:", data)
    if fixed != data:
        read.relaxed.append(f"{name}: spaces before a date-time value ignored")
    try:
        read.calendars = icalendar.Calendar.from_ical(fixed, multiple=True)
    except Exception as exc:  # icalendar raises ValueError, KeyError and more
        read.relaxed.append(f"{name}: read component by component ({reason(exc)})")
        text = fixed.decode("utf-8", "replace")
        read.calendars = [_by_component(name, text, read.skipped, read.relaxed)]
    for calendar in read.calendars:
        read.name = read.name or (str(calendar.get("X-WR-CALNAME", "")) or None)
        _clean(name, calendar, read)
    return read


def read_files(
    texts: list[tuple[str, bytes]],
) -> tuple[list[tuple[str, ReadCalendars]], dict[str, list[str]]]:
    """``read_calendars`` of each ``(name, bytes)``; a file that is not iCalendar is named.

    Returns:
        Each readable file's name and calendars, and ``{"skipped": [...], "relaxed":
        [...]}``: the unreadable files first, then what each file left out or repaired.

    Raises:
        SourceError: no file is iCalendar (each one's reason, in the message).
    """
    reads: list[tuple[str, ReadCalendars]] = []
    failed: list[str] = []
    for name, data in texts:
        try:
            reads.append((name, read_calendars(name, data)))
        except SourceError as exc:
            failed.append(str(exc))
    if failed and not reads:
        raise SourceError("; ".join(failed))
    return reads, {
        "skipped": failed + [s for _, read in reads for s in read.skipped],
        "relaxed": [r for _, read in reads for r in read.relaxed],
    }


def _by_component(name: str, text: str, skipped: list[str], relaxed: list[str]) -> Any:
    """One calendar of the top-level components of ``text`` that parse on their own."""
    import icalendar

    blocks: list[tuple[str, int, str]] = []  # (kind, first line, text)
    depth, begun, lines = 0, 0, text.splitlines()
    for number, line in enumerate(lines, 1):
        mark = _LINE.match(line)
        if mark is None:
            continue
        if mark.group(1).upper() == "BEGIN":
            depth += 1
            begun = number if depth == 2 else begun
            continue
        if depth == 2:
            block = "\r\n".join(lines[begun - 1 : number]) + "\r\n"
            blocks.append((mark.group(2).upper(), begun, block))
        depth = max(depth - 1, 0)
    merged = icalendar.Calendar()
    for kind, begun, block in sorted(blocks, key=lambda b: b[0] != "VTIMEZONE"):
        where = f"{name}: {_label(kind, block, begun)}"
        try:
            components = _parse_one(block)
        except Exception as exc:  # one component's failure is named, the rest is read
            bare = _ALARM.sub("", block)
            try:
                components = _parse_one(bare) if bare != block else []
            except Exception:
                components = []
            if not components:
                skipped.append(f"{where}: {reason(exc)}")
                continue
            relaxed.append(f"{where}: its alarm is unreadable ({reason(exc)}), ignored")
        for component in components:
            merged.add_component(component)
    return merged


def _parse_one(block: str) -> list[Any]:
    """The components of one top-level block, parsed inside a calendar of its own."""
    import icalendar

    wrapped = f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\n{block}END:VCALENDAR\r\n"
    return list(icalendar.Calendar.from_ical(wrapped).subcomponents)


def _clean(name: str, calendar: Any, read: ReadCalendars) -> None:
    """Drop what the expansion cannot read: an event without a start, broken optionals."""
    keep = []
    for component in calendar.subcomponents:
        kind = component.name
        if kind not in ("VEVENT", "VTODO"):
            keep.append(component)
            continue
        label = describe(name, component)
        errors = getattr(component, "errors", [])
        broken = {prop.upper(): message for prop, message in errors if prop}
        read.relaxed += [
            f"{label}: {_first(message)}, ignored" for prop, message in errors if not prop
        ]
        for prop in ("DTSTART", "DTEND", "DUE"):
            if isinstance(component.get(prop), list):  # the property given twice
                component[prop] = component[prop][0]
                read.relaxed.append(f"{label}: {prop} given more than once, the first read")
        if kind == "VEVENT" and ("DTSTART" in broken or component.get("DTSTART") is None):
            read.skipped.append(f"{label}: no readable start (DTSTART)")
            continue
        unreadable = [p for p in broken if p not in _OPTIONAL and p != "DTSTART"]
        for prop in [p for p in broken if p in _OPTIONAL]:
            component.pop(prop, None)
            read.relaxed.append(f"{label}: {prop} unreadable, {_OPTIONAL[prop]}")
        if unreadable:
            read.relaxed.append(f"{label}: {', '.join(unreadable)} unreadable, ignored")
        keep.append(component)
    calendar.subcomponents[:] = keep


def _label(kind: str, text: str, line: int) -> str:
    """``event 'Team sync'`` (or ``to-do …``, ``timezone …``), from a block or a summary."""
    noun = {"VEVENT": "event", "VTODO": "to-do", "VTIMEZONE": "time zone"}.get(kind, kind)
    if "\n" in text:  # a component's lines
        found = next((m for r in _NAMED if (m := r.search(text))), None)
        text = found.group(1) if found else ""
    title = text.strip()[:60]
    where = f" (line {line})" if line else ""
    return f"{noun} {title!r}{where}" if title else f"{noun}{where}"


def describe(name: str, component: Any) -> str:
    """How messages name a parsed component: ``"work.ics: event 'Team sync'"``."""
    title = str(component.get("SUMMARY") or component.get("UID") or "")
    return f"{name}: {_label(component.name, title, 0)}"


def reason(exc: Exception) -> str:
    """An exception's first line (or its type), at most 160 characters."""
    return _first(str(exc) or type(exc).__name__)


def _first(message: str) -> str:
    """A message's first line, at most 160 characters."""
    return (message.splitlines() or [""])[0][:160]
