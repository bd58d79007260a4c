"""Running totals of tool calls, kept in the audit database (``tool_call_totals``).

The audit writer adds each batch's totals in the same transaction as its rows, so a
total never counts a call the log lacks; pruning old rows leaves the totals alone. The
same rows per hour (``tool_call_hours``, keyed by the hour first) are what statistics
over long windows read.
``/metrics`` reads them, which makes its counters cover every process that writes to
the database (``tooldeck call``, ``tooldeck mcp``, the server) and survive restarts.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from operator import add
from typing import Any

from sqlalchemy import Connection, Table, bindparam, case, func, insert, select, update
from sqlalchemy.dialects import sqlite

from tooldeck.observability.tables import (
    BUCKET_COLUMNS,
    BUCKETS_MS,
    tool_call_hours,
    tool_call_totals,
    tool_calls,
)

__all__ = [
    "Totals",
    "TotalsKey",
    "add_totals",
    "backfill_totals",
    "read_totals",
    "sqlite_totals_upsert",
]

TotalsKey = tuple[str, str, str, str]
"""(tool_name, status, error_type or "", profile or "")."""
HourKey = tuple[Any, str, str, str, str]
"""(hour as the dialect stores it, *TotalsKey)."""

_KEY_COLUMNS = ("tool_name", "status", "error_type", "profile")


@dataclass(kw_only=True, slots=True)
class Totals:
    """Calls, summed duration (ms) and per-bucket counts (``BUCKETS_MS`` + one for +Inf)."""

    calls: int = 0
    duration_ms_sum: float = 0.0
    buckets: list[int] = field(default_factory=lambda: [0] * (len(BUCKETS_MS) + 1))

    @classmethod
    def from_counts(cls, calls: int, duration_ms_sum: float, counts: list[int]) -> Totals:
        """Totals from the finite buckets' counts; the +Inf bucket holds the rest of ``calls``."""
        return cls(
            calls=calls, duration_ms_sum=duration_ms_sum, buckets=[*counts, calls - sum(counts)]
        )

    @classmethod
    def of(cls, durations: list[float | None]) -> Totals:
        """Totals of calls that took ``durations`` (ms; None counts as 0, as in ``add``)."""
        ms = [d or 0.0 for d in durations]
        buckets = [0] * (len(BUCKETS_MS) + 1)
        for i in [bisect_left(BUCKETS_MS, d) for d in ms]:
            buckets[i] += 1
        return cls(calls=len(ms), duration_ms_sum=sum(ms), buckets=buckets)

    def merge(self, other: Totals) -> None:
        """Add ``other``'s calls, duration and buckets to these."""
        self.calls += other.calls
        self.duration_ms_sum += other.duration_ms_sum
        self.buckets = list(map(add, self.buckets, other.buckets))  # same length, always

    def add(self, duration_ms: float | None) -> None:
        """Count one call; a call without a duration counts in the first bucket."""
        ms = duration_ms or 0.0
        self.calls += 1
        self.duration_ms_sum += ms
        self.buckets[bisect_left(BUCKETS_MS, ms)] += 1

    def quantile(self, q: float) -> float | None:
        """The ``q``-quantile (0..1) of the durations, estimated from the buckets (ms).

        Prometheus' ``histogram_quantile``: linear within the bucket the rank falls in;
        in the +Inf bucket, the highest finite bound. None without calls.
        """
        if self.calls <= 0:
            return None
        rank = q * self.calls
        seen = 0
        for i, count in enumerate(self.buckets):
            if count and seen + count >= rank:
                if i == len(BUCKETS_MS):
                    return BUCKETS_MS[-1]
                low = BUCKETS_MS[i - 1] if i else 0.0
                return low + (BUCKETS_MS[i] - low) * (rank - seen) / count
            seen += count
        return BUCKETS_MS[-1]


def add_totals(
    conn: Connection, totals: dict[Any, Totals], table: Table = tool_call_totals
) -> None:
    """Add ``totals`` to ``table`` inside the caller's transaction (upsert per key).

    Keys are ``TotalsKey`` for ``tool_call_totals``, ``HourKey`` for ``tool_call_hours``.

    SQLite and PostgreSQL run one prepared ``INSERT ... ON CONFLICT DO UPDATE`` for all
    keys (built once per dialect: building it per flush cost ~1.5 ms); other
    databases an ``UPDATE`` followed by an ``INSERT`` when no row matched.
    """
    if not totals:
        return
    dialect = conn.dialect.name
    rows = [_totals_row(table, key, t) for key, t in totals.items()]
    if dialect in ("sqlite", "postgresql"):
        conn.execute(_upsert(dialect, table), rows)
        return
    for row in rows:
        where = [table.c[c] == row[c] for c in _keys(table)]
        changed = conn.execute(
            update(table).where(*where).values({c: table.c[c] + row[c] for c in _INCREMENTS})
        )
        if changed.rowcount == 0:
            conn.execute(insert(table).values(**row))


_INCREMENTS = ("calls", "duration_ms_sum", *BUCKET_COLUMNS)
_upserts: dict[tuple[str, str], Any] = {}


def _keys(table: Table) -> tuple[str, ...]:
    """The key columns of a totals table, in order (its primary key)."""
    return tuple(c.name for c in table.primary_key.columns)


def _totals_row(table: Table, key: tuple[Any, ...], t: Totals) -> dict[str, Any]:
    row: dict[str, Any] = dict(zip(_keys(table), key, strict=True))
    row.update(calls=t.calls, duration_ms_sum=t.duration_ms_sum)
    row.update(zip(BUCKET_COLUMNS, t.buckets, strict=False))  # +Inf is derived
    return row


def _upsert(dialect: str, table: Table) -> Any:
    """The prepared upsert of one row of ``table`` for ``dialect`` (sqlite or postgresql)."""
    stmt = _upserts.get((dialect, table.name))
    if stmt is None:
        make: Any = sqlite.insert
        if dialect != "sqlite":
            from sqlalchemy.dialects import postgresql  # 15 ms to import: only for its own

            make = postgresql.insert
        keys = _keys(table)
        base = make(table).values({c: bindparam(c) for c in (*keys, *_INCREMENTS)})
        stmt = _upserts[(dialect, table.name)] = base.on_conflict_do_update(
            index_elements=list(keys),
            set_={c: table.c[c] + base.excluded[c] for c in _INCREMENTS},
        )
    return stmt


def sqlite_totals_upsert(
    totals: dict[Any, Totals], table: Table = tool_call_totals
) -> tuple[str, list[tuple[Any, ...]]]:
    """``add_totals`` for a raw ``sqlite3`` connection: the upsert's SQL and its rows.

    The same statement ``add_totals`` runs, compiled once for SQLite with positional
    parameters, for a writer that does not go through SQLAlchemy.
    """
    prepared = _sqlite_upserts.get(table.name)
    if prepared is None:
        compiled = _upsert("sqlite", table).compile(dialect=sqlite.dialect())
        prepared = _sqlite_upserts[table.name] = (
            compiled.string,
            tuple(compiled.positiontup or ()),
        )
    sql, order = prepared
    rows = [_totals_row(table, key, t) for key, t in totals.items()]
    return sql, [tuple(row[name] for name in order) for row in rows]


_sqlite_upserts: dict[str, tuple[str, tuple[str, ...]]] = {}


def hour_of(created_at: Any) -> Any:
    """The start of ``created_at``'s hour, in the form it came in (SQLite text or datetime)."""
    if isinstance(created_at, str):
        return created_at[:13] + ":00:00.000000"
    return created_at.replace(minute=0, second=0, microsecond=0)


def backfill_totals(conn: Connection, table: Table = tool_call_totals) -> None:
    """Fill an empty totals ``table`` from the rows of ``tool_calls`` (a database from before it).

    ``tool_call_hours`` is filled per hour (SQLite: the text's first 13 characters;
    other databases: ``date_trunc('hour', …)``).
    """
    c = tool_calls.c
    duration = func.coalesce(c.duration_ms, 0.0)
    bounds = (float("-inf"), *BUCKETS_MS)
    buckets = [
        func.sum(case(((duration > low) & (duration <= high), 1), else_=0))
        for low, high in zip(bounds, BUCKETS_MS, strict=False)
    ]
    keys: tuple[Any, ...] = (
        c.tool_name,
        c.status,
        func.coalesce(c.error_type, ""),
        func.coalesce(c.profile, ""),
    )
    if table is tool_call_hours:
        hour = (
            func.substr(c.created_at, 1, 13).concat(":00:00.000000")
            if conn.dialect.name == "sqlite"
            else func.date_trunc("hour", c.created_at)
        )
        keys = (hour, *keys)
    query = select(*keys, func.count(), func.sum(duration), *buckets).group_by(*keys)
    width = len(keys)
    totals: dict[tuple[Any, ...], Totals] = {}
    for row in conn.execute(query):
        key = tuple(row[:width])
        if isinstance(key[0], str) and table is tool_call_hours:  # SQLite's text: bound anew
            key = (datetime.fromisoformat(key[0]), *key[1:])
        totals[key] = Totals.from_counts(
            int(row[width]), float(row[width + 1] or 0.0), [int(n or 0) for n in row[width + 2 :]]
        )
    add_totals(conn, totals, table)


def read_totals(conn: Connection) -> Iterable[tuple[TotalsKey, Totals]]:
    """Every row of the totals table as (key, ``Totals``)."""
    for row in conn.execute(select(tool_call_totals)):
        m = row._mapping
        key = (m["tool_name"], m["status"], m["error_type"], m["profile"])
        counts = [int(m[name]) for name in BUCKET_COLUMNS]
        yield key, Totals.from_counts(int(m["calls"]), float(m["duration_ms_sum"]), counts)
