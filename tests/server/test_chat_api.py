"""``/api/chat``, ``/api/chat/stream`` and ``/api/runs`` over TestClient, SSE included.

The run contract (docs/contracts.md) does not change with the engine: every test runs
on the in-process engine and on Temporal (a real dev server, a worker in the server).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tooldeck.agent.contracts import EVENT_TYPES
from tooldeck.config import load_settings
from tooldeck.runtime import build_runtime
from tooldeck.server.app import create_app

AAPL = "How much is my AAPL position worth and how is it doing?"


@pytest.fixture(params=["embedded", "temporal"])
def client(request: pytest.FixtureRequest) -> Iterator[TestClient]:
    runs: dict[str, Any] = {"engine": request.param}
    if request.param == "temporal":
        runs |= {
            "address": request.getfixturevalue("temporal_address"),
            "task_queue": f"chat-api-{uuid.uuid4().hex[:8]}",
            "worker_in_server": True,
        }
    settings = load_settings(
        builtin={"enabled": False},
        profiles={"careful": {"confirm": ["get_quotes"]}},
        server={"trust_user_header": True},  # X-User names the caller (behind a proxy)
        runs=runs,
    )
    with TestClient(create_app(build_runtime(settings)), base_url="http://127.0.0.1") as c:
        yield c


def sse(lines: Iterator[str], stop_at: str | None = None) -> list[dict[str, Any]]:
    """Parse Server-Sent Events; stop after the first event of type ``stop_at``."""
    events: list[dict[str, Any]] = []
    fields: dict[str, str] = {}
    for line in lines:
        if line:
            name, _, value = line.partition(":")
            if name:  # a line starting with ':' is a keep-alive comment
                fields[name] = value.removeprefix(" ")
            continue
        if "data" in fields:
            event = json.loads(fields["data"])
            assert fields["event"] == event["type"]
            assert fields["id"] == f"{event['run_id']}:{event['seq']}"
            events.append(event)
            if event["type"] == stop_at:
                break
        fields = {}
    return events


def test_chat_answers_in_one_response(client: TestClient) -> None:
    response = client.post("/api/chat", json={"question": AAPL}, headers={"X-User": "ana"})
    assert response.status_code == 200
    run = response.json()
    assert (run["state"], run["user"], run["pending"], run["error"]) == (
        "completed", "ana", None, None
    )  # fmt: skip
    answer = run["answer"]
    assert answer["citations"] == ["tool:positions:v1", "tool:quotes:v1"]
    assert answer["grounding"]["verdict"] == "grounded"
    assert [c["name"] for c in answer["tool_calls"]] == ["get_positions", "get_quotes"]
    ana = {"X-User": "ana"}
    assert client.get(f"/api/runs/{run['run_id']}", headers=ana).json() == run
    assert client.get("/api/runs", headers=ana).json()[0]["run_id"] == run["run_id"]
    assert client.get("/api/runs").json() == []  # ana's runs are hers


def test_the_stream_shows_every_event_in_order(client: TestClient) -> None:
    with client.stream("POST", "/api/chat/stream", json={"question": AAPL}) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        events = sse(response.iter_lines())
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    kinds = [e["type"] for e in events]
    assert kinds[:3] == ["run.created", "run.started", "tool_call.started"]
    assert kinds[-1] == "run.completed" and "message.delta" in kinds
    assert set(kinds) <= set(EVENT_TYPES)
    text = "".join(e["data"]["text"] for e in events if e["type"] == "message.delta")
    assert text == events[-1]["data"]["answer"]["answer_markdown"]
    started, completed = events[2]["data"], events[3]["data"]
    assert started["name"] == "get_positions" and started["arguments"] == {"symbol": "AAPL"}
    assert completed["call_id"] == started["call_id"] and completed["status"] == "success"
    assert all(e["timestamp"].endswith("+00:00") for e in events)


def test_confirmation_over_the_api_then_a_reconnect_replays_the_rest(client: TestClient) -> None:
    body = {"question": "What's the price of MSFT?", "profile": "careful"}
    with client.stream("POST", "/api/chat/stream", json=body) as response:
        first = sse(response.iter_lines(), stop_at="run.waiting_input")
    assert [e["type"] for e in first] == [
        "run.created", "run.started", "tool_call.started", "run.waiting_input"
    ]  # fmt: skip
    run_id = first[0]["run_id"]
    pending = first[-1]["data"]["pending"]
    assert (pending["tool"], pending["arguments"]) == ("get_quotes", {"symbol": "MSFT"})
    assert client.get(f"/api/runs/{run_id}").json()["state"] == "waiting_input"

    confirmed = client.post(f"/api/runs/{run_id}/confirm", json={"approve": True})
    assert confirmed.status_code == 200 and confirmed.json()["state"] == "completed"

    # reconnect where the stream broke: POST with Last-Event-ID resumes the same run
    last = f"{run_id}:{first[-1]['seq']}"
    with client.stream(
        "POST", "/api/chat/stream", json=body, headers={"Last-Event-ID": last}
    ) as response:
        rest = sse(response.iter_lines())
    assert [e["seq"] for e in rest] == list(range(5, 5 + len(rest)))
    assert rest[0]["type"] == "tool_call.completed"
    assert rest[-1]["type"] == "run.completed"
    assert "$431.18" in rest[-1]["data"]["answer"]["answer_markdown"]

    # GET replays from any point too, for an EventSource
    with client.stream(
        "GET", f"/api/runs/{run_id}/events", headers={"Last-Event-ID": f"{run_id}:3"}
    ) as response:
        replay = sse(response.iter_lines())
    assert [e["seq"] for e in replay] == list(range(4, 5 + len(rest)))
    assert replay[1:] == rest


def test_chat_returns_202_while_waiting_and_illegal_transitions_are_409(
    client: TestClient,
) -> None:
    response = client.post("/api/chat", json={"question": "Quote for TSLA", "profile": "careful"})
    assert response.status_code == 202
    run = response.json()
    assert run["state"] == "waiting_input" and run["pending"]["tool"] == "get_quotes"
    run_id = run["run_id"]
    denied = client.post(
        f"/api/runs/{run_id}/confirm", json={"approve": False, "message": "no quotes today"}
    )
    assert denied.status_code == 200
    done = client.get(f"/api/runs/{run_id}").json()
    assert done["state"] == "completed" and "no quotes today" in done["answer"]["answer_markdown"]

    again = client.post(f"/api/runs/{run_id}/confirm", json={"approve": True})
    assert again.status_code == 409
    assert (
        "it is completed; confirm is allowed only when the run is waiting_input"
        in (again.json()["detail"])
    )
    assert client.post(f"/api/runs/{run_id}/cancel").status_code == 409

    waiting = client.post(
        "/api/chat",
        json={"question": "Quote for TSLA", "profile": "careful"},
        headers={"X-User": "ana"},
    )
    cancelled = client.post(
        f"/api/runs/{waiting.json()['run_id']}/cancel", headers={"X-User": "ana"}
    )
    assert cancelled.status_code == 200
    assert (cancelled.json()["state"], cancelled.json()["error"]) == (
        "cancelled",
        "cancelled by ana",
    )


def test_a_runs_call_is_decided_from_the_approvals_list(client: TestClient) -> None:
    """The approvals page lists a run's call; deciding it there moves the run on, on
    either engine (a Temporal workflow waits on its update, not on the store)."""
    ana, bob = {"X-User": "ana"}, {"X-User": "bob"}
    for approve, says in ((True, "$"), (False, "not now")):
        body = {"question": "Quote for TSLA", "profile": "careful"}
        run = client.post("/api/chat", json=body, headers=ana).json()
        assert run["state"] == "waiting_input", run
        approval_id = run["pending"]["approval_id"]
        listed = client.get("/api/approvals", headers=ana).json()
        assert approval_id in [a["approval_id"] for a in listed]
        assert approval_id not in [a["approval_id"] for a in client.get(
            "/api/approvals", headers=bob).json()]  # fmt: skip
        action = "approve" if approve else "deny"
        payload = {} if approve else {"message": "not now"}
        other = client.post(f"/api/approvals/{approval_id}/{action}", json=payload, headers=bob)
        assert other.status_code == 403, other.text  # not bob's run, nor shown to him
        assert run["run_id"] not in other.text
        decided = client.post(f"/api/approvals/{approval_id}/{action}", json=payload, headers=ana)
        assert decided.status_code == 200, decided.text
        assert decided.json()["approved"] is approve, decided.json()
        done = client.get(f"/api/runs/{run['run_id']}", headers=ana).json()
        assert done["state"] == "completed", done
        assert says in done["answer"]["answer_markdown"], done["answer"]
        again = client.post(f"/api/approvals/{approval_id}/{action}", json=payload, headers=ana)
        assert again.status_code == 409, again.text  # the run has moved on


def test_bad_requests_get_specific_errors(client: TestClient) -> None:
    assert client.get("/api/runs/run_nope").status_code == 404
    assert client.post("/api/runs/run_nope/cancel").status_code == 404
    assert client.post("/api/runs/run_nope/confirm", json={"approve": True}).status_code == 404
    unknown = client.post("/api/chat", json={"question": "cash?", "profile": "nobody"})
    assert unknown.status_code == 404 and "careful" in unknown.json()["detail"]
    empty = client.post("/api/chat", json={"question": ""})
    assert empty.status_code == 422 and empty.json()["detail"][0]["loc"] == ["body", "question"]
    extra = client.post("/api/chat", json={"question": "cash?", "acount": "joint"})
    assert extra.status_code == 422 and extra.json()["detail"][0]["loc"] == ["body", "acount"]
    bad_id = client.post(
        "/api/chat/stream", json={"question": "cash?"}, headers={"Last-Event-ID": "seven"}
    )
    assert bad_id.status_code == 422
    assert bad_id.json()["detail"][0]["loc"] == ["header", "last-event-id"]
    missing = client.post(
        "/api/chat/stream", json={"question": "cash?"}, headers={"Last-Event-ID": "run_x:3"}
    )
    assert missing.status_code == 404
