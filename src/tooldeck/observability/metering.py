"""Aggregates over the audit log: calls, errors, total and percentile latency per tool or profile.

What ``tooldeck stats``, ``/api/stats`` and the tools UI's metrics page show (seed 000:
"ToolResult metadata feeds metering and audit"). A window with few calls (up to
``EXACT_CALLS``) is computed from its rows: one query reads the (key, time bucket,
status, duration) rows, the bucket computed by the database from bound edges, and the
percentiles are exact. A window with more reads the hourly totals the audit writer
keeps (``tool_call_hours``) for its whole hours; a partial hour at either end is read
from its rows, or, when fewer of its calls lie outside the window than inside (the
current hour, for a window ending now), as its totals less the calls outside. A week
of a million calls costs about a thousand rows, not a million (``benchmarks/ui_load.py``);
counts stay exact, percentiles come from the latency histogram (as Prometheus'
``histogram_quantile``), and an hour that spans two series buckets is shared between
them in proportion to the time it spends in each.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from sqlalchemy import (
    Connection,
    Select,
    String,
    case,
    func,
    literal,
    select,
    type_coerce,
    union_all,
)

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

_HOUR = timedelta(hours=1)
_ZERO = timedelta(0)

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
    first, last = _next_hour(since), _hour_of(until)
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


def _hour_of(moment: datetime) -> datetime:
    """The start of the hour ``moment`` falls in."""
    return moment.replace(minute=0, second=0, microsecond=0)


def _next_hour(moment: datetime) -> datetime:
    """``moment`` if it starts an hour, else the start of the next hour."""
    start = _hour_of(moment)
    return start if start == moment else start + _HOUR


def _series_bucket(
    since: datetime, step: timedelta, count: int, moment: Any = tool_calls.c.created_at
) -> Any:
    """The index of the series bucket ``moment`` (a column) falls in, computed by the database.

    ``count`` buckets of ``step`` from ``since``, from bound edges: no timestamp is
    parsed in Python. The edges are searched by halves (nested ``CASE``s), so a row costs
    about log2(count) comparisons rather than up to ``count``.
    """
    return _bisect(moment, [since + step * (i + 1) for i in range(count - 1)], 0)


def _bisect(moment: Any, edges: list[datetime], first: int) -> Any:
    """``first`` + the number of ``edges`` (ascending) at or before ``moment``, as SQL."""
    if not edges:
        return literal(first)
    mid = len(edges) // 2
    return case(
        (moment < edges[mid], _bisect(moment, edges[:mid], first)),
        else_=_bisect(moment, edges[mid + 1 :], first + mid + 1),
    )


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
    group = (
        c.tool_name if by == "tool" else c.profile,
        bucket,
        c.status,
        c.error_type,
        _latency(duration),
    )
    query = select(*group, func.count(), func.sum(duration)).where(
        c.created_at >= start, c.created_at < end
    )
    return (query.where(_by_time(c.tool_name) == tool) if tool else query).group_by(*group)


def _latency(duration: Any) -> Any:
    """The histogram bucket a call of ``duration`` (ms, a column) counts in, in SQL.

    The index ``Totals.add`` counts it in: the first bound at or above it, else +Inf.
    """
    return case(
        *((duration <= bound, i) for i, bound in enumerate(BUCKETS_MS)), else_=len(BUCKETS_MS)
    )


def _by_time(column: Any) -> Any:
    """``column`` in a form no index answers, for filters on the rows of a partial hour.

    Those rows are then found through the ``created_at`` index, not by walking every
    call of one tool: SQLite, without statistics, prefers the equality (96 ms against
    3 ms for a busy tool's hour at 1M rows).
    """
    return func.coalesce(column, "")


_Part = tuple[int, Totals]
"""A series bucket's index and the share of an hour's totals that falls in it."""


def _split(
    whole: Totals, start: datetime, end: datetime, since: datetime, step: timedelta, count: int
) -> list[_Part]:
    """``whole`` (the totals of the calls in ``[start, end)``) shared between series buckets.

    In proportion to the time the span spends in each bucket; counts are rounded so that
    the shares add up to ``whole`` exactly.
    """
    first = (start - since) / step
    last = (end - since) / step
    indexes = range(int(first), min(count, math.ceil(last)))
    parts: list[_Part] = []
    done = 0.0
    before = [0] * len(whole.buckets)
    ms_before = 0.0
    for index in indexes:
        done += (min(last, index + 1) - max(first, index)) / (last - first)
        if index == indexes[-1]:  # the rest: the shares add up whatever the rounding
            upto, ms_upto = whole.buckets, whole.duration_ms_sum
        else:
            upto, ms_upto = [round(n * done) for n in whole.buckets], whole.duration_ms_sum * done
        buckets = [a - b for a, b in zip(upto, before, strict=True)]
        parts.append(
            (
                index,
                Totals(calls=sum(buckets), duration_ms_sum=ms_upto - ms_before, buckets=buckets),
            )
        )
        before, ms_before = upto, ms_upto
    return parts or [(min(int(first), count - 1), whole)]


def _calls_in_hours(conn: Connection, first: datetime, last: datetime, tool: str | None) -> int:
    """Calls counted in the hourly totals of the hours ``[first, last)``."""
    h = tool_call_hours.c
    query = select(func.coalesce(func.sum(h.calls), 0)).where(h.hour >= first, h.hour < last)
    if tool:
        query = query.where(h.tool_name == tool)
    return int(conn.execute(query).scalar_one())


def _hour_less(
    hour: datetime, spans: list[tuple[datetime, datetime]], by: GroupBy, tool: str | None
) -> Select[Any]:
    """The totals of ``hour`` less its calls in ``spans``, summed per group.

    Rows: (key, status, error type, calls, summed ms, the finite buckets' counts). One
    statement, so the totals and the rows taken off them are read from one snapshot
    while the writer adds both; the calls in ``spans`` are counted in the histogram's
    buckets as ``Totals.add`` counts them.
    """
    h, c = tool_call_hours.c, tool_calls.c
    totals = select(
        (h.tool_name if by == "tool" else h.profile).label("key"),
        h.status,
        h.error_type,
        h.calls,
        h.duration_ms_sum,
        *(h[name] for name in BUCKET_COLUMNS),
    ).where(h.hour >= hour, h.hour < hour + _HOUR)
    parts = [totals.where(h.tool_name == tool) if tool else totals]
    duration = func.coalesce(c.duration_ms, 0.0)
    for start, end in spans:
        rows = select(
            c.tool_name if by == "tool" else func.coalesce(c.profile, ""),
            c.status,
            func.coalesce(c.error_type, ""),
            duration.label("ms"),
            _latency(duration).label("latency"),
        ).where(c.created_at >= start, c.created_at < end)
        taken = (rows.where(_by_time(c.tool_name) == tool) if tool else rows).subquery()
        key, status, error_type, ms, latency = taken.c
        parts.append(
            select(
                key,
                status,
                error_type,
                literal(-1),
                -ms,
                *(case((latency == i, -1), else_=0) for i in range(len(BUCKETS_MS))),
            )
        )
    both = union_all(*parts).subquery()
    key, status, error_type, *numbers = both.c
    return select(key, status, error_type, *(func.sum(n) for n in numbers)).group_by(
        key, status, error_type
    )


def _partial_hour(
    conn: Connection,
    start: datetime,
    end: datetime,
    by: GroupBy,
    tool: str | None,
    frame: tuple[datetime, timedelta, int],
) -> Iterator[tuple[str, str, str | None, list[_Part]]]:
    """The calls in ``[start, end)``, within one hour: (key, status, error type, parts).

    When fewer calls lie in that hour outside the span than inside it (none after now),
    the hour's totals less the calls outside (``_hour_less``), shared out like a cut
    hour: for a window that ends now, the current hour's calls are all inside it (~6,000
    rows at 1M calls a week, ~26,000 under ``benchmarks/ui_load.py``'s load) and none
    outside. Otherwise the span's own rows, each in its series bucket.
    """
    hour = _hour_of(start)
    outside = [(a, b) for a, b in ((hour, start), (end, hour + _HOUR)) if a < b]
    now = datetime.now(UTC)
    if (start - hour) + max(min(hour + _HOUR, now) - end, _ZERO) < end - start:
        for key, status, error_type, calls, ms_sum, *counts in conn.execute(
            _hour_less(hour, outside, by, tool)
        ):
            if calls:
                whole = Totals.from_counts(int(calls), float(ms_sum), [int(n) for n in counts])
                yield key, status, error_type or None, _split(whole, start, end, *frame)
        return
    bucket = _series_bucket(*frame)
    for key, index, status, error_type, latency, calls, ms_sum in conn.execute(
        _binned(start, end, by, bucket, tool)
    ):
        part = Totals(calls=calls, duration_ms_sum=ms_sum or 0.0)
        part.buckets[latency] = calls
        yield key or "", status, error_type, [(index, part)]


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
    first, last = _next_hour(since), _hour_of(until)
    count = max(buckets, 1)
    step = (until - since) / count
    frame = (since, step, count)
    cells: dict[tuple[str, int], Totals] = defaultdict(Totals)
    errors: Counter[str] = Counter()
    cell_errors: Counter[tuple[str, int]] = Counter()
    waiting: Counter[str] = Counter()

    def count_in(key: str, status: str, error_type: str | None, parts: list[_Part]) -> None:
        for index, part in parts:
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
    # an edge between buckets cuts comes back alone and is shared out (``_split``). 7 days
    # in 24 buckets at 1M calls: ~1,000 rows instead of ~10,500.
    edges = (since + step * (i + 1) for i in range(count - 1))
    cut_hours = sorted({hour for e in edges if (hour := _hour_of(e)) != e})
    hour_text = type_coerce(h.hour, String)  # SQLite's text, parsed below at a third the cost
    cut = (
        case((h.hour.in_(cut_hours), hour_text), else_=literal(None))
        if cut_hours
        else literal(None)
    )
    group = (_series_bucket(since, step, count, h.hour), cut, key_column, h.status, h.error_type)
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
        count_in(key, status, error_type or None, _split(whole, hour, hour + _HOUR, *frame))
    for start, end in ((since, first), (last, until)):
        if start < end:
            for key, status, error_type, parts in _partial_hour(conn, start, end, by, tool, frame):
                count_in(key, status, error_type, parts)
    totals: dict[str, Totals] = defaultdict(Totals)  # a key's: its series buckets' sum
    for (key, _), cell in cells.items():
        totals[key].merge(cell)
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
