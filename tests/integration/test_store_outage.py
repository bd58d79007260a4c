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
                for path in READS:
                    started = time.monotonic()
                    got = client.get(path)
                    assert got.status_code == 503, (path, got.status_code, got.text)
                    assert "cannot be reached" in got.json()["detail"], got.text
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
