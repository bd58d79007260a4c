"""Another user of the same server (issue 25, findings 1, 2 and 7).

With ``server.trust_user_header`` (behind a proxy that sets ``X-User``), alice and bob
share one server. Bob must not decide alice's pending calls (nor swap their
arguments), nor read her approvals, runs, events or audit records on any route; an
approver in ``[approvals] approvers`` sees and decides everyone's. The audit records
the arguments that ran, and the ones asked when an approver edited them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tooldeck.config import load_settings
from tooldeck.runtime import build_runtime
from tooldeck.server.app import create_app

ALICE = {"X-User": "alice"}
BOB = {"X-User": "bob"}
ROOT = {"X-User": "root"}
KEY = "sk-proj-alicesSecretKey0123456789"
QUESTION = "What's the price of MSFT?"
MARKER = "ALICESOWNSYMBOL"


@pytest.fixture
def client() -> Iterator[TestClient]:
    settings = load_settings(
        builtin={"enabled": False},
        profiles={"careful": {"confirm": ["get_quotes"]}},
        server={"trust_user_header": True},
        approvals={"approvers": ["root"]},
    )
    with TestClient(create_app(build_runtime(settings)), base_url="http://127.0.0.1") as c:
        yield c


def alices_waiting_run(client: TestClient) -> dict[str, Any]:
    response = client.post(
        "/api/chat", json={"question": QUESTION, "profile": "careful"}, headers=ALICE
    )
    assert response.status_code == 202, response.text
    run = response.json()
    assert run["state"] == "waiting_input" and run["pending"]["arguments"] == {"symbol": "MSFT"}
    return run


def test_bob_cannot_decide_alices_run_nor_change_its_arguments(client: TestClient) -> None:
    run = alices_waiting_run(client)
    url = f"/api/runs/{run['run_id']}/confirm"
    forged = {"approve": True, "arguments": {"symbol": "AAPL"}}
    refused = client.post(url, json=forged, headers=BOB)
    assert refused.status_code == 404  # bob does not even learn the run exists
    assert client.get(f"/api/runs/{run['run_id']}", headers=ALICE).json()["state"] == (
        "waiting_input"
    )
    # nor through the approvals API, where the run's pending call is stored too
    approval_id = run["pending"]["approval_id"]
    bob_approves = client.post(
        f"/api/approvals/{approval_id}/approve", json={"arguments": {"symbol": "AAPL"}}, headers=BOB
    )
    assert bob_approves.status_code == 403
    assert "a call of another user's run" in bob_approves.json()["detail"]
    assert run["run_id"] not in bob_approves.text and "alice" not in bob_approves.text
    # alice decides her own run
    done = client.post(url, json={"approve": True}, headers=ALICE)
    assert done.status_code == 200 and done.json()["state"] == "completed"
    assert "MSFT" in done.json()["answer"]["answer_markdown"]


def test_an_approver_decides_anyones_run_and_the_audit_shows_what_ran(client: TestClient) -> None:
    run = alices_waiting_run(client)
    edited = {"approve": True, "arguments": {"symbol": "AAPL"}}
    done = client.post(f"/api/runs/{run['run_id']}/confirm", json=edited, headers=ROOT)
    assert done.status_code == 200, done.text
    calls = done.json()["answer"]["tool_calls"]
    assert [c["name"] for c in calls] == ["get_quotes"]
    records = client.get("/api/audit", params={"tool": "get_quotes"}, headers=ROOT).json()
    record = client.get(f"/api/audit/{records['records'][0]['id']}", headers=ROOT).json()
    assert record["arguments"] == {"symbol": "AAPL"}  # what ran
    assert record["asked_arguments"] == {"symbol": "MSFT"}  # what was asked
    assert (record["edited_by"], record["user"]) == ("root", "alice")
    assert record["data"]["quotes"][0]["symbol"] == "AAPL"
    # the decision is audited once, with the edit and who made it
    decisions = client.app.state.runtime.audit.decisions()  # type: ignore[attr-defined]
    assert [(d["decision"], d["approver"], d["principal"]) for d in decisions] == [
        ("approved", "root", "alice")
    ]
    assert decisions[0]["edited_arguments"] == {"symbol": "AAPL"}


def test_a_rest_call_run_with_edited_arguments_tells_the_caller(client: TestClient) -> None:
    url = "/api/tools/execute/get_quotes?profile=careful"
    asked = client.post(url, json={"symbol": "MSFT"}, headers=ALICE)
    assert asked.status_code == 409
    approval_id = asked.json()["error"]["details"]["approval_id"]
    approved = client.post(
        f"/api/approvals/{approval_id}/approve",
        json={"arguments": {"symbol": "AAPL"}},
        headers=ROOT,
    )
    assert approved.status_code == 200, approved.text
    ran = client.post(url, json={"symbol": "MSFT"}, headers=ALICE).json()
    assert ran["metadata"]["edited"] == {"arguments": {"symbol": "AAPL"}, "by": "root"}
    assert ran["data"]["quotes"][0]["symbol"] == "AAPL"


def test_listings_show_each_user_only_their_own(client: TestClient) -> None:
    run = alices_waiting_run(client)
    url = "/api/tools/execute/get_quotes?profile=careful"
    assert client.post(url, json={"symbol": KEY}, headers=ALICE).status_code == 409
    assert client.post("/api/tools/execute/get_quotes", json={"symbol": "AAPL"}, headers=ALICE)

    mine = client.get("/api/approvals", headers=ALICE).json()
    assert {a["tool"] for a in mine} == {"get_quotes"} and len(mine) == 2
    assert KEY not in str(mine) and {"symbol": "***"} in [a["arguments"] for a in mine]
    assert client.get("/api/approvals", headers=BOB).json() == []
    assert len(client.get("/api/approvals", headers=ROOT).json()) == 2

    assert client.get("/api/runs", headers=BOB).json() == []
    assert [r["run_id"] for r in client.get("/api/runs", headers=ALICE).json()] == [run["run_id"]]
    assert client.get(f"/api/runs/{run['run_id']}", headers=BOB).status_code == 404
    assert client.get(f"/api/runs/{run['run_id']}/events", headers=BOB).status_code == 404
    assert client.post(f"/api/runs/{run['run_id']}/cancel", headers=BOB).status_code == 404
    assert client.get(f"/api/runs/{run['run_id']}", headers=ROOT).status_code == 200

    alices = client.get("/api/audit", headers=ALICE).json()["records"]
    assert {r["user"] for r in alices} == {"alice"} and alices
    assert client.get("/api/audit", headers=BOB).json()["records"] == []
    for record in alices:
        assert client.get(f"/api/audit/{record['id']}", headers=BOB).status_code == 404
        assert client.get(f"/api/audit/{record['id']}", headers=ALICE).status_code == 200


def test_no_get_route_shows_alices_data_to_bob(client: TestClient) -> None:
    """Walk every GET route of the OpenAPI document as bob, with alice's ids filled in."""
    run = alices_waiting_run(client)
    assert (
        client.post(
            "/api/tools/execute/get_quotes?profile=careful", json={"symbol": KEY}, headers=ALICE
        ).status_code
        == 409
    )
    client.post("/api/tools/execute/get_quotes", json={"symbol": MARKER}, headers=ALICE)
    audit_ids = [r["id"] for r in client.get("/api/audit", headers=ALICE).json()["records"]]
    ids = {
        "run_id": run["run_id"],
        "record_id": str(audit_ids[0]),
        "approval_id": run["pending"]["approval_id"],
    }
    secrets = (QUESTION, KEY, MARKER)
    paths = client.get("/openapi.json").json()["paths"]
    walked = 0
    for path, operations in paths.items():
        if "get" not in operations:
            continue
        names = re.findall(r"{(\w+)}", path)
        if any(name not in ids for name in names):
            continue  # documents and images: shared data, not a user's
        url = path.format(**ids)
        response = client.get(url, headers=BOB)
        walked += 1
        body = response.text
        for secret in secrets:
            assert secret not in body, f"GET {url} shows bob alice's {secret!r}"
    assert walked >= 10


def test_a_users_own_note_is_a_resource_for_them_alone(tmp_path: Any) -> None:
    """The knowledge pack's documents as resources (``GET /api/resources``), per caller."""
    settings = load_settings(
        builtin={"enabled": False},
        knowledge={"path": str(tmp_path / "knowledge.db")},
        server={"trust_user_header": True},
    )
    with TestClient(create_app(build_runtime(settings)), base_url="http://127.0.0.1") as client:
        stored = client.post(
            "/api/tools/execute/knowledge_store",
            json={"text": f"{MARKER}: my pension number", "metadata": {"title": "pension"}},
            headers=ALICE,
        )
        assert stored.status_code == 200, stored.text
        uri = f"tooldeck://documents/{stored.json()['data']['document']['document_id']}"

        def listed(headers: dict[str, str]) -> list[str]:
            body = client.get("/api/resources", headers=headers).json()
            return [r["uri"] for r in body["resources"] if r["server"] == "tooldeck"]

        assert uri in listed(ALICE)
        assert uri not in listed(BOB) and uri not in listed({})
        read = client.get("/api/resources/read", params={"uri": uri}, headers=ALICE)
        assert read.status_code == 200 and MARKER in read.json()["contents"][0]["text"]
        for other in (BOB, {}):
            refused = client.get("/api/resources/read", params={"uri": uri}, headers=other)
            assert refused.status_code == 404 and MARKER not in refused.text


def test_an_edit_by_an_approver_without_an_identity_is_recorded_as_anonymous() -> None:
    """On a server without identities the approver is anonymous; edited_by was null (53, 9)."""
    settings = load_settings(
        builtin={"enabled": False}, profiles={"careful": {"confirm": ["get_quotes"]}}
    )
    with TestClient(create_app(build_runtime(settings)), base_url="http://127.0.0.1") as client:
        asked = client.post("/api/chat", json={"question": QUESTION, "profile": "careful"})
        run = asked.json()
        assert run["state"] == "waiting_input", run
        edited = {"approve": True, "arguments": {"symbol": "AAPL"}}
        done = client.post(f"/api/runs/{run['run_id']}/confirm", json=edited)
        assert done.status_code == 200, done.text
        records = client.get("/api/audit", params={"tool": "get_quotes"}).json()
        record = client.get(f"/api/audit/{records['records'][0]['id']}").json()
        assert record["arguments"] == {"symbol": "AAPL"} and record["edited_by"] == "anonymous"
