"""A real ``tooldeck serve`` process on 127.0.0.1: the README's calls, a restart, the audit log."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from processes import Server, env_for, free_port

pytestmark = pytest.mark.integration


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def server(data_dir: Path) -> Iterator[Server]:
    s = Server(data_dir, free_port())
    yield s
    s.stop()


def test_readme_calls_then_audit_survives_a_restart(server: Server, data_dir: Path) -> None:
    ok = httpx.post(f"{server.url}/api/tools/execute/get_positions", json={"symbol": "AAPL"})
    assert ok.status_code == 200
    body = ok.json()
    assert body["source_id"] == "tool:positions:v1" and body["as_of"] == "2026-11-20"
    assert (
        body["data"]["positions"][0]["symbol"] == "AAPL"
        and body["metadata"]["tool_name"] == "get_positions"
    )

    missing = httpx.post(f"{server.url}/api/tools/execute/get_positons", json={})
    assert missing.status_code == 404 and missing.json()["error"]["type"] == "not_found"
    bad = httpx.post(f"{server.url}/api/tools/execute/get_positions", json={"symbol": 5})
    assert (
        bad.status_code == 422 and bad.json()["error"]["details"]["errors"][0]["field"] == "symbol"
    )

    assert server.stop() == 0  # graceful: the audit store is flushed on shutdown
    assert (
        '"POST /api/tools/execute/get_positions HTTP/1.1" 200' in Path(server.log.name).read_text()
    )

    audit = subprocess.run(
        [sys.executable, "-m", "tooldeck", "audit", "--json"],
        env=env_for(data_dir),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    records = [json.loads(line) for line in audit.stdout.splitlines()]
    assert [(r["tool_name"], r["status"], r["error_type"]) for r in records] == [
        ("get_positions", "error", "validation"),
        ("get_positons", "error", "not_found"),
        ("get_positions", "success", None),
    ]

    again = Server(data_dir, free_port(), env={"TOOLDECK_SERVER__ACCESS_LOG": "false"})
    try:
        httpx.get(f"{again.url}/api/quotes", params={"symbol": "VOO"}).raise_for_status()
    finally:
        assert again.stop() == 0
    log = Path(again.log.name).read_text()
    assert "Uvicorn running" in log and "GET /api/quotes" not in log  # no access log
    audit = subprocess.run(
        [sys.executable, "-m", "tooldeck", "audit", "--json", "--limit", "10"],
        env=env_for(data_dir),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert len(audit.stdout.splitlines()) == 4
