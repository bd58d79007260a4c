"""Approvals in a SQLite file, shared by the processes of one data dir."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

import pytest

from tooldeck.core.context import ToolContext
from tooldeck.exceptions import ConfigError
from tooldeck.providers.approvals import ApprovalStore, Decider


def ask(store: ApprovalStore, tool: str = "delete", **arguments: object) -> str:
    request = store.new_request(tool, arguments, ToolContext(user="ann", channel="mcp:stdio-1"))
    return store.request(request).request.approval_id


def test_a_decision_made_through_one_store_is_taken_by_another(tmp_path: Path) -> None:
    path = tmp_path / "data" / "approvals.db"
    server, terminal = ApprovalStore(path=path), ApprovalStore(path=path)
    approval_id = ask(server, name="x")
    [pending] = terminal.pending()
    assert pending.request.approval_id == approval_id
    assert pending.request.arguments == {"name": "x"}
    terminal.approve(approval_id, by=Decider(principal="t", channel="cli", privileged=True))
    again = server.new_request("delete", {"name": "x"}, ToolContext(user="ann"))
    taken = server.take(again)
    assert taken is not None and taken.status == "approved"
    assert server.take(again) is None  # one approval, one call
    assert terminal.get(approval_id).status == "used"  # type: ignore[union-attr]
    assert (path.stat().st_mode & 0o777, path.parent.stat().st_mode & 0o777) == (0o600, 0o700)


def test_pending_approvals_outlive_the_process_that_asked(tmp_path: Path) -> None:
    path = tmp_path / "approvals.db"
    first = ApprovalStore(path=path)
    approval_id = ask(first, name="x")
    first.close()
    assert [a.request.approval_id for a in ApprovalStore(path=path).pending()] == [approval_id]


@pytest.mark.anyio
async def test_a_waiter_sees_another_process_decide(tmp_path: Path) -> None:
    path = tmp_path / "approvals.db"
    server, terminal = ApprovalStore(path=path), ApprovalStore(path=path)
    approval_id = ask(server)
    started = time.monotonic()
    waiting = asyncio.create_task(server.decided(approval_id, timeout_s=20))
    await asyncio.sleep(0.2)
    terminal.deny(approval_id, "not today")
    decided = await waiting
    assert decided.status == "denied" and decided.decision.message == "not today"  # type: ignore[union-attr]
    assert time.monotonic() - started < 5
    with pytest.raises(TimeoutError):
        await server.decided(ask(server, name="other"), timeout_s=0.3)


def test_a_file_others_may_write_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "approvals.db"
    ApprovalStore(path=path).close()
    path.chmod(0o666)
    with pytest.raises(ConfigError, match="may be written by group or others"):
        ApprovalStore(path=path)
    path.chmod(0o600)
    tmp_path.chmod(0o777)
    with pytest.raises(ConfigError, match="chmod go-w"):
        ApprovalStore(path=path)
    tmp_path.chmod(0o700)


def test_a_row_it_cannot_read_is_kept_and_skipped(tmp_path: Path) -> None:
    path = tmp_path / "approvals.db"
    store = ApprovalStore(path=path)
    approval_id = ask(store)
    with sqlite3.connect(path) as db:
        db.execute(
            "INSERT INTO approval_requests VALUES "
            "('future', 'pending', 'k', 9e18, '{\"request\": {\"v\": 2}}')"
        )
    assert [a.request.approval_id for a in store.pending()] == [approval_id]
    store.deny(approval_id)
    with sqlite3.connect(path) as db:
        found = db.execute("SELECT count(*) FROM approval_requests WHERE id = 'future'")
        assert found.fetchone() == (1,)


def test_expiry_reaches_every_process_and_old_approvals_go(tmp_path: Path) -> None:
    now = [1000.0]
    path = tmp_path / "approvals.db"
    server = ApprovalStore(ttl_s=60, clock=lambda: now[0], path=path)
    terminal = ApprovalStore(ttl_s=60, clock=lambda: now[0], path=path)
    approval_id = ask(server)
    now[0] += 61
    assert terminal.pending() == [] and terminal.get(approval_id).status == "expired"  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="already expired"):
        terminal.approve(approval_id)
    now[0] += 61  # one more ttl: gone from the file
    assert server.get(approval_id) is None
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM approval_requests").fetchone() == (0,)


def test_not_a_database_says_which_file(tmp_path: Path) -> None:
    path = tmp_path / "approvals.db"
    path.write_bytes(b"this is not sqlite" * 100)
    path.chmod(0o600)
    with pytest.raises(ConfigError, match=str(path)):
        ApprovalStore(path=path)
