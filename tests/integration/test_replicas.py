"""Replicas on one PostgreSQL (issue 31, part 1): real ``tooldeck serve`` processes.

Two servers with their own data dirs (two machines, as far as they know) share
``[store] url``: a call asked on one is approved on the other and runs where it is
repeated, once; each one's history shows the other's calls; a schedule made on one is
listed by the other; a chat run started on one is streamed, confirmed and cancelled
on the other, and failed by it when the first is killed. Replicas started at the same moment on a new database migrate it
once, without an error, and a server that cannot reach the database says so and stops.
"""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from processes import Server, confirming_project, env_for, free_port, tooldeck
from scripted_openai import ScriptedModel, text, tool_calls

from deadlines import wait_until

pytestmark = pytest.mark.integration

EFFECT = '''

@tool(requires_confirmation=True)
def pay(to: str, cents: int) -> dict:
    """Pay someone (one line in paid.txt).

    Args:
        to: Who.
        cents: How much, in cents.
    """
    from pathlib import Path

    with (Path(__file__).parent / "paid.txt").open("a") as out:
        out.write(f"{to} {cents}\\n")
    return {"paid": to, "cents": cents}
'''


def project(folder: Path, url: str) -> Path:
    """A project serving ``pay`` (needs approval) with ``[store] url``."""
    config = confirming_project(folder, f'[store]\nurl = "{url}"\n')
    with (folder / "tools.py").open("a") as tools:
        tools.write(EFFECT)
    return config


def test_an_approval_given_on_one_replica_runs_on_the_other(
    tmp_path: Path, postgres_db: str
) -> None:
    with_password = postgres_db.replace("postgres@", "postgres:hunter2@", 1)  # trust: any
    config = project(tmp_path / "app", with_password)
    a = Server(tmp_path / "a", free_port(), ["--config", str(config), "--with", "schedules"])
    try:
        b = Server(tmp_path / "b", free_port(), ["--config", str(config), "--with", "schedules"])
        try:
            with (
                httpx.Client(base_url=a.url, timeout=30) as on_a,
                httpx.Client(base_url=b.url, timeout=30) as on_b,
            ):
                for to, asked, approver, runner in (
                    ("ana", on_a, on_b, on_b),  # asked on A, approved on B, runs on B
                    ("bob", on_b, on_a, on_b),  # asked on B, approved on A, runs on B
                ):
                    args = {"to": to, "cents": 100}
                    key = {"Idempotency-Key": f"pay-{to}"}
                    first = asked.post("/api/tools/execute/pay", json=args, headers=key).json()
                    assert first["error"]["type"] == "confirmation_required", first
                    waiting = [w["approval_id"] for w in approver.get("/api/approvals").json()]
                    assert waiting == [first["error"]["details"]["approval_id"]]
                    decided = approver.post(f"/api/approvals/{waiting[0]}/approve", json={})
                    assert decided.status_code == 200, decided.text
                    for _ in range(3):  # a client retrying: the receipt answers
                        done = runner.post("/api/tools/execute/pay", json=args, headers=key)
                        assert done.json()["data"] == {"paid": to, "cents": 100}
                assert (tmp_path / "app" / "paid.txt").read_text() == "ana 100\nbob 100\n"
                histories: list[list[Any]] = []

                def shared() -> bool:  # each replica's writer stores its batch (0.2 s)
                    histories[:] = [
                        s.get("/api/audit", params={"tool": "pay"}).json()["records"]
                        for s in (on_a, on_b)
                    ]
                    return len(histories[0]) == 8 and histories[0] == histories[1]

                wait_until(shared, "one history: each replica shows both replicas' calls", 10)
                statuses = sorted(r["status"] for r in histories[0])
                assert statuses == ["error"] * 2 + ["success"] * 6  # 2 asked, 2 ran, 4 retries
                made = on_a.post(
                    "/api/schedules",
                    json={"name": "nightly", "tool": "delete_note",
                          "arguments": {"name": "tmp"}, "cron": "0 3 * * *"},
                )  # fmt: skip
                assert "error" in made.json(), made.text
                approval = made.json()["error"]["details"]["approval_id"]
                assert on_b.post(f"/api/approvals/{approval}/approve", json={}).status_code == 200
                again = on_a.post(
                    "/api/schedules",
                    json={"name": "nightly", "tool": "delete_note",
                          "arguments": {"name": "tmp"}, "cron": "0 3 * * *"},
                )  # fmt: skip
                assert again.status_code == 200, again.text
                assert [s["name"] for s in on_b.get("/api/schedules").json()] == ["nightly"]
        finally:
            assert b.stop() == 0
    finally:
        assert a.stop() == 0
    banner = Path(a.log.name).read_text()  # the password is not in the log
    assert "audit: postgresql+psycopg://postgres:***@127.0.0.1" in banner
    assert "hunter2" not in banner


def test_replicas_starting_at_once_migrate_a_new_database_once(
    tmp_path: Path, postgres_db: str
) -> None:
    opener = (
        "import sys\n"
        "from pathlib import Path\n"
        "from tooldeck.providers.approvals import ApprovalStore\n"
        "from tooldeck.packs.schedules.store import ScheduleStore\n"
        "from tooldeck.core.migrations import sqlalchemy_url\n"
        "from tooldeck.observability import AuditStore\n"
        "AuditStore(sqlalchemy_url(sys.argv[1])).close()\n"
        "ApprovalStore(url=sys.argv[1]).close()\n"
        "ScheduleStore(Path('unused'), sys.argv[1]).close()\n"
        "from tooldeck.providers.receipt_postgres import PostgresReceipts\n"
        "PostgresReceipts(sys.argv[1]).get('k')\n"
    )
    starts = [
        subprocess.Popen(
            [sys.executable, "-c", opener, postgres_db],
            stderr=subprocess.PIPE,
            text=True,
            env=env_for(tmp_path / f"d{i}"),
        )
        for i in range(6)
    ]
    errors = [p.communicate(timeout=120)[1] for p in starts]
    assert [p.returncode for p in starts] == [0] * 6, errors
    with psycopg.connect(postgres_db) as conn:
        versions = conn.execute(
            "select 'approvals', version_num from tooldeck.alembic_approvals union all "
            "select 'audit', version_num from tooldeck.alembic_audit union all "
            "select 'receipts', version_num from tooldeck.alembic_receipts union all "
            "select 'schedules', version_num from tooldeck.alembic_schedules order by 1"
        ).fetchall()
    assert versions == [
        ("approvals", "approvals_0001"), ("audit", "audit_0001"), ("receipts", "receipts_0001"),
        ("schedules", "schedules_0001"),
    ]  # fmt: skip
    with psycopg.connect(postgres_db) as conn:  # as a newer tooldeck would leave it
        conn.execute("update tooldeck.alembic_approvals set version_num = 'approvals_9999'")
    newer = subprocess.run(
        [sys.executable, "-c", opener, postgres_db], capture_output=True, text=True,
        env=env_for(tmp_path / "late"), timeout=120,
    )  # fmt: skip
    assert newer.returncode == 1
    assert "ConfigError: cannot open the approvals store" in newer.stderr
    assert "approvals_9999" in newer.stderr


def test_a_replica_that_cannot_reach_the_database_says_so(tmp_path: Path) -> None:
    closed = f"postgresql://tooldeck:secret@127.0.0.1:{free_port()}/tooldeck"
    config = project(tmp_path / "app", closed)
    done = tooldeck(
        "serve", "--config", str(config), "--port", str(free_port()),
        cwd=tmp_path, env=env_for(tmp_path / "data"),
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "cannot open the" in done.stderr and "127.0.0.1" in done.stderr
    assert "secret" not in done.stderr + done.stdout  # the password is not printed


def reply(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model: ``pay NAME`` pays NAME 100 cents; after the result, done."""
    messages = body["messages"]
    if messages[-1]["role"] == "tool":
        return text("Done.")
    to = messages[-1]["content"].removeprefix("pay ")
    return tool_calls(("call_1", "pay", {"to": to, "cents": 100}))


def sse_types(client: httpx.Client, run_id: str) -> list[str]:
    """The event types of a run's stream, read until the server ends it."""
    with client.stream("GET", f"/api/runs/{run_id}/events", timeout=60) as stream:
        return [
            line.removeprefix("event:").strip()
            for line in stream.iter_lines()
            if line.startswith("event:")
        ]


def test_a_run_started_on_one_replica_is_served_by_the_other(
    tmp_path: Path, postgres_db: str
) -> None:
    with ScriptedModel([reply]).serve() as model_url:
        config = project(tmp_path / "app", postgres_db)
        with config.open("a") as out:
            out.write(
                f'[agent]\nmodel = "scripted"\nbase_url = "{model_url}"\napi_key = "x"\n'
                "[runs]\nlease_s = 2\n"
            )
        a = Server(tmp_path / "a", free_port(), ["--config", str(config)])
        b = Server(tmp_path / "b", free_port(), ["--config", str(config)])
        try:
            with (
                httpx.Client(base_url=a.url, timeout=60) as on_a,
                httpx.Client(base_url=b.url, timeout=60) as on_b,
            ):
                asked = on_a.post("/api/chat", json={"question": "pay ana"})
                assert asked.status_code == 202, asked.text
                run_id = asked.json()["run_id"]
                assert on_b.get(f"/api/runs/{run_id}").json()["state"] == "waiting_input"
                with ThreadPoolExecutor(1) as pool:
                    followed = pool.submit(sse_types, on_b, run_id)  # from B, while A runs it
                    confirmed = on_b.post(f"/api/runs/{run_id}/confirm", json={"approve": True})
                    assert confirmed.status_code == 200, confirmed.text
                    assert confirmed.json()["state"] == "completed"
                    assert followed.result(timeout=60)[-3:] == [
                        "tool_call.completed", "message.delta", "run.completed",
                    ]  # fmt: skip
                assert on_a.get(f"/api/runs/{run_id}").json()["state"] == "completed"

                second = on_a.post("/api/chat", json={"question": "pay bob"}).json()["run_id"]
                cancelled = on_b.post(f"/api/runs/{second}/cancel")
                assert cancelled.status_code == 200, cancelled.text
                assert cancelled.json()["state"] == "cancelled"
                assert on_a.get(f"/api/runs/{second}").json()["state"] == "cancelled"
                again = on_b.post(f"/api/runs/{second}/cancel")
                assert again.status_code == 409

                third = on_a.post("/api/chat", json={"question": "pay eve"}).json()["run_id"]
                a.proc.kill()  # SIGKILL with a run waiting: B fails it once its lease runs out
                a.proc.wait()
                assert sse_types(on_b, third)[-1] == "run.failed"
                assert "interrupted" in on_b.get(f"/api/runs/{third}").json()["error"]
            assert (tmp_path / "app" / "paid.txt").read_text() == "ana 100\n"
        finally:
            a.stop()
            assert b.stop() == 0


@pytest.mark.anyio
async def test_runs_and_approvals_listen_on_the_store(tmp_path: Path, postgres_db: str) -> None:
    from tooldeck.config import load_settings
    from tooldeck.runtime import build_runtime

    runtime = build_runtime(load_settings(data_dir=tmp_path, store={"url": postgres_db}))
    try:
        listening = runtime.approvals.notifications
        assert listening is not None and listening.url == postgres_db
        assert runtime.runs._stored is not None  # type: ignore[attr-defined]
        assert runtime.runs._stored.notifications is listening  # type: ignore[attr-defined]
    finally:
        await runtime.aclose()


@pytest.mark.anyio
async def test_a_gated_call_when_the_database_goes_away_does_not_run(tmp_path: Path) -> None:
    from integration.postgres import postgres_server
    from tooldeck.config import load_settings
    from tooldeck.runtime import build_runtime

    with postgres_server() as url:
        config = project(tmp_path / "app", url)
        runtime = build_runtime(load_settings(config, data_dir=tmp_path / "data"))
    try:  # the server has stopped: the approvals cannot be read
        ctx = runtime.context(channel="rest")
        result = await runtime.provider.execute("pay", {"to": "eve", "cents": 1}, ctx)
        assert result.error is not None and result.error.type == "unavailable"
        assert "did not run" in result.error.message
        assert not (tmp_path / "app" / "paid.txt").exists()
    finally:
        await runtime.aclose()
