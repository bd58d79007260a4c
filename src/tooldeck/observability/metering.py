"""Aggregates over the audit log: calls, errors, total and percentile latency per tool or profile.

What ``tooldeck stats``, ``/api/stats`` and the tools UI's metrics page show (seed 000:
"ToolResult metadata feeds metering and audit"). One query reads the window's
(key, time bucket, status, duration) rows; the time bucket is computed by the
database from bound edges, so no timestamp is parsed in Python.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict
from sqlalchemy import Connection, case, literal, select

from tooldeck.observability.tables import tool_calls

__all__ = [
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
    c = tool_calls.c
    key_column = c.tool_name if by == "tool" else c.profile
    count = max(buckets, 1)
    step = (until - since) / count
    edges = [since + step * (i + 1) for i in range(count - 1)]
    bucket = (
        case(*((c.created_at < edge, i) for i, edge in enumerate(edges)), else_=count - 1)
        if edges
        else literal(0)
    )
    query = select(key_column, bucket, c.status, c.error_type, c.duration_ms).where(
        c.created_at >= since, c.created_at < until
    )
    if tool:
        query = query.where(c.tool_name == tool)
    durations: dict[str | None, list[float]] = defaultdict(list)
    errors: Counter[str | None] = Counter()
    cells: dict[tuple[str | None, int], list[float]] = defaultdict(list)
    cell_errors: Counter[tuple[str | None, int]] = Counter()
    waiting: Counter[str | None] = Counter()
    rows = conn.execute(query).all()  # one fetch, tight loop
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
