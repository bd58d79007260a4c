"""REST with profiles: ``?profile=`` views, approvals, open breakers noted in the listing."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from tooldeck.config import load_settings
from tooldeck.core import tool
from tooldeck.runtime import build_runtime
from tooldeck.server.app import create_app


@tool(name="always_fails")
def always_fails() -> str:
    """Fails every time."""
    raise RuntimeError("backend down")


@pytest.fixture
def client() -> Iterator[TestClient]:
    settings = load_settings(
        profiles={
            "support": {"tools": ["get_quotes", "get_transfers"], "confirm": ["get_transfers"]},
        },
        policy={"max_attempts": 1, "failure_threshold": 2, "reset_timeout_s": 60},
        server={"trust_user_header": True},  # X-User names the caller (behind a proxy)
        approvals={"approvers": ["lead"]},
    )
    runtime = build_runtime(settings)
    runtime.registry.register(always_fails)
    with TestClient(create_app(runtime), base_url="http://127.0.0.1") as c:
        yield c


def test_profile_view_listing_and_hidden_tool(client: TestClient) -> None:
    everything = [d["name"] for d in client.get("/api/tools").json()]
    assert "get_activity" in everything and "always_fails" in everything
    support = client.get("/api/tools", params={"profile": "support"}).json()
    assert [(d["name"], d["requires_confirmation"]) for d in support] == [
        ("get_quotes", False),
        ("get_transfers", True),
    ]
    hidden = client.post("/api/tools/execute/get_activity?profile=support", json={})
    assert hidden.status_code == 404 and hidden.json()["error"]["type"] == "not_found"
    assert client.post("/api/tools/execute/get_activity", json={}).status_code == 200
    unknown = client.get("/api/tools", params={"profile": "nope"})
    assert unknown.status_code == 404 and "profiles: rag, support" in unknown.json()["detail"]


def test_confirmation_round_trip_with_edited_arguments(client: TestClient) -> None:
    url = "/api/tools/execute/get_transfers?profile=support"
    headers = {"X-User": "ana"}
    pending = client.post(url, json={"account": "joint"}, headers=headers)
    assert pending.status_code == 409
    details = pending.json()["error"]["details"]
    assert details["principal"] == "ana" and details["arguments"] == {"account": "joint"}
    listed = client.get("/api/approvals", headers=headers).json()
    assert [a["approval_id"] for a in listed] == [details["approval_id"]]
    assert client.get("/api/approvals", headers={"X-User": "eve"}).json() == []

    for intruder in ({}, {"X-User": "eve"}):  # neither the caller nor an approver
        refused = client.post(
            f"/api/approvals/{details['approval_id']}/approve", json={}, headers=intruder
        )
        assert refused.status_code == 403 and "ana" in refused.json()["detail"]
    lead = {"X-User": "lead"}
    approved = client.post(
        f"/api/approvals/{details['approval_id']}/approve",
        json={"arguments": {"account": "individual"}},
        headers=lead,
    )
    assert approved.status_code == 200 and approved.json()["status"] == "approved"
    decided = f"/api/approvals/{details['approval_id']}/deny"
    assert client.post(decided, json={}, headers=lead).status_code == 409
    assert client.post("/api/approvals/nope/approve", json={}).status_code == 404

    ran = client.post(url, json={"account": "joint"}, headers=headers)
    assert ran.status_code == 200
    assert ran.json()["data"]["account"] == "individual"  # the approver's edited arguments

    again = client.post(url, json={"account": "joint"}, headers=headers)
    approval_id = again.json()["error"]["details"]["approval_id"]
    client.post(f"/api/approvals/{approval_id}/deny", json={"message": "ask first"}, headers=lead)
    denied = client.post(url, json={"account": "joint"}, headers=headers)
    assert denied.status_code == 403 and "ask first" in denied.json()["error"]["message"]

    audit = client.app.state.runtime.audit  # type: ignore[attr-defined]
    decisions = audit.decisions()
    assert [(d["decision"], d["approver"]) for d in decisions] == [
        ("denied", "lead"),
        ("approved", "lead"),
    ]
    assert decisions[1]["edited_arguments"] == {"account": "individual"}
    assert decisions[1]["principal"] == "ana" and decisions[1]["profile"] == "support"


def test_open_breaker_is_noted_in_the_listing_and_left_out_for_models(client: TestClient) -> None:
    for _ in range(2):
        client.post("/api/tools/execute/always_fails", json={})
    listing = {d["name"]: d["unavailable"] for d in client.get("/api/tools").json()}
    assert listing["always_fails"] is not None and "circuit open" in listing["always_fails"]
    assert listing["get_quotes"] is None
    openai = client.get("/api/tools", params={"format": "openai"}).json()
    assert "always_fails" not in [t["function"]["name"] for t in openai]
    assert client.post("/api/tools/execute/always_fails", json={}).status_code == 503
