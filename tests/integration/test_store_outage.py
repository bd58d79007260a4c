"""PostgreSQL stopped and started again under a running ``tooldeck serve`` (issue 31, part 6).

While the shared store is away, every request that needs it answers with an envelope
(a tool call's ``unavailable`` error, a 503 Problem for the other routes), never a bare
500 and never a hang; a gated tool does not run. When the server is back, the same
process serves every route again by itself, without a restart.
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from processes import Server, confirming_project, free_port

from deadlines import scaled, wait_until

pytestmark = pytest.mark.integration

TOOLS = '''

@tool
def add(a: int, b: int) -> dict:
    """Add two numbers.

    Args:
        a: One.
        b: The other.
    """
    return {"sum": a + b}
'''

READS = ["/api/approvals", "/api/schedules", "/api/runs", "/api/audit", "/api/stats"]


def test_a_server_answers_unavailable_while_postgres_is_away_and_recovers(
    tmp_path: Path,
) -> None:
    from integration.postgres import postgres_cluster

    with postgres_cluster() as cluster:
        config = confirming_project(tmp_path / "app", f'[store]\nurl = "{cluster.url}"\n')
        with (tmp_path / "app" / "tools.py").open("a") as tools:
            tools.write(TOOLS)
        server = Server(
            tmp_path / "data", free_port(), ["--config", str(config), "--with", "schedules"]
        )
        try:
            with httpx.Client(base_url=server.url, timeout=60) as client:
                assert client.post("/api/tools/execute/add", json={"a": 1, "b": 2}).json()[
                    "data"
                ] == {"sum": 3}
                for path in READS:
                    assert client.get(path).status_code == 200, path

                cluster.stop()
                gated = client.post("/api/tools/execute/delete_note", json={"name": "x"})
                assert gated.status_code == 503, gated.text  # the envelope, as a 503
                assert gated.json()["error"]["type"] == "unavailable", gated.text
                assert gated.json()["error"]["retryable"] is True
                assert (
                    str(cluster.port) not in gated.text
                )  # the database's address stays in the log
                for path in READS:
                    started = time.monotonic()
                    got = client.get(path)
                    assert got.status_code == 503, (path, got.status_code, got.text)
                    assert "cannot be reached" in got.json()["detail"], got.text
                    assert f":{cluster.port}" not in got.text and "port" not in got.text
                    assert "Traceback" not in got.text
                    assert time.monotonic() - started < scaled(15), path
                for n in range(3):  # journalled here, stored once the database is back
                    away = client.post("/api/tools/execute/add", json={"a": n, "b": 10})
                    assert away.json()["data"] == {"sum": n + 10}, away.text
                made = client.post(
                    "/api/schedules",
                    json={"name": "n", "tool": "add", "arguments": {"a": 1, "b": 1},
                          "every": "1h"},
                )  # fmt: skip
                assert made.status_code in (200, 503), made.text
                assert made.status_code == 503 or made.json()["error"]["type"] == "unavailable"

                cluster.start()  # the same process serves again, by itself

                def answers() -> bool:
                    return all(client.get(path).status_code == 200 for path in READS)

                wait_until(answers, "every route to answer again", 60)
                again = client.post("/api/tools/execute/add", json={"a": 2, "b": 2}).json()
                assert again["data"] == {"sum": 4}, again
                asked = client.post("/api/tools/execute/delete_note", json={"name": "y"}).json()
                assert asked["error"]["type"] == "confirmation_required", asked

                def stored() -> bool:
                    records = client.get("/api/audit", params={"tool": "add"}).json()["records"]
                    return len(records) == 5  # 1 before, 3 while away, 1 after: none lost

                wait_until(stored, "the calls made while away to be stored", 30)
                pending = client.get("/api/approvals").json()
                assert [p["approval_id"] for p in pending] == [
                    asked["error"]["details"]["approval_id"]
                ]
        finally:
            assert server.stop() == 0
    log = Path(server.log.name).read_text()
    assert "Traceback" not in log, log[-3000:]


@pytest.mark.anyio
async def test_a_live_run_is_not_taken_for_dead_after_the_database_comes_back(
    tmp_path: Path,
) -> None:
    """While PostgreSQL is away no replica can renew a lease; when it is back, replica B
    waits a lease's time before failing runs, so replica A (renewing at its first look)
    keeps its live run. A run nobody renews is still failed after that."""
    import asyncio
    from datetime import UTC, datetime

    from integration.postgres import postgres_cluster
    from tooldeck.agent.stored_runs import StoredRuns
    from tooldeck.core.migrations import sqlalchemy_url
    from tooldeck.observability import AuditStore
    from tooldeck.observability.runs import RunStore
    from tooldeck.providers.approvals import ApprovalStore

    lease_s = 2.0
    with postgres_cluster() as cluster:
        audit_a = AuditStore(sqlalchemy_url(cluster.url), journal_dir=tmp_path / "a")
        audit_b = AuditStore(sqlalchemy_url(cluster.url), journal_dir=tmp_path / "b")
        a, b = RunStore(audit_a.engine), RunStore(audit_b.engine)
        now = datetime.now(UTC).isoformat()
        for run_id in ("run_live", "run_dead"):  # A runs the first; nobody the second
            a.save(
                {"run_id": run_id, "state": "running", "question": "q", "created_at": now,
                 "updated_at": now, "last_seq": 1},
                {"run_id": run_id, "seq": 1, "type": "run.created", "timestamp": now, "data": {}},
            )  # fmt: skip
        on_a = StoredRuns(a, ApprovalStore(), lease_s=lease_s)
        on_b = StoredRuns(b, ApprovalStore(), lease_s=lease_s)

        async def nothing(run_id: str, reason: str) -> None:
            """No run is cancelled here."""

        keepers = [  # A runs run_live and looks every second; B runs none, looks often
            asyncio.create_task(on_a.keep(lambda: ["run_live"], nothing, poll_s=1.0)),
            asyncio.create_task(on_b.keep(list, nothing, poll_s=0.1)),
        ]
        try:
            await asyncio.sleep(0.5)
            await asyncio.to_thread(cluster.stop)
            await asyncio.sleep(lease_s + 1.5)  # every lease runs out; every look fails
            await asyncio.to_thread(cluster.start)
            await asyncio.sleep(lease_s + 1.5)  # B's grace, then run_dead's lease is over
            states = {r: (await on_b.get(r)).state for r in ("run_live", "run_dead")}
        finally:
            for keeper in keepers:
                keeper.cancel()
            await asyncio.gather(*keepers, return_exceptions=True)
            audit_a.close()
            audit_b.close()
    assert states == {"run_live": "running", "run_dead": "failed"}, states
