"""The audit database's tables (SQLAlchemy Core), shared by the store, metering and metrics.

``runs`` and ``run_events`` hold agent runs (``tooldeck.agent``): one row per run with
its state and record, one row per event, so a stream can be replayed after the fact.

``tool_calls`` holds one row per call and may be pruned (``audit.retention_days``);
``tool_call_totals`` holds running totals per (tool, status, error type, profile) with
a latency histogram, updated in the same transaction as the rows they count and never
pruned, so Prometheus counters stay monotonic and agree across processes (CLI, MCP
stdio, the server) that share one database.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    Column,
    DateTime,
    Float,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    or_,
)

__all__ = [
    "BUCKETS_MS",
    "BUCKET_COLUMNS",
    "approval_decisions",
    "metadata",
    "owned_by",
    "run_events",
    "runs",
    "tool_call_hours",
    "tool_call_journal",
    "tool_call_totals",
    "tool_calls",
]

metadata = MetaData()

tool_calls = Table(
    "tool_calls",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("created_at", DateTime(timezone=True), nullable=False, index=True),
    Column("tool_name", String(128), nullable=False, index=True),
    Column("status", String(16), nullable=False),
    Column("error_type", String(32)),
    Column("error_message", Text),
    Column("error_details", Text),  # JSON text, serialised once by the writer
    Column("arguments", Text),  # JSON text, redacted: the arguments the call ran with
    Column("data", Text),  # JSON text
    Column("duration_ms", Float),
    Column("attempts", Integer),
    Column("source_id", String(128)),
    Column("as_of", String(64)),
    Column("request_id", String(128), index=True),
    Column("session_id", String(128)),
    Column("run_id", String(128)),
    Column("user", String(128)),
    Column("profile", String(64)),
    Column("provider", String(128)),
    # When an approver edited the arguments: the ones asked (JSON text, redacted) and who
    Column("asked_arguments", Text),
    Column("edited_by", String(128)),
    # History filters: each index ends in the rowid, so "filter, newest first" is a scan.
    Index("ix_tool_calls_status", "status"),
    Index("ix_tool_calls_profile", "profile"),
)

tool_call_journal = Table(
    "tool_call_journal",
    metadata,
    Column("segment", String(128), primary_key=True),
    Column("stored_at", DateTime(timezone=True), nullable=False),
)
"""Journal segments whose rows are stored (``observability.journal``), written in the
same transaction as the rows: a segment found again after a crash is not stored twice."""

approval_decisions = Table(
    "approval_decisions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("decided_at", DateTime(timezone=True), nullable=False, index=True),
    Column("approval_id", String(64), nullable=False, index=True),
    Column("tool_name", String(128), nullable=False),
    Column("decision", String(16), nullable=False),  # approved | denied
    Column("arguments_hash", String(64), nullable=False),
    Column("arguments", Text),  # JSON text, redacted
    Column("edited_arguments", Text),  # JSON text, redacted
    Column("principal", String(128)),
    Column("approver", String(128)),
    Column("profile", String(64)),
    Column("message", Text),
)

BUCKETS_MS: tuple[float, ...] = (
    1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000,
)  # fmt: skip
"""Upper bounds (ms) of the latency histogram's finite buckets; slower calls count in +Inf."""

BUCKET_COLUMNS: tuple[str, ...] = tuple(f"le_{i:02d}" for i in range(len(BUCKETS_MS)))
"""Columns of ``tool_call_totals`` counting calls in each bucket (not cumulative)."""


def _totals_columns() -> list[Column[Any]]:
    """The key and counts of a totals row.

    '' rather than NULL for "none", so the key's four columns can be (part of) the
    primary key.
    """
    return [
        Column("tool_name", String(128), primary_key=True),
        Column("status", String(16), primary_key=True),
        Column("error_type", String(32), primary_key=True),
        Column("profile", String(64), primary_key=True),
        Column("calls", Integer, nullable=False),
        Column("duration_ms_sum", Float, nullable=False),
        *(Column(name, Integer, nullable=False) for name in BUCKET_COLUMNS),
    ]


tool_call_totals = Table("tool_call_totals", metadata, *_totals_columns())

tool_call_hours = Table(
    "tool_call_hours",
    metadata,
    Column("hour", DateTime(timezone=True), primary_key=True),
    *_totals_columns(),
)
"""The same totals per hour (UTC, the hour's start), written with the rows they count:
statistics over days read these instead of every row (``metering.call_stats``)."""

runs = Table(
    "runs",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("created_at", DateTime(timezone=True), nullable=False, index=True),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Column("state", String(16), nullable=False),
    Column("question", Text, nullable=False),
    Column("profile", String(64)),
    Column("user", String(128)),
    Column("record", Text, nullable=False),  # JSON text: the whole ChatRun
    Column("cancel_requested", String(200)),  # asked of the process running it: the reason
)

run_events = Table(
    "run_events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(64), nullable=False),
    Column("seq", Integer, nullable=False),
    Column("type", String(32), nullable=False),
    Column("event", Text, nullable=False),  # JSON text: the whole RunEvent
    UniqueConstraint("run_id", "seq"),
)


def owned_by(column: Column[Any], user: str) -> Any:
    """The condition "a row of ``user``" on a ``user`` column.

    ``anonymous`` (the caller of a server that knows no identities) owns the rows
    made without a user too (``providers.approvals.visible_to``).
    """
    return or_(column.is_(None), column == user) if user == "anonymous" else column == user
