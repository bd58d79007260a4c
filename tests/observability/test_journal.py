"""The audit journal: an acknowledged record is safe from a kill before the call answers.

Real files, real ``flock``s and a real process killed with SIGKILL; the database is read
with ``sqlite3``, as another program would.
"""

from __future__ import annotations

import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

from tooldeck.core.result import ToolResult
from tooldeck.observability import AuditStore


def stored(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [r[0] for r in conn.execute("SELECT request_id FROM tool_calls ORDER BY id")]


def segments(db: Path) -> dict[str, int]:
    """The journal's segment files and their sizes."""
    return {p.name: p.stat().st_size for p in db.with_suffix(".journal").glob("*.jsonl")}


def answer(request_id: str, data: object = None) -> ToolResult:
    result = ToolResult.ok({"price": 1} if data is None else data)
    meta = result.metadata.model_copy(update={"request_id": request_id})
    return result.model_copy(update={"metadata": meta})


def acked(store: AuditStore, request_id: str) -> None:
    future = store.record_acked("quote", {"symbol": "AAPL"}, None, answer(request_id))
    assert future.done() and future.result() is True  # journalled: nothing to wait for


def test_an_acknowledged_record_is_journalled_then_moved_into_the_database(
    tmp_path: Path,
) -> None:
    db = tmp_path / "audit.db"
    store = AuditStore.sqlite(db, durability="ack", flush_interval_s=60)
    try:
        acked(store, "r1")
        assert stored(db) == []  # not yet in the database ...
        ((name, size),) = segments(db).items()
        assert size > 0  # ... but in the journal, redacted and serialised
        assert store.flush() == 1
        assert stored(db) == ["r1"]
        assert name not in segments(db)  # the segment is gone once its rows are stored
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT segment FROM tool_call_journal").fetchall() == [(name,)]
            totals = conn.execute("SELECT calls FROM tool_call_totals WHERE tool_name='quote'")
            assert totals.fetchone() == (1,)
    finally:
        store.close()
    assert segments(db) == {}  # an empty segment does not outlive its store


def test_records_a_killed_process_journalled_are_stored_by_the_next_store(
    tmp_path: Path,
) -> None:
    db = tmp_path / "audit.db"
    script = textwrap.dedent(
        f"""
        import os, signal
        from tooldeck.core.result import ToolResult
        from tooldeck.observability import AuditStore
        store = AuditStore.sqlite({str(db)!r}, durability="ack", flush_interval_s=60)
        for i in range(50):
            result = ToolResult.ok({{"i": i, "token": "sk-abcdefghijklmnopqrstuvwx"}})
            meta = result.metadata.model_copy(update={{"request_id": f"k{{i}}"}})
            result = result.model_copy(update={{"metadata": meta}})
            assert store.record_acked("quote", {{"password": "hunter2"}}, None, result).result()
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], check=False, timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert stored(db) == [] and sum(segments(db).values()) > 0
    journal_text = "".join(p.read_text() for p in db.with_suffix(".journal").glob("*.jsonl"))
    assert "hunter2" not in journal_text and "sk-abc" not in journal_text  # redacted first

    AuditStore.sqlite(db).close()  # the next start
    assert stored(db) == [f"k{i}" for i in range(50)]
    assert segments(db) == {}
    AuditStore.sqlite(db).close()  # and once more: nothing is stored twice
    assert len(stored(db)) == 50


def test_a_segment_found_again_after_its_rows_were_stored_is_not_stored_twice(
    tmp_path: Path,
) -> None:
    """A crash between the commit and the deletion of the segment leaves both."""
    db = tmp_path / "audit.db"
    store = AuditStore.sqlite(db, durability="ack", flush_interval_s=60)
    acked(store, "once")
    ((name, _),) = segments(db).items()
    copy = tmp_path / name
    shutil.copy(db.with_suffix(".journal") / name, copy)
    store.flush()
    store.close()
    shutil.copy(copy, db.with_suffix(".journal") / name)  # as if the deletion never happened
    AuditStore.sqlite(db).close()
    assert stored(db) == ["once"]
    assert segments(db) == {}


def test_a_live_process_journal_is_left_to_its_owner(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    owner = AuditStore.sqlite(db, durability="ack", flush_interval_s=60)
    acked(owner, "mine")
    other = AuditStore.sqlite(db)  # another tooldeck process opening the same database
    try:
        assert other.count() == 0  # the segment is locked by its owner: not taken
        assert sum(segments(db).values()) > 0
        owner.close()
        assert other.count() == 1
    finally:
        other.close()
    assert stored(db) == ["mine"]


def test_without_a_journal_acknowledged_records_wait_for_the_commit(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    db.with_suffix(".journal").write_text("a file where the folder would be")
    store = AuditStore.sqlite(db, durability="ack", flush_interval_s=60)
    try:
        future = store.record_acked("quote", {}, None, answer("slow"))
        assert future.result(timeout=5) is True  # the writer was woken and committed it
        assert stored(db) == ["slow"]
    finally:
        store.close()


def test_a_journal_folder_others_may_write_is_not_used(tmp_path: Path) -> None:
    """Files another user could put there would be stored as this user's calls."""
    db = tmp_path / "audit.db"
    folder = db.with_suffix(".journal")
    folder.mkdir()
    folder.chmod(0o777)
    planted = folder / "1-planted-000001.jsonl"
    planted.write_text('["2026-11-26 02:00:00.000000","rm_rf","success"]\n')
    store = AuditStore.sqlite(db, durability="ack")
    try:
        future = store.record_acked("quote", {}, None, answer("mine"))
        assert future.result(timeout=5) is True  # committed instead of journalled
        assert stored(db) == ["mine"] and planted.exists()
    finally:
        store.close()


def test_a_row_larger_than_a_segment_grows_it_and_is_stored(tmp_path: Path) -> None:
    from tooldeck.core.result import ToolError, ToolResult
    from tooldeck.observability.journal import SEGMENT_BYTES

    db = tmp_path / "audit.db"
    store = AuditStore.sqlite(db, durability="ack", flush_interval_s=60)
    try:
        message = "x" * (SEGMENT_BYTES * 2)  # an error message is kept whole
        failed = ToolResult(status="error", error=ToolError(type="execution", message=message))
        assert store.record_acked("quote", {}, None, failed).result() is True
        assert max(segments(db).values()) > SEGMENT_BYTES * 2  # grown, on disk
        acked(store, "after")
        store.flush()
        with sqlite3.connect(db) as conn:
            lengths = conn.execute("SELECT length(error_message) FROM tool_calls").fetchall()
        assert lengths == [(SEGMENT_BYTES * 2,), (None,)]
    finally:
        store.close()


def test_garbage_in_a_dead_process_segment_goes_to_the_fallback_file(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    AuditStore.sqlite(db).close()
    folder = db.with_suffix(".journal")
    good = AuditStore.sqlite(tmp_path / "other.db", durability="ack", flush_interval_s=60)
    acked(good, "kept")
    ((name, _),) = segments(tmp_path / "other.db").items()
    line = (tmp_path / "other.journal" / name).read_bytes().split(b"\0", 1)[0]
    good.close()
    (folder / "999-dead-000001.jsonl").write_bytes(
        line + b"not json at all\n" + b'["too","short"]\n' + b'["cut off in the mid'
    )
    AuditStore.sqlite(db).close()
    assert stored(db) == ["kept"]
    fallback = (tmp_path / "audit.fallback.jsonl").read_text()
    assert "not json at all" in fallback and "too" in fallback and "cut off" not in fallback
    assert segments(db) == {}
