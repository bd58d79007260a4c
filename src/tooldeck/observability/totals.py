"""Running totals of tool calls, kept in the audit database (``tool_call_totals``).

The audit writer adds each batch's totals in the same transaction as its rows, so a
total never counts a call the log lacks; pruning old rows leaves the totals alone.
``/metrics`` reads them, which makes its counters cover every process that writes to
the database (``tooldeck call``, ``tooldeck mcp``, the server) and survive restarts.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, bindparam, case, func, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite

from tooldeck.observability.tables import BUCKET_COLUMNS, BUCKETS_MS, tool_call_totals, tool_calls

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

    def merge(self, other: Totals) -> None:
        """Add ``other``'s calls, duration and buckets to these."""
        self.calls += other.calls
        self.duration_ms_sum += other.duration_ms_sum
        self.buckets = [a + b for a, b in zip(self.buckets, other.buckets, strict=True)]

    def add(self, duration_ms: float | None) -> None:
        """Count one call; a call without a duration counts in the first bucket."""
        ms = duration_ms or 0.0
        self.calls += 1
        self.duration_ms_sum += ms
        self.buckets[bisect_left(BUCKETS_MS, ms)] += 1


def add_totals(conn: Connection, totals: dict[TotalsKey, Totals]) -> None:
    """Add ``totals`` to the table inside the caller's transaction (upsert per key).

    SQLite and PostgreSQL run one prepared ``INSERT ... ON CONFLICT DO UPDATE`` for all
    keys (built once per dialect: building it per flush cost ~1.5 ms); other
    databases an ``UPDATE`` followed by an ``INSERT`` when no row matched.
    """
    if not totals:
        return
    dialect = conn.dialect.name
    rows = [_totals_row(key, t) for key, t in totals.items()]
    if dialect in ("sqlite", "postgresql"):
        conn.execute(_upsert(dialect), rows)
        return
    for row in rows:
        where = [tool_call_totals.c[c] == row[c] for c in _KEY_COLUMNS]
        changed = conn.execute(
            update(tool_call_totals)
            .where(*where)
            .values({c: tool_call_totals.c[c] + row[c] for c in _INCREMENTS})
        )
        if changed.rowcount == 0:
            conn.execute(insert(tool_call_totals).values(**row))


_INCREMENTS = ("calls", "duration_ms_sum", *BUCKET_COLUMNS)
_upserts: dict[str, Any] = {}


def _totals_row(key: TotalsKey, t: Totals) -> dict[str, Any]:
    row: dict[str, Any] = dict(zip(_KEY_COLUMNS, key, strict=True))
    row.update(calls=t.calls, duration_ms_sum=t.duration_ms_sum)
    row.update(zip(BUCKET_COLUMNS, t.buckets, strict=False))  # +Inf is derived
    return row


def _upsert(dialect: str) -> Any:
    """The prepared upsert of one totals row for ``dialect`` (sqlite or postgresql)."""
    stmt = _upserts.get(dialect)
    if stmt is None:
        make = sqlite.insert if dialect == "sqlite" else postgresql.insert
        base = make(tool_call_totals).values(
            {c: bindparam(c) for c in (*_KEY_COLUMNS, *_INCREMENTS)}
        )
        stmt = _upserts[dialect] = base.on_conflict_do_update(
            index_elements=list(_KEY_COLUMNS),
            set_={c: tool_call_totals.c[c] + base.excluded[c] for c in _INCREMENTS},
        )
    return stmt


def sqlite_totals_upsert(
    totals: dict[TotalsKey, Totals],
) -> tuple[str, list[tuple[Any, ...]]]:
    """``add_totals`` for a raw ``sqlite3`` connection: the upsert's SQL and its rows.

    The same statement ``add_totals`` runs, compiled once for SQLite with positional
    parameters, for a writer that does not go through SQLAlchemy.
    """
    global _sqlite_upsert
    if _sqlite_upsert is None:
        compiled = _upsert("sqlite").compile(dialect=sqlite.dialect())
        _sqlite_upsert = (compiled.string, tuple(compiled.positiontup or ()))
    sql, order = _sqlite_upsert
    rows = [_totals_row(key, t) for key, t in totals.items()]
    return sql, [tuple(row[name] for name in order) for row in rows]


_sqlite_upsert: tuple[str, tuple[str, ...]] | None = None


def backfill_totals(conn: Connection) -> None:
    """Fill an empty totals table from the rows of ``tool_calls`` (a database from before it)."""
    c = tool_calls.c
    duration = func.coalesce(c.duration_ms, 0.0)
    bounds = (float("-inf"), *BUCKETS_MS)
    buckets = [
        func.sum(case(((duration > low) & (duration <= high), 1), else_=0))
        for low, high in zip(bounds, BUCKETS_MS, strict=False)
    ]
    keys = (c.tool_name, c.status, func.coalesce(c.error_type, ""), func.coalesce(c.profile, ""))
    query = select(*keys, func.count(), func.sum(duration), *buckets).group_by(*keys)
    totals: dict[TotalsKey, Totals] = {}
    for row in conn.execute(query):
        totals[(row[0], row[1], row[2], row[3])] = Totals.from_counts(
            int(row[4]), float(row[5] or 0.0), [int(n or 0) for n in row[6:]]
        )
    add_totals(conn, totals)


def read_totals(conn: Connection) -> Iterable[tuple[TotalsKey, Totals]]:
    """Every row of the totals table as (key, ``Totals``)."""
    for row in conn.execute(select(tool_call_totals)):
        m = row._mapping
        key = (m["tool_name"], m["status"], m["error_type"], m["profile"])
        counts = [int(m[name]) for name in BUCKET_COLUMNS]
        yield key, Totals.from_counts(int(m["calls"]), float(m["duration_ms_sum"]), counts)
