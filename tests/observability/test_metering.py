"""Metering over a real SQLite audit file: stats, percentiles, pages, export, pruning, totals."""

from __future__ import annotations

import sqlite3
from bisect import bisect_left
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import event

from deadlines import wait_until
from tooldeck.core import ToolContext, ToolError, ToolResult
from tooldeck.core.result import ErrorType, ResultMetadata
from tooldeck.observability import AuditStore, audit_reads, metering
from tooldeck.observability.metering import CallStats, parse_since, percentile
from tooldeck.observability.tables import BUCKETS_MS
from tooldeck.observability.totals import Totals

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


def result(ms: float, error: ErrorType | None = None) -> ToolResult:
    return ToolResult(
        status="error" if error else "success",
        data=None if error else {"ok": True},
        error=ToolError(type=error, message="boom") if error else None,
        metadata=ResultMetadata(duration_ms=ms),
    )


def fill(db: Path, calls: list[tuple[str, str | None, float, ErrorType | None, datetime]]) -> None:
    """Write calls, then set their times (the store stamps rows with the wall clock)."""
    store = AuditStore.sqlite(db)
    for tool, profile, ms, error, _ in calls:
        store.record(tool, {"n": ms}, ToolContext(profile=profile), result(ms, error))
    store.close()
    with sqlite3.connect(db) as conn:
        for row_id, (*_, when) in enumerate(calls, start=1):
            stamp = (
                when.astimezone(UTC)
                .replace(tzinfo=None)
                .isoformat(sep=" ", timespec="microseconds")
            )
            conn.execute("update tool_calls set created_at = ? where id = ?", (stamp, row_id))


def test_percentile_interpolates_like_numpy() -> None:
    values = [1.0, 2.0, 3.0, 4.0, 10.0]
    assert percentile(values, 0.5) == 3.0
    assert percentile(values, 0.95) == pytest.approx(8.8)  # numpy.percentile(values, 95)
    assert percentile([7.0], 0.95) == 7.0
    assert percentile([], 0.5) is None


def test_parse_since_reads_durations_and_iso_times_and_names_both_forms() -> None:
    assert parse_since("24h", NOW) == NOW - timedelta(hours=24)
    assert parse_since("1.5d", NOW) == NOW - timedelta(hours=36)
    assert parse_since("2026-11-20T08:00", NOW) == datetime(2026, 11, 20, 8, tzinfo=UTC)
    with pytest.raises(ValueError, match=r"30m, 24h, 7d .* ISO date/time"):
        parse_since("yesterday", NOW)


def test_stats_per_tool_and_profile_with_errors_percentiles_and_series(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    hour = timedelta(hours=1)
    fill(
        db,
        [
            ("get_quotes", "analyst", 1.0, None, NOW - 5 * hour),
            ("get_quotes", "analyst", 2.0, None, NOW - 5 * hour),
            ("get_quotes", None, 3.0, None, NOW - 1 * hour),
            ("get_quotes", None, 4.0, "timeout", NOW - 1 * hour),
            ("get_quotes", None, 10.0, None, NOW - 1 * hour),
            ("shell", "analyst", 50.0, "denied", NOW - 2 * hour),
            ("shell", None, 9.0, None, NOW - 30 * hour),  # outside the window
        ],
    )
    store = AuditStore.sqlite(db)
    try:
        by_tool = store.stats(since=NOW - 6 * hour, until=NOW, buckets=3)
        quotes, shell = by_tool
        assert (quotes.key, quotes.calls, quotes.errors, quotes.total_ms) == (
            "get_quotes",
            5,
            1,
            20.0,
        )
        assert quotes.error_rate == pytest.approx(0.2)
        assert (quotes.p50_ms, quotes.p95_ms) == (3.0, pytest.approx(8.8))
        assert [(b.calls, b.errors) for b in quotes.series] == [(2, 0), (0, 0), (3, 1)]
        assert [b.start for b in quotes.series] == [NOW - 6 * hour, NOW - 4 * hour, NOW - 2 * hour]
        assert quotes.series[0].p95_ms == pytest.approx(1.95) and quotes.series[1].p95_ms is None
        assert (shell.calls, shell.errors, shell.p95_ms) == (1, 1, 50.0)

        by_profile = {
            s.key: (s.calls, s.errors)
            for s in store.stats(since=NOW - 6 * hour, until=NOW, by="profile")
        }
        assert by_profile == {"": (3, 1), "analyst": (3, 1)}
        only = store.stats(since=NOW - 48 * hour, until=NOW, tool="shell")
        assert [(s.key, s.calls) for s in only] == [("shell", 2)]
    finally:
        store.close()


def test_a_call_waiting_for_approval_or_cancelled_is_not_a_failure(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    fill(
        db,
        [
            ("shell", None, 0.0, "confirmation_required", NOW - timedelta(minutes=3)),
            ("shell", None, 900.0, "cancelled", NOW - timedelta(minutes=2)),
            ("shell", None, 5.0, "execution", NOW - timedelta(minutes=1)),
            ("shell", None, 5.0, None, NOW - timedelta(minutes=1)),
        ],
    )
    store = AuditStore.sqlite(db)
    try:
        [shell] = store.stats(since=NOW - timedelta(hours=1), until=NOW, buckets=2)
    finally:
        store.close()
    assert (shell.calls, shell.errors, shell.waiting) == (4, 1, 1)
    assert shell.error_rate == pytest.approx(0.25)
    assert sum(b.errors for b in shell.series) == 1


def test_history_filters_pages_and_summaries(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    minute = timedelta(minutes=1)
    fill(
        db,
        [
            ("get_quotes", "analyst" if i % 2 else None, float(i), None, NOW - (30 - i) * minute)
            for i in range(30)
        ]
        + [("shell", None, 1.0, "denied", NOW)],
    )
    store = AuditStore.sqlite(db)
    try:
        page = store.query(limit=10, tool="get_quotes", summary=True)
        assert [r.id for r in page] == list(range(30, 20, -1))
        assert page[0].arguments is None and page[0].data is None  # summaries leave them out
        older = store.query(limit=10, tool="get_quotes", before_id=page[-1].id)
        assert [r.id for r in older] == list(range(20, 10, -1))
        assert older[0].arguments == {"n": 19.0} and older[0].data == {"ok": True}

        assert {r.profile for r in store.query(limit=100, profile="analyst")} == {"analyst"}
        assert len(store.query(limit=100, profile="analyst")) == 15
        assert {r.profile for r in store.query(limit=100, profile="")} == {None}
        window = store.query(limit=100, since=NOW - 10 * minute, until=NOW - 5 * minute)
        assert [r.id for r in window] == [25, 24, 23, 22, 21]
        errors = store.query(status="error")
        assert [(r.tool_name, r.error_type, r.error_message) for r in errors] == [
            ("shell", "denied", "boom")
        ]
        full = store.get(31)
        assert full is not None and full.arguments == {"n": 1.0} and full.error_message == "boom"
        assert store.get(999) is None
    finally:
        store.close()


def test_a_page_far_back_in_time_is_the_same_page_read_through_the_time_index(
    tmp_path: Path,
) -> None:
    """``until`` long ago: the ids come from the ``created_at`` index, and the page is the
    one a walk newest-first by id gives, a call stored late (old time, high id) included."""
    db = tmp_path / "audit.db"
    minute = timedelta(minutes=1)
    calls: list[tuple[str, str | None, float, ErrorType | None, datetime]] = [
        ("get_quotes", None, float(i), None, NOW - (400 - i) * minute) for i in range(400)
    ]
    calls.append(("late", None, 1.0, None, NOW - 395 * minute))  # a dead process's journal
    fill(db, calls)
    store = AuditStore.sqlite(db)
    try:
        until = NOW - 390 * minute  # 10 of 401 rows before it; the walk by id skips 391
        with store.engine.connect() as conn:
            assert audit_reads._older_side_is_smaller(conn, None, until, None, True)
            assert not audit_reads._older_side_is_smaller(conn, None, NOW - minute, None, False)
        with sqlite3.connect(db) as conn:
            expected = [
                row_id
                for (row_id,) in conn.execute(
                    "select id from tool_calls where created_at < ? order by id desc",
                    (until.replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds"),),
                )
            ]
        assert expected[:2] == [401, 10] and len(expected) == 11
        first = store.query(limit=4, until=until)
        assert [r.id for r in first] == expected[:4] and first[0].tool_name == "late"
        second = store.query(limit=4, until=until, before_id=first[-1].id)
        assert [r.id for r in second] == expected[4:8]
        assert [r.id for r in store.query(limit=50, until=until)] == expected
        window = store.query(limit=50, since=NOW - 397 * minute, until=until)
        assert [r.id for r in window] == [401, 10, 9, 8, 7, 6, 5, 4]
        assert [r.id for r in store.query(limit=3, until=NOW - 500 * minute)] == []
        mine = store.query(limit=3, until=until, user="anonymous")  # read row by row
        assert [r.id for r in mine] == expected[:3]
        assert store.query(limit=3, until=until, user="someone") == []
        quotes = store.query(limit=3, until=until, tool="get_quotes")  # its index's plan
        assert [r.id for r in quotes] == expected[1:4]
    finally:
        store.close()


def test_export_streams_every_record_oldest_first_in_batches(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    fill(
        db,
        [("get_quotes", None, float(i), None, NOW - timedelta(minutes=60 - i)) for i in range(25)],
    )
    store = AuditStore.sqlite(db)
    try:
        records = list(store.export(batch=7))
        assert [r.id for r in records] == list(range(1, 26))
        assert records[3].arguments == {"n": 3.0}
        recent = list(store.export(since=NOW - timedelta(minutes=40), batch=7))
        assert [r.id for r in recent] == list(range(21, 26))
    finally:
        store.close()


def test_prune_deletes_old_rows_but_keeps_running_totals(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    fill(
        db,
        [
            ("get_quotes", None, 2.0, None, NOW - timedelta(days=40)),
            ("get_quotes", None, 700.0, None, NOW - timedelta(days=1)),
            ("get_quotes", "analyst", 3.0, "timeout", NOW),
        ],
    )
    store = AuditStore.sqlite(db)
    try:
        assert store.prune(NOW - timedelta(days=30)) == 1
        assert [r.id for r in store.query()] == [3, 2]
        totals = dict(store.totals())
        ok = totals[("get_quotes", "success", "", "")]
        assert (ok.calls, ok.duration_ms_sum) == (2, 702.0)  # the pruned call still counts
        assert ok.buckets[1] == 1 and ok.buckets[9] == 1  # 2 ms ≤ 2.5; 700 ms ≤ 1000
        assert totals[("get_quotes", "error", "timeout", "analyst")].calls == 1
    finally:
        store.close()


def test_retention_prunes_in_the_writer_thread(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    fill(db, [("get_quotes", None, 1.0, None, datetime.now(UTC) - timedelta(days=3))] * 2)
    store = AuditStore.sqlite(db, retention_s=86_400)
    try:
        store.record("get_quotes", {}, None, result(1.0))
        wait_until(lambda: store.count() == 1, "the writer's first prune")  # at start
    finally:
        store.close()


def test_totals_are_backfilled_for_a_database_from_before_them(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    fill(db, [("get_quotes", None, 4.0, None, NOW), ("get_quotes", None, 20_000.0, "timeout", NOW)])
    with sqlite3.connect(db) as conn:
        conn.execute("drop table tool_call_totals")
    store = AuditStore.sqlite(db)
    try:
        totals = dict(store.totals())
        assert totals[("get_quotes", "success", "", "")].buckets[2] == 1  # 4 ms in (2.5, 5]
        slow = totals[("get_quotes", "error", "timeout", "")]
        assert (slow.calls, slow.duration_ms_sum, slow.buckets[13]) == (1, 20_000.0, 1)
        store.record("get_quotes", {}, None, result(1.0))
        assert dict(store.totals())[("get_quotes", "success", "", "")].calls == 2
    finally:
        store.close()


def same_counts(summarised: list[CallStats], exact: list[CallStats], share: int) -> None:
    """The summarised statistics count what the exact ones count.

    A series bucket may differ from the exact one by at most ``share`` calls: an hour
    shared out between two buckets.
    """
    assert [(s.key, s.calls, s.errors, s.waiting) for s in summarised] == [
        (s.key, s.calls, s.errors, s.waiting) for s in exact
    ]
    assert summarised[0].calls > 100  # the summarised path did run
    for got, want in zip(summarised, exact, strict=True):
        assert got.total_ms == pytest.approx(want.total_ms)
        assert sum(b.calls for b in got.series) == got.calls
        assert sum(b.errors for b in got.series) == got.errors
        for mine, theirs in zip(got.series, want.series, strict=True):
            assert abs(mine.calls - theirs.calls) <= share


def test_long_windows_are_summarised_from_hourly_totals_with_exact_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past ``EXACT_CALLS``, whole hours come from ``tool_call_hours``: same counts."""
    db = tmp_path / "audit.db"
    calls: list[tuple[str, str | None, float, ErrorType | None, datetime]] = []
    for i in range(600):  # 12 calls an hour for 50 hours
        error: ErrorType | None = (
            "timeout" if i % 7 == 0 else "confirmation_required" if i % 11 == 0 else None
        )
        tool = "get_quotes" if i % 3 else "python"
        when = NOW - timedelta(minutes=5 * i + 1)
        calls.append((tool, "analyst" if i % 2 else None, float(1 + i % 40), error, when))
    fill(db, calls)
    with sqlite3.connect(db) as conn:  # rebuilt from the rows' own times when reopened
        conn.execute("drop table tool_call_hours")
    store = AuditStore.sqlite(db)
    try:
        since = NOW - timedelta(hours=40, minutes=20)
        for by in ("tool", "profile"):
            exact = store.stats(since=since, until=NOW, by=by, buckets=10)
            monkeypatch.setattr(metering, "EXACT_CALLS", 100)
            summarised = store.stats(since=since, until=NOW, by=by, buckets=10)
            monkeypatch.undo()
            same_counts(summarised, exact, share=12)  # an hour's calls
            for got, want in zip(summarised, exact, strict=True):
                assert got.p95_ms is not None and want.p95_ms is not None
                assert bisect_left(BUCKETS_MS, got.p95_ms) == bisect_left(BUCKETS_MS, want.p95_ms)
        assert store.prune(NOW - timedelta(hours=10)) > 0
        with sqlite3.connect(db) as conn:
            (oldest,) = conn.execute("select min(hour) from tool_call_hours").fetchone()
        assert oldest >= (NOW - timedelta(hours=10)).strftime("%Y-%m-%d %H")
    finally:
        store.close()


@pytest.mark.parametrize(
    ("since_past", "until_past", "from_totals"),
    [  # a window's partial hours, read as their hour's totals less the rows outside...
        (timedelta(hours=30, minutes=50), timedelta(hours=2, minutes=10), 2),
        (timedelta(hours=30, minutes=10), timedelta(hours=2, minutes=50), 0),  # ...or rows
    ],
)
def test_a_windows_partial_hours_count_the_same_read_either_way(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    since_past: timedelta,
    until_past: timedelta,
    from_totals: int,
) -> None:
    """Calls in the partial hours at both ends are counted exactly, whichever side is read.

    With more calls in the window than outside it, a partial hour is its hourly totals
    less the calls outside (one statement, ``UNION ALL``); the calls after ``until`` and
    before ``since`` in those hours must not be counted.
    """
    db = tmp_path / "audit.db"
    calls: list[tuple[str, str | None, float, ErrorType | None, datetime]] = []
    for i in range(1080):  # a call every 2 minutes for 36 hours
        error: ErrorType | None = (
            "timeout" if i % 7 == 0 else "confirmation_required" if i % 11 == 0 else None
        )
        ms = float(BUCKETS_MS[i % 13]) * (1 if i % 4 else 0.7)  # on a bound, or within
        when = NOW - timedelta(minutes=2 * i + 1)
        calls.append(
            ("get_quotes" if i % 3 else "python", "analyst" if i % 2 else None, ms, error, when)
        )
    fill(db, calls)
    with sqlite3.connect(db) as conn:  # rebuilt from the rows' own times when reopened
        conn.execute("drop table tool_call_hours")
    store = AuditStore.sqlite(db)
    statements: list[str] = []
    event.listen(store.engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    try:
        since, until = NOW - since_past, NOW - until_past
        for by, tool in (("tool", None), ("profile", None), ("tool", "python")):
            exact = store.stats(since=since, until=until, by=by, buckets=12, tool=tool)
            monkeypatch.setattr(metering, "EXACT_CALLS", 100)
            statements.clear()
            summarised = store.stats(since=since, until=until, by=by, buckets=12, tool=tool)
            monkeypatch.undo()
            assert sum("UNION ALL" in sql for sql in statements) == from_totals
            same_counts(summarised, exact, share=30)  # an hour's calls
            for got in summarised:
                histogram = Totals.of(  # each call in its latency bucket, once
                    [
                        ms
                        for name, profile, ms, _, when in calls
                        if since <= when < until
                        and (tool is None or name == tool)
                        and (name if by == "tool" else profile or "") == got.key
                    ]
                )
                assert (got.p50_ms, got.p95_ms) == (
                    histogram.quantile(0.5),
                    histogram.quantile(0.95),
                )
    finally:
        store.close()


def test_the_writer_keeps_hourly_totals_with_the_rows(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    store = AuditStore.sqlite(db)
    for ms in (0.5, 3.0, 70.0):
        store.record("get_quotes", {}, ToolContext(profile="analyst"), result(ms))
    store.close()
    hour = datetime.now(UTC).strftime("%Y-%m-%d %H:00:00.000000")
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "select hour, tool_name, profile, calls, duration_ms_sum, le_00, le_02, le_06 "
            "from tool_call_hours"
        ).fetchall()
    assert rows == [(hour, "get_quotes", "analyst", 3, 73.5, 1, 1, 1)]
