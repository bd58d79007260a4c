from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tooldeck.core import ToolContext, tool
from tooldeck.observability import AuditStore, redact
from tooldeck.providers import ToolRegistry

pytestmark = pytest.mark.anyio


@tool(source_id="tool:login:v1")
def login(user: str, password: str, api_key: str = "") -> dict[str, str]:
    """Pretend to log in."""
    return {"user": user, "as_of": "2026-01-15"}


async def test_every_call_is_recorded_in_a_real_sqlite_file(tmp_path: Path) -> None:
    db = tmp_path / "audit" / "audit.db"
    store = AuditStore.sqlite(db)
    stack = ToolRegistry([login]).with_policies().observed(store)
    ctx = ToolContext(session_id="s1", run_id="r1", user="ada", profile="demo", request_id="req-1")
    await stack.execute(
        "login",
        '{"user": "ada", "password": "hunter2", "api_key": "sk-abcdefghijklmnopqrstuv"}',
        ctx,
    )
    await stack.execute("login", {"user": 5})
    await stack.execute("nope", {})
    store.close()

    rows = (
        sqlite3.connect(db)
        .execute(
            "select tool_name, status, error_type, arguments, source_id, as_of, request_id, session_id, run_id, "
            "user, profile, attempts from tool_calls order by id"
        )
        .fetchall()
    )
    assert [r[:3] for r in rows] == [
        ("login", "success", None),
        ("login", "error", "validation"),
        ("nope", "error", "not_found"),
    ]
    assert json.loads(rows[0][3]) == {"user": "ada", "password": "***", "api_key": "***"}
    assert rows[0][4:] == ("tool:login:v1", "2026-01-15", "req-1", "s1", "r1", "ada", "demo", 1)


async def test_records_survive_reopening_and_filter(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    first = AuditStore.sqlite(db)
    stack = ToolRegistry([login]).observed(first)
    for i in range(5):
        await stack.execute("login", {"user": f"u{i}", "password": "x"})
    await stack.execute("login", {})
    first.close()

    second = AuditStore.sqlite(db)
    assert second.count() == 6
    newest = second.query(limit=2)
    assert [r.arguments for r in newest] == [{}, {"user": "u4", "password": "***"}]
    errors = second.query(status="error")
    assert len(errors) == 1 and errors[0].error_type == "validation"
    assert errors[0].error_details["errors"][0]["field"] == "user"
    assert second.query(tool="other") == []
    second.close()


async def test_a_refused_batch_goes_to_the_fallback_file(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    store = AuditStore.sqlite(db)
    stack = ToolRegistry([login]).observed(store)
    with sqlite3.connect(db) as conn:
        conn.execute("drop table tool_calls")
    await stack.execute("login", {"user": "ada", "password": "x"})
    store.flush()
    lines = store.fallback_path.read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["tool_name"] == "login"
    store.close()


def test_redaction_by_key_and_by_value() -> None:
    value = {
        "Authorization": "Bearer abc",
        "nested": [{"token": 1, "note": "ghp_" + "a" * 30}, "plain"],
        "db_password": "p",
        "query": "AAPL",
    }
    assert redact(value) == {
        "Authorization": "***",
        "nested": [{"token": "***", "note": "***"}, "plain"],
        "db_password": "***",
        "query": "AAPL",
    }


def test_a_bad_record_fails_alone_and_deep_values_leave_a_marker(tmp_path: Path) -> None:
    from tooldeck.core.result import ToolResult

    store = AuditStore.sqlite(tmp_path / "audit.db")
    ok = ToolResult.ok({"n": 1})
    deep: dict[str, object] = {}
    for _ in range(5000):
        deep = {"a": deep}
    store.record("first", {"x": 1}, None, ok)
    store.record("surrogate", {"text": "\ud800"}, None, ToolResult.ok({"echo": "\udfff"}))
    store.record("deep", deep, None, ok)
    store.record("last", {"x": 2}, None, ok)
    store.flush()
    rows = {r.tool_name: r for r in store.query(limit=10)}
    store.close()
    assert set(rows) == {"first", "surrogate", "deep", "last"}  # none lost, none diverted
    assert rows["surrogate"].arguments == {"text": "\ud800"}  # kept as a JSON escape
    assert "_unrecorded" in rows["deep"].arguments
    assert not (tmp_path / "audit.fallback.jsonl").exists()


def test_large_arguments_and_data_are_stored_as_size_hash_and_head(tmp_path: Path) -> None:
    import hashlib

    from tooldeck.core.result import ToolResult

    store = AuditStore.sqlite(tmp_path / "audit.db")
    body = json.dumps({"blob": "z" * 5_000_000})
    store.record("t", body, None, ToolResult.ok({"echo": "q" * 200_000}))
    store.flush()
    (record,) = store.query(limit=1)
    store.close()
    assert record.arguments["_truncated"] is True
    assert record.arguments["size_bytes"] == len(body)
    assert record.arguments["sha256"] == hashlib.sha256(body.encode()).hexdigest()
    assert record.arguments["head"].startswith('{"blob": "zzz')
    assert record.data["_truncated"] is True and record.data["size_bytes"] > 200_000
    assert (tmp_path / "audit.db").stat().st_size < 1_000_000


def test_processes_starting_together_on_a_new_project_all_open_the_audit(
    tmp_path: Path,
) -> None:
    """A desktop client's ``tooldeck mcp`` beside ``tooldeck serve``: both create the schema."""
    import subprocess
    import sys
    import time

    opener = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from tooldeck.observability.audit import AuditStore\n"
        "while time.time() < float(sys.argv[2]): pass\n"
        "AuditStore.sqlite(Path(sys.argv[1]) / 'audit.db').close()\n"
    )
    for round_ in range(3):
        folder = tmp_path / f"project{round_}"
        folder.mkdir()
        start = str(time.time() + 2.0)  # every process past its imports by then
        processes = [
            subprocess.Popen(
                [sys.executable, "-c", opener, str(folder), start],
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(3)
        ]
        ended = [(p.communicate(timeout=60)[1], p.returncode) for p in processes]
        assert [code for _, code in ended] == [0, 0, 0], [err[-600:] for err, _ in ended]


def test_record_times_read_back_in_utc_with_their_offset(tmp_path: Path) -> None:
    """RFC 3339 ``date-time`` needs the offset (the REST schema says ``format: date-time``)."""
    from datetime import UTC, datetime, timedelta

    from tooldeck.core.result import ToolResult

    store = AuditStore.sqlite(tmp_path / "audit.db", durability="ack")
    try:
        store.record_acked("t", {}, None, ToolResult.ok(1))
        store.record("t", {}, None, ToolResult.ok(2))
        records = store.query()
    finally:
        store.close()
    for record in records:
        assert record.created_at.utcoffset() == timedelta(0)
        assert abs(datetime.now(UTC) - record.created_at) < timedelta(minutes=5)
        assert record.model_dump(mode="json")["created_at"].endswith("Z")
