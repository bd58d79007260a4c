"""The tools UI's API over TestClient: catalog by profile, history, stats, /metrics, the page."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from tooldeck.config import load_settings
from tooldeck.runtime import build_runtime
from tooldeck.server.app import create_app


@pytest.fixture
def client() -> Iterator[TestClient]:
    settings = load_settings(
        server={"trust_user_header": True},  # as behind an authenticating proxy
        profiles={
            "support": {
                "description": "Support desk",
                "tools": ["get_quotes", "get_transfers"],
                "confirm": ["get_transfers"],
            }
        },
    )
    with TestClient(create_app(build_runtime(settings)), base_url="http://127.0.0.1") as c:
        yield c


def samples(client: TestClient) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    response = client.get("/metrics")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(response.text)
        for s in family.samples
    }


def test_catalog_groups_by_provider_and_marks_the_profiles_view(client: TestClient) -> None:
    everything = client.get("/api/catalog").json()
    profiles = {p["name"]: p["description"] for p in everything["profiles"]}
    assert profiles["support"] == "Support desk" and set(profiles) == {"support", "rag"}
    (local,) = everything["providers"]
    assert local["id"] == "local" and local["kind"] == "local"
    tools = {t["name"]: t for t in local["tools"]}
    assert len(tools) == 26 and all(t["visible"] for t in tools.values())
    assert tools["get_positions"]["input_schema"]["required"] == ["symbol"]
    assert tools["files"]["confirm_actions"] == ["write"]

    support = client.get("/api/catalog", params={"profile": "support"}).json()
    view = {t["name"]: t for t in support["providers"][0]["tools"]}
    assert len(view) == 26  # hidden tools are listed, greyed out
    assert {n for n, t in view.items() if t["visible"]} == {"get_quotes", "get_transfers"}
    assert view["get_transfers"]["requires_confirmation"] is True
    assert view["get_quotes"]["requires_confirmation"] is False

    unknown = client.get("/api/catalog", params={"profile": "nobody"})
    assert unknown.status_code == 404 and "profiles: rag, support" in unknown.json()["detail"]


def test_history_lists_calls_filtered_and_paged_and_opens_one(client: TestClient) -> None:
    for symbol in ("AAPL", "MSFT", "NVDA"):
        client.post(
            "/api/tools/execute/get_quotes", json={"symbol": symbol}, params={"profile": "support"}
        )
    client.post("/api/tools/execute/get_positions", json={"symbol": ""}, headers={"x-user": "ada"})

    page = client.get("/api/audit", params={"limit": 2}, headers={"x-user": "ada"}).json()
    assert [r["tool_name"] for r in page["records"]] == ["get_positions"]  # ada's own
    page = client.get("/api/audit", params={"limit": 2}).json()  # the anonymous caller's
    assert [r["tool_name"] for r in page["records"]] == ["get_quotes", "get_quotes"]
    assert (
        "arguments" not in page["records"][0] and page["next_before_id"] == page["records"][1]["id"]
    )
    rest = client.get("/api/audit", params={"limit": 2, "before_id": page["next_before_id"]}).json()
    assert len(rest["records"]) == 1 and rest["next_before_id"] is None

    errors = client.get("/api/audit", params={"status": "error"}, headers={"x-user": "ada"})
    errors = errors.json()["records"]
    assert [(r["error_type"], r["user"]) for r in errors] == [("validation", "ada")]
    support = client.get("/api/audit", params={"profile": "support", "since": "1h"}).json()
    assert len(support["records"]) == 3 and support["next_before_id"] is None

    full = client.get(f"/api/audit/{support['records'][0]['id']}").json()
    assert full["arguments"] == {"symbol": "NVDA"} and full["data"]["quotes"][0]["symbol"] == "NVDA"
    assert full["source_id"] == "tool:quotes:v1"

    assert client.get("/api/audit/99999").status_code == 404
    bad = client.get("/api/audit", params={"since": "last tuesday"})
    assert bad.status_code == 400 and "since: cannot read 'last tuesday'" in bad.json()["detail"]
    assert client.get("/api/audit", params={"status": "maybe"}).status_code == 422


def test_stats_and_prometheus_metrics_count_every_call(client: TestClient) -> None:
    for _ in range(3):
        client.post(
            "/api/tools/execute/get_quotes", json={"symbol": "AAPL"}, params={"profile": "support"}
        )
    client.post("/api/tools/execute/get_quotes", json={"symbol": 5})
    client.post("/api/tools/execute/get_transfers", json={}, params={"profile": "support"})

    stats = client.get("/api/stats", params={"since": "1h", "buckets": 4}).json()
    quotes = next(s for s in stats["stats"] if s["key"] == "get_quotes")
    assert (quotes["calls"], quotes["errors"], quotes["error_rate"]) == (4, 1, 0.25)
    assert quotes["p95_ms"] >= quotes["p50_ms"] > 0 and len(quotes["series"]) == 4
    assert sum(b["calls"] for b in quotes["series"]) == 4
    by_profile = client.get("/api/stats", params={"by": "profile"}).json()["stats"]
    assert {s["key"]: s["calls"] for s in by_profile} == {"support": 4, "": 1}
    backwards = client.get("/api/stats", params={"since": "1h", "until": "2h"})
    assert backwards.status_code == 200 and backwards.json()["stats"] == []  # an empty window

    metrics = samples(client)
    calls = "tooldeck_tool_calls_total"
    ok = frozenset(
        {"tool": "get_quotes", "status": "success", "error_type": "", "profile": "support"}.items()
    )
    bad = frozenset(
        {"tool": "get_quotes", "status": "error", "error_type": "validation", "profile": ""}.items()
    )
    held = frozenset(
        {
            "tool": "get_transfers",
            "status": "error",
            "error_type": "confirmation_required",
            "profile": "support",
        }.items()
    )
    assert metrics[(calls, ok)] == 3 and metrics[(calls, bad)] == 1 and metrics[(calls, held)] == 1
    count = frozenset({"tool": "get_quotes", "profile": "support"}.items())
    assert metrics[("tooldeck_tool_call_duration_seconds_count", count)] == 3
    inf = frozenset({"tool": "get_quotes", "profile": "support", "le": "+Inf"}.items())
    assert metrics[("tooldeck_tool_call_duration_seconds_bucket", inf)] == 3
    assert 0 < metrics[("tooldeck_tool_call_duration_seconds_sum", count)] < 1


def test_the_page_is_served_for_every_ui_path_and_assets_are_local(client: TestClient) -> None:
    for path in ("/tools", "/tools/t/get_positions", "/tools/history", "/tools/metrics"):
        page = client.get(path)
        assert (
            page.status_code == 200
            and '<script type="module" src="/tools/static/app.js">' in page.text
        )
    for asset in ("app.js", "form.js", "dom.js", "app.css"):
        body = client.get(f"/tools/static/{asset}")
        assert body.status_code == 200
        assert "http://" not in body.text.replace("http://www.w3.org/2000/svg", "")
        assert "https://" not in body.text
    assert client.get("/tools/static/missing.js").status_code == 404
    assert "/tools" not in client.get("/openapi.json").json()["paths"]


def test_api_key_guards_data_and_metrics_but_not_the_page() -> None:
    runtime = build_runtime(load_settings(server={"api_key": "s3cret"}))
    with TestClient(create_app(runtime), base_url="http://127.0.0.1") as client:
        assert client.get("/tools/history").status_code == 200
        for path in ("/api/catalog", "/api/audit", "/api/stats", "/metrics"):
            assert client.get(path).status_code == 401, path
        auth = {"authorization": "Bearer s3cret"}
        assert client.get("/api/catalog", headers=auth).status_code == 200
        assert client.get("/metrics", headers=auth).status_code == 200


def test_without_the_audit_store_history_and_metrics_say_why() -> None:
    with TestClient(
        create_app(build_runtime(load_settings(audit={"enabled": False}))),
        base_url="http://127.0.0.1",
    ) as client:
        for path in ("/api/audit", "/api/stats", "/metrics"):
            response = client.get(path)
            assert response.status_code == 404 and "enabled" in response.json()["detail"], path
