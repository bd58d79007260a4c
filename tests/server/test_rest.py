from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from dirty_equals import IsFloat, IsStr
from fastapi.testclient import TestClient

from tooldeck.config import load_settings
from tooldeck.core import tool
from tooldeck.exceptions import ToolUnavailableError
from tooldeck.providers import PolicyConfig, PolicyOverride
from tooldeck.runtime import Runtime, build_runtime
from tooldeck.server.app import create_app


@tool(name="slow_one")
async def slow_one() -> str:
    """Never finishes in time."""
    await asyncio.sleep(5)
    return "late"


@tool(name="explodes")
def explodes() -> str:
    """Always fails."""
    raise ValueError("kaboom")


@tool(name="down")
def down() -> str:
    """Its service is down."""
    raise ToolUnavailableError("quote service unreachable")


def make_runtime(**overrides: object) -> Runtime:
    policy = PolicyConfig(
        max_attempts=1,
        failure_threshold=2,
        tools={"slow_one": PolicyOverride(timeout_s=0.05)},
    )
    runtime = build_runtime(load_settings(policy=policy, **overrides))  # type: ignore[arg-type]
    for extra in (slow_one, explodes, down):
        runtime.registry.register(extra)
    return runtime


@pytest.fixture
def client() -> Iterator[TestClient]:
    runtime = make_runtime()
    with TestClient(create_app(runtime), base_url="http://127.0.0.1") as c:
        yield c


def test_execute_success_envelope(client: TestClient) -> None:
    response = client.post("/api/tools/execute/get_positions", json={"symbol": "AAPL"})
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "success" and body["success"] is True
    assert body["source_id"] == "tool:positions:v1"
    assert body["as_of"] == "2026-11-20"
    assert [p["symbol"] for p in body["data"]["positions"]] == ["AAPL", "AAPL"]
    assert body["metadata"] == {
        "tool_name": "get_positions",
        "tool_version": "1.0.0",
        "request_id": IsStr(min_length=3),
        "duration_ms": IsFloat(ge=0),
        "attempts": 1,
        "provider": "local",
    }


@pytest.mark.parametrize(
    ("name", "body", "status", "error_type"),
    [
        ("nope", {}, 404, "not_found"),
        ("get_positions", {"symbol": 5}, 422, "validation"),
        ("get_positions", "not json", 422, "validation"),
        ("slow_one", {}, 504, "timeout"),
        ("explodes", {}, 500, "execution"),
        ("down", {}, 503, "unavailable"),
    ],
)
def test_status_follows_the_error_type(
    client: TestClient, name: str, body: object, status: int, error_type: str
) -> None:
    if isinstance(body, str):
        response = client.post(
            f"/api/tools/execute/{name}", content=body, headers={"content-type": "application/json"}
        )
    else:
        response = client.post(f"/api/tools/execute/{name}", json=body)
    assert response.status_code == status
    envelope = response.json()
    assert envelope["status"] == "error" and envelope["error"]["type"] == error_type


def test_validation_names_the_field(client: TestClient) -> None:
    error = client.post("/api/tools/execute/get_positions", json={"symbol": 5}).json()["error"]
    assert error["details"]["errors"] == [
        {
            "field": "symbol",
            "message": "Input should be a valid string (got 5)",
            "type": "string_type",
        }
    ]


def test_open_circuit_is_503(client: TestClient) -> None:
    for _ in range(2):
        client.post("/api/tools/execute/explodes", json={})
    response = client.post("/api/tools/execute/explodes", json={})
    assert response.status_code == 503 and response.json()["error"]["type"] == "circuit_open"


def test_request_id_header_is_used(client: TestClient) -> None:
    body = client.post(
        "/api/tools/execute/get_quotes",
        json={"symbol": "VOO"},
        headers={"X-Request-ID": "call_abc"},
    ).json()
    assert body["metadata"]["request_id"] == "call_abc"


def test_seed_endpoints(client: TestClient) -> None:
    assert (
        client.get("/api/positions", params={"symbol": "MSFT"}).json()["data"]["positions"][0][
            "quantity"
        ]
        == 12
    )
    assert client.get("/api/positions").status_code == 422
    quotes = client.get("/api/quotes?symbols=AAPL&symbols=VOO").json()["data"]["quotes"]
    assert [q["symbol"] for q in quotes] == ["AAPL", "VOO"]
    assert (
        client.get("/api/activity", params={"account": "joint", "limit": "1"}).json()["data"][
            "trades"
        ][0]["symbol"]
        == "GOOGL"
    )
    assert (
        client.get("/api/performance", params={"timeframe": "ALL", "account": "roth_ira"}).json()[
            "source_id"
        ]
        == "tool:performance:v1"
    )
    assert client.get("/api/account_summary").json()["data"]["total_value"] > 0
    assert client.get("/api/positions_list", params={"asset_class": "bonds"}).status_code == 200
    assert client.get("/api/transfers", params={"account": "nope"}).status_code == 422
    assert (
        client.get("/api/facts", params={"topic": "rebalancing"}).json()["data"]["fact_id"]
        == "rebalancing"
    )


def test_list_tools_in_every_format(client: TestClient) -> None:
    definitions = client.get("/api/tools").json()
    assert {"get_positions", "get_facts"} <= {d["name"] for d in definitions}
    openai = client.get("/api/tools", params={"format": "openai"}).json()
    assert openai[0]["type"] == "function" and openai[0]["function"]["strict"] is True
    assert (
        client.get("/api/tools", params={"format": "mcp"}).json()[0]["inputSchema"]["type"]
        == "object"
    )
    assert client.get("/api/tools", params={"format": "yaml"}).status_code == 422


def test_list_only_the_tools_a_query_matches(client: TestClient) -> None:
    found = client.get("/api/tools", params={"query": "stock price quote", "limit": 2}).json()
    assert found[0]["name"] == "get_quotes" and len(found) == 2
    exported = client.get(
        "/api/tools", params={"format": "anthropic", "query": "stock quote", "limit": 1}
    ).json()
    assert [t["name"] for t in exported] == ["get_quotes"]
    assert client.get("/api/tools", params={"query": "x", "limit": 0}).status_code == 422


def test_healthz(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok", "tools": 29}


def test_api_key_protects_api_only(tmp_path: Path) -> None:
    runtime = make_runtime(server={"api_key": "s3cret"})
    with TestClient(create_app(runtime), base_url="http://127.0.0.1") as c:
        assert c.get("/healthz").status_code == 200
        denied = c.post("/api/tools/execute/get_quotes", json={})
        assert denied.status_code == 401 and denied.headers["www-authenticate"] == "Bearer"
        assert "API key" in denied.json()["detail"]
        wrong = {"Authorization": "Bearer s3cre"}
        assert c.post("/api/tools/execute/get_quotes", json={}, headers=wrong).status_code == 401
        right = {"Authorization": "Bearer s3cret"}
        called = c.post("/api/tools/execute/get_quotes", json={"symbol": "AAPL"}, headers=right)
        assert called.status_code == 200 and called.json()["status"] == "success"
        assert c.get("/api/tools", headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert c.get("/api/tools", headers={"Authorization": "Bearer s3cret"}).status_code == 200


def test_calls_are_audited(client: TestClient) -> None:
    client.post("/api/tools/execute/get_positions", json={"symbol": "AAPL"})
    client.get("/api/quotes", params={"symbol": "AAPL"})
    audit = client.app.state.runtime.audit  # type: ignore[attr-defined]
    assert [r.tool_name for r in audit.query(limit=2)] == ["get_quotes", "get_positions"]


def test_openapi_document_lists_the_routes(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert {
        "/api/tools",
        "/api/tools/execute/{name}",
        "/api/positions",
        "/api/facts",
        "/healthz",
    } <= set(paths)


@pytest.mark.parametrize("path", ["..%2Fshell", "a/b", "%00", "..%2F..%2Fhealthz"])
def test_odd_tool_paths_answer_with_the_envelope(client: TestClient, path: str) -> None:
    response = client.post(f"/api/tools/execute/{path}", json={})
    assert response.status_code == 404
    assert response.json()["error"]["type"] == "not_found"


def test_idempotency_key_replays_and_is_checked(client: TestClient) -> None:
    url = "/api/tools/execute/explodes"  # a tool with no annotations: side effects assumed
    first = client.post(url, headers={"Idempotency-Key": "order-1"})
    again = client.post(url, headers={"Idempotency-Key": "order-1"})
    assert first.status_code == again.status_code == 500
    assert "Idempotent-Replayed" not in first.headers
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["metadata"]["replay_of"] == first.json()["metadata"]["request_id"]
    assert again.json()["error"] == first.json()["error"]
    for bad in (b"", b"x" * 256, "caf\u00e9".encode(), b"a\tb"):
        refused = client.post(url, headers={"Idempotency-Key": bad})
        assert refused.status_code == 422
        assert "Idempotency-Key header: an idempotency key is 1 to 255" in refused.text
