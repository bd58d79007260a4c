"""Aggregates over the audit log: calls, errors, total and percentile latency per tool or profile.

What ``tooldeck stats``, ``/api/stats`` and the tools UI's metrics page show (seed 000:
"ToolResult metadata feeds metering and audit"). A window with few calls (up to
``EXACT_CALLS``) is computed from its rows: one query reads the (key, time bucket,
status, duration) rows, the bucket computed by the database from bound edges, and the
percentiles are exact. A window with more reads the hourly totals the audit writer
keeps (``tool_call_hours``) for its whole hours and the rows only for the partial hours
at either end, so a week of a million calls costs a few hundred rows, not a million
(``benchmarks/ui_load.py``); counts stay exact, percentiles come from the latency
histogram (as Prometheus' ``histogram_quantile``), and an hour that spans two series
buckets is shared between them in proportion to the time it spends in each.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from sqlalchemy import Connection, Select, String, case, func, literal, select, type_coerce

from tooldeck.observability.tables import BUCKET_COLUMNS, BUCKETS_MS, tool_call_hours, tool_calls
from tooldeck.observability.totals import Totals

__all__ = [
    "EXACT_CALLS",
    "NOT_FAILURES",
    "BucketStats",
    "CallStats",
    "GroupBy",
    "call_stats",
    "parse_since",
    "percentile",
]

GroupBy = Literal["tool", "profile"]

_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")


def parse_since(text: str, now: datetime | None = None) -> datetime:
    """A window start from ``"24h"``-style text (s, m, h, d, w) or an ISO date/time (UTC if naive).

    Raises:
        ValueError: neither form; the message shows both.
        OverflowError: a duration that reaches before the first day of the calendar.
    """
    now = now or datetime.now(UTC)
    match = _DURATION.match(text)
    if match:
        return now - timedelta(**{_UNITS[match[2]]: float(match[1])})
    try:
        moment = datetime.fromisoformat(_rfc3339(text.strip()))
    except ValueError:
        raise ValueError(
            f"cannot read {text!r} as a time: give a duration such as 30m, 24h, 7d "
            "or an ISO date/time such as 2026-11-20T08:00"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _rfc3339(text: str) -> str:
    """RFC 3339 spellings ``fromisoformat`` refuses: lower-case ``t``/``z``, a leap second."""
    text = text.replace("t", "T").replace("z", "Z")
    return re.sub(r"(T\d\d:\d\d):60", r"\1:59", text)


def percentile(ordered: Sequence[float], q: float) -> float | None:
    """The ``q``-quantile (0..1) of ascending ``ordered``, interpolated linearly; None if empty."""
    if not ordered:
        return None
    position = (len(ordered) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


EXACT_CALLS = 20_000
"""Windows whose whole hours hold more calls than this are summarised from the hourly
totals (percentiles estimated); others are computed exactly from their rows."""

NOT_FAILURES = frozenset({"confirmation_required", "cancelled"})
"""Error types that are not the tool failing: a call waiting for a person's approval,
one its caller cancelled. They are not counted in ``errors`` and the error rate."""


class BucketStats(BaseModel):
    """One time bucket of a key's calls."""

    model_config = ConfigDict(frozen=True)

    start: datetime
    """Bucket start (UTC)."""
    calls: int
    """Calls that started in the bucket."""
    errors: int
    """Of which failed (``NOT_FAILURES`` aside)."""
    p95_ms: float | None
    """95th percentile duration (ms); None without calls."""


class CallStats(BaseModel):
    """Calls of one tool (or profile) in a window."""

    model_config = ConfigDict(frozen=True)

    key: str
    """Tool name, or profile (``""`` for calls made without one)."""
    calls: int
    """Calls in the window."""
    errors: int
    """Calls that failed: status ``error``, but for ``NOT_FAILURES``."""
    error_rate: float
    """``errors / calls`` (0..1)."""
    waiting: int = 0
    """Calls answered ``confirmation_required``: waiting for a person, not failures."""
    total_ms: float
    """Summed duration (ms)."""
    p50_ms: float | None
    """Median duration (ms)."""
    p95_ms: float | None
    """95th percentile duration (ms)."""
    series: list[BucketStats] = []
    """Per time bucket, oldest first, when buckets were asked for."""


def call_stats(
    conn: Connection,
    *,
    since: datetime,
    until: datetime,
    by: GroupBy = "tool",
    buckets: int = 0,
    tool: str | None = None,
) -> list[CallStats]:
    """Per-key statistics of the calls in ``[since, until)``, most called first.

    Args:
        conn: A connection to the audit database.
        since: Window start (aware datetime).
        until: Window end (aware datetime).
        by: Group by ``tool`` or ``profile``.
        buckets: Split the window into this many equal buckets for ``series`` (0: none).
        tool: Only this tool's calls.
    """
    first = _next_hour(since)
    last = until.replace(minute=0, second=0, microsecond=0)
    if first < last and _calls_in_hours(conn, first, last, tool) > EXACT_CALLS:
        return _summarised(conn, since=since, until=until, by=by, buckets=buckets, tool=tool)
    count = max(buckets, 1)
    step = (until - since) / count
    bucket = _series_bucket(since, step, count)
    rows = conn.execute(_rows(since, until, by, bucket, tool)).all()
    durations: dict[str | None, list[float]] = defaultdict(list)
    errors: Counter[str | None] = Counter()
    cells: dict[tuple[str | None, int], list[float]] = defaultdict(list)
    cell_errors: Counter[tuple[str | None, int]] = Counter()
    waiting: Counter[str | None] = Counter()
    for key, index, status, error_type, duration_ms in rows:
        ms = duration_ms or 0.0
        durations[key].append(ms)
        if buckets:
            cells[(key, index)].append(ms)
        if status != "error":
            continue
        if error_type in NOT_FAILURES:
            waiting[key] += error_type == "confirmation_required"
        else:
            errors[key] += 1
            cell_errors[(key, index)] += 1
    stats = []
    for key, values in durations.items():
        values.sort()
        series = [
            BucketStats(
                start=since + step * i,
                calls=len(ds := sorted(cells.get((key, i), ()))),
                errors=cell_errors[(key, i)],
                p95_ms=percentile(ds, 0.95),
            )
            for i in range(count if buckets else 0)
        ]
        stats.append(
            CallStats(
                key=key or "",
                calls=len(values),
                errors=errors[key],
                error_rate=errors[key] / len(values),
                waiting=waiting[key],
                total_ms=sum(values),
                p50_ms=percentile(values, 0.5),
                p95_ms=percentile(values, 0.95),
                series=series,
            )
        )
    stats.sort(key=lambda s: (-s.calls, s.key))
    return stats


def _next_hour(moment: datetime) -> datetime:
    """``moment`` if it starts an hour, else the start of the next hour."""
    start = moment.replace(minute=0, second=0, microsecond=0)
    return start if start == moment else start + timedelta(hours=1)


def _series_bucket(
    since: datetime, step: timedelta, count: int, moment: Any = tool_calls.c.created_at
) -> Any:
    """The index of the series bucket ``moment`` (a column) falls in, computed by the database.

    ``count`` buckets of ``step`` from ``since``, from bound edges: no timestamp is
    parsed in Python.
    """
    edges = [since + step * (i + 1) for i in range(count - 1)]
    if not edges:
        return literal(0)
    return case(*((moment < edge, i) for i, edge in enumerate(edges)), else_=count - 1)


def _rows(
    start: datetime, end: datetime, by: GroupBy, bucket: Any, tool: str | None
) -> Select[Any]:
    """(key, series bucket, status, error type, duration) of each call in ``[start, end)``."""
    c = tool_calls.c
    key = c.tool_name if by == "tool" else c.profile
    query = select(key, bucket, c.status, c.error_type, c.duration_ms).where(
        c.created_at >= start, c.created_at < end
    )
    return query.where(c.tool_name == tool) if tool else query


def _binned(
    start: datetime, end: datetime, by: GroupBy, bucket: Any, tool: str | None
) -> Select[Any]:
    """The calls in ``[start, end)``, counted per group: (…, calls, summed ms).

    Grouped by key, series bucket, status, error type and latency bucket (the
    histogram's: the index ``Totals.add`` would count the call in).
    """
    c = tool_calls.c
    duration = func.coalesce(c.duration_ms, 0.0)
    latency = case(
        *((duration <= bound, i) for i, bound in enumerate(BUCKETS_MS)), else_=len(BUCKETS_MS)
    )
    group = (c.tool_name if by == "tool" else c.profile, bucket, c.status, c.error_type, latency)
    query = select(*group, func.count(), func.sum(duration)).where(
        c.created_at >= start, c.created_at < end
    )
    return (query.where(c.tool_name == tool) if tool else query).group_by(*group)


_Part = tuple[int, Totals]
"""A series bucket's index and the share of an hour's totals that falls in it."""


def _split(
    whole: Totals, hour: datetime, since: datetime, step: timedelta, count: int
) -> list[_Part]:
    """``whole`` (an hour's totals) shared between the series buckets the hour overlaps.

    In proportion to the time the hour spends in each; counts are rounded so that the
    shares add up to ``whole`` exactly.
    """
    start = (hour - since) / step
    end = (hour + timedelta(hours=1) - since) / step
    parts: list[_Part] = []
    done = 0.0
    before = [0] * len(whole.buckets)
    for index in range(int(start), min(count, math.ceil(end))):
        share = (min(end, index + 1) - max(start, index)) / (end - start)
        done += share
        upto = [round(n * done) for n in whole.buckets]
        buckets = [a - b for a, b in zip(upto, before, strict=True)]
        ms = whole.duration_ms_sum * share
        parts.append((index, Totals(calls=sum(buckets), duration_ms_sum=ms, buckets=buckets)))
        before = upto
    return parts or [(min(int(start), count - 1), whole)]


def _calls_in_hours(conn: Connection, first: datetime, last: datetime, tool: str | None) -> int:
    """Calls counted in the hourly totals of the hours ``[first, last)``."""
    h = tool_call_hours.c
    query = select(func.coalesce(func.sum(h.calls), 0)).where(h.hour >= first, h.hour < last)
    if tool:
        query = query.where(h.tool_name == tool)
    return int(conn.execute(query).scalar_one())


def _summarised(
    conn: Connection,
    *,
    since: datetime,
    until: datetime,
    by: GroupBy,
    buckets: int,
    tool: str | None,
) -> list[CallStats]:
    """``call_stats`` from the hourly totals of the whole hours and the rows of the rest."""
    first, last = _next_hour(since), until.replace(minute=0, second=0, microsecond=0)
    count = max(buckets, 1)
    step = (until - since) / count
    totals: dict[str, Totals] = defaultdict(Totals)
    cells: dict[tuple[str, int], Totals] = defaultdict(Totals)
    errors: Counter[str] = Counter()
    cell_errors: Counter[tuple[str, int]] = Counter()
    waiting: Counter[str] = Counter()

    def count_in(key: str, status: str, error_type: str | None, parts: list[_Part]) -> None:
        for index, part in parts:
            totals[key].merge(part)
            cells[(key, index)].merge(part)
            if status != "error":
                continue
            if error_type in NOT_FAILURES:
                waiting[key] += part.calls if error_type == "confirmation_required" else 0
            else:
                errors[key] += part.calls
                cell_errors[(key, index)] += part.calls

    h = tool_call_hours.c
    key_column = h.tool_name if by == "tool" else h.profile
    # An hour within one series bucket is summed into it by the database; an hour that
    # an edge between buckets cuts (its start and its end in different buckets) comes
    # back alone and is shared out (``_split``). 7 days in 24 buckets at 1M calls: ~1,500
    # rows instead of ~10,500; 65 → 44 ms in process (``benchmarks/ui_load.py``: 70 → 52).
    starts_in = _series_bucket(since, step, count, h.hour)
    ends_in = _series_bucket(since - timedelta(hours=1), step, count, h.hour)
    hour_text = type_coerce(h.hour, String)  # SQLite's text, parsed below at a third the cost
    cut = case((starts_in == ends_in, literal(None)), else_=hour_text)
    group = (starts_in, cut, key_column, h.status, h.error_type)  # the other key summed
    query = (
        select(
            *group,
            func.sum(h.calls),
            func.sum(h.duration_ms_sum),
            *(func.sum(h[name]) for name in BUCKET_COLUMNS),
        )
        .where(h.hour >= first, h.hour < last)
        .group_by(*group)
    )
    if tool:
        query = query.where(h.tool_name == tool)
    for index, stamp, key, status, error_type, calls, ms_sum, *counts in conn.execute(query):
        whole = Totals.from_counts(int(calls), float(ms_sum), [int(n) for n in counts])
        if stamp is None:
            count_in(key, status, error_type or None, [(int(index), whole)])
            continue
        hour = stamp if isinstance(stamp, datetime) else datetime.fromisoformat(stamp[:19])
        hour = hour if hour.tzinfo else hour.replace(tzinfo=UTC)
        count_in(key, status, error_type or None, _split(whole, hour, since, step, count))
    bucket = _series_bucket(since, step, count)
    for start, end in ((since, first), (last, until)):  # the partial hours, from rows
        if start >= end:
            continue
        for key, index, status, error_type, latency, calls, ms_sum in conn.execute(
            _binned(start, end, by, bucket, tool)
        ):
            part = Totals(calls=calls, duration_ms_sum=ms_sum or 0.0)
            part.buckets[latency] = calls
            count_in(key or "", status, error_type, [(index, part)])
    stats = [
        CallStats(
            key=key,
            calls=total.calls,
            errors=errors[key],
            error_rate=errors[key] / total.calls,
            waiting=waiting[key],
            total_ms=total.duration_ms_sum,
            p50_ms=total.quantile(0.5),
            p95_ms=total.quantile(0.95),
            series=[
                BucketStats(
                    start=since + step * i,
                    calls=(cell := cells.get((key, i), Totals())).calls,
                    errors=cell_errors[(key, i)],
                    p95_ms=cell.quantile(0.95),
                )
                for i in range(count if buckets else 0)
            ],
        )
        for key, total in totals.items()
        if total.calls
    ]
    stats.sort(key=lambda s: (-s.calls, s.key))
    return stats
