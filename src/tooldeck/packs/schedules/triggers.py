"""When a schedule fires: a cron expression, an interval, or one point in time.

>>> t = parse_trigger(every="1h", now=0.0)
>>> t.next_after(0.0), t.describe()
(3600.0, 'every 1h')
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = ["Trigger", "TriggerError", "parse_duration", "parse_trigger"]

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}
_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*")
LONGEST_INTERVAL_S = 366 * 86_400.0
"""The longest ``every`` (a year and a day); rarer calls are a cron or an ``at``."""
FURTHEST_AT_S = 100 * 365.25 * 86_400
"""How far ahead an ``at`` may be (a century)."""


class TriggerError(ValueError):
    """A trigger that cannot be used; the message names the field and what it expects."""


@dataclass(frozen=True, slots=True)
class Trigger:
    """A schedule's rule: ``cron`` (5 fields), ``every`` (an interval) or ``at`` (once).

    Semantics:
        ``next_after(t)`` is the first fire strictly after Unix time ``t`` (seconds),
        None when there is none (an ``at`` trigger that has fired). Cron fields and
        ``at`` times are read in ``timezone`` (an IANA name), or in the server's local
        time when None; daylight-saving changes follow the zone.
    """

    kind: Literal["cron", "every", "at"]
    """Which rule."""
    value: str
    """The cron expression, the interval in seconds, or the Unix time of ``at``."""
    timezone: str | None = None
    """IANA zone of cron fields; None: the server's local time."""

    def next_after(self, t: float) -> float | None:
        """The first fire after Unix time ``t``, in Unix seconds; None: no more fires."""
        if self.kind == "every":
            return t + float(self.value)
        if self.kind == "at":
            at = float(self.value)
            return at if at > t else None
        from cronsim import CronSim

        start = datetime.fromtimestamp(t, _zone(self.timezone))
        return next(CronSim(self.value, start)).timestamp()

    def describe(self) -> str:
        """The rule in words: ``cron 0 9 * * 1-5 (Europe/Berlin)``, ``every 1h``, ``at …``."""
        if self.kind == "every":
            return f"every {_words(float(self.value))}"
        zone = f" ({self.timezone})" if self.timezone else ""
        if self.kind == "at":
            when = datetime.fromtimestamp(float(self.value), _zone(self.timezone))
            return f"at {when.isoformat(timespec='minutes')}"
        return f"cron {self.value}{zone}"


def parse_duration(text: str) -> float:
    """Seconds in ``90s``, ``15m``, ``1h30m``, ``2d``, ``1w``.

    Raises:
        TriggerError: not a sequence of number + unit (s, m, h, d, w).
    """
    total, end = 0.0, 0
    for match in _DURATION.finditer(text):
        if match.start() != end:
            break
        total += float(match.group(1)) * _UNITS[match.group(2)]
        end = match.end()
    if end != len(text) or end == 0:
        raise TriggerError(
            f"every: {text!r} is not an interval; write a number and a unit, e.g. 90s, 15m, "
            "1h30m, 2d, 1w"
        )
    return total


def parse_trigger(
    *,
    cron: str | None = None,
    every: str | None = None,
    at: str | None = None,
    timezone: str | None = None,
    now: float,
    min_interval_s: float = 60.0,
) -> Trigger:
    """The trigger of exactly one of ``cron``, ``every`` or ``at``, checked.

    Args:
        cron: Five cron fields (minute hour day month weekday), e.g. ``0 9 * * 1-5``.
        every: An interval (``parse_duration``), at least ``min_interval_s`` and at most
            ``LONGEST_INTERVAL_S``.
        at: An ISO date-time, e.g. ``2026-12-01T09:00``; without an offset it is read in
            ``timezone`` (or local time). Must be in the future, within a century.
        timezone: An IANA zone (``Europe/Berlin``) for cron fields and ``at``.
        now: Unix time (s) the trigger is made at.
        min_interval_s: The shortest interval between two fires, in seconds.

    Raises:
        TriggerError: none or several rules given, or one that cannot be read; the
            message names the field and gives an example.
    """
    given = [name for name, value in (("cron", cron), ("every", every), ("at", at)) if value]
    if len(given) != 1:
        raise TriggerError(
            "give exactly one of cron (e.g. '0 9 * * 1-5'), every (e.g. '1h') or at "
            f"(e.g. '2026-12-01T09:00'); got {', '.join(given) or 'none'}"
        )
    zone = _zone(timezone)  # raises for an unknown name
    if every:
        seconds = parse_duration(every)
        if seconds < min_interval_s:
            raise TriggerError(
                f"every: {every!r} is shorter than the shortest interval allowed, "
                f"{_words(min_interval_s)} (schedules.min_interval_s)"
            )
        if seconds > LONGEST_INTERVAL_S:
            raise TriggerError(
                f"every: {every!r} is longer than a year and a day; for rarer calls use "
                "cron (e.g. '0 9 1 1 *') or at"
            )
        return Trigger("every", repr(seconds), timezone)
    if at:
        try:
            when = datetime.fromisoformat(at.strip())
        except ValueError:
            raise TriggerError(
                f"at: {at!r} is not an ISO date-time; e.g. 2026-12-01T09:00 or "
                "2026-12-01T09:00+01:00"
            ) from None
        if when.tzinfo is None:
            when = when.replace(tzinfo=zone)
        if when.timestamp() <= now:
            raise TriggerError(f"at: {when.isoformat()} is in the past")
        if when.timestamp() > now + FURTHEST_AT_S:
            raise TriggerError(f"at: {when.isoformat()} is more than a century ahead")
        return Trigger("at", repr(when.timestamp()), timezone)
    assert cron is not None
    from cronsim import CronSim, CronSimError

    expression = " ".join(cron.split())
    try:
        CronSim(expression, datetime.fromtimestamp(now, zone))
    except CronSimError as exc:
        raise TriggerError(
            f"cron: {cron!r}: {exc}; write five fields, minute hour day month weekday, "
            "e.g. '0 9 * * 1-5' (09:00 on weekdays)"
        ) from None
    trigger = Trigger("cron", expression, timezone)
    first = trigger.next_after(now)
    second = trigger.next_after(first) if first is not None else None
    if first is not None and second is not None and second - first < min_interval_s:
        raise TriggerError(
            f"cron: {cron!r} fires more often than the shortest interval allowed, "
            f"{_words(min_interval_s)} (schedules.min_interval_s)"
        )
    return trigger


def _zone(name: str | None) -> tzinfo:
    if name is None:
        local = datetime.now().astimezone().tzinfo
        return local if local is not None else UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a folder ("America")
        raise TriggerError(
            f"timezone: {name!r} is not a known time zone; use an IANA name such as "
            "Europe/Berlin, America/New_York or UTC"
        ) from None


def _words(seconds: float) -> str:
    for unit, size in (("w", 604_800), ("d", 86_400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g}{unit}"
    return f"{seconds:g}s"
