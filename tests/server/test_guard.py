"""RequestGuard on the real app: the cross-origin and DNS-rebinding attacks of issue 18 fail.

Each attack is sent as a browser (or a rebinding page) would send it, to a tool that
writes a marker file, so "refused" means the tool did not run, not just a status code.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from tooldeck.cli.app import app as cli
from tooldeck.config import load_settings
from tooldeck.core.function_tool import tool
from tooldeck.runtime import build_runtime
from tooldeck.server.app import create_app
from tooldeck.server.guard import GuardRules


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "ran"


@pytest.fixture
def client(tmp_path: Path, marker: Path) -> Iterator[TestClient]:
    settings = load_settings(
        data_dir=tmp_path / "data",
        builtin={"enabled": False},
        server={"allowed_origins": ["https://app.example.com"], "max_body_bytes": 1000},
    )
    runtime = build_runtime(settings)

    @tool
    def touch(text: str = "") -> str:
        """Write a marker file (stands in for python/shell: any side effect)."""
        marker.write_text(text)
        return "done"

    runtime.registry.register(touch)
    with TestClient(create_app(runtime), base_url="http://127.0.0.1:8765") as c:
        yield c


URL = "/api/tools/execute/touch"
BODY = json.dumps({"text": "x"})


def test_same_origin_json_post_runs(client: TestClient, marker: Path) -> None:
    response = client.post(
        URL,
        content=BODY,
        headers={"content-type": "application/json", "origin": "http://127.0.0.1:8765"},
    )
    assert response.status_code == 200, response.text
    assert marker.read_text() == "x"


def test_cross_origin_simple_request_is_refused(client: TestClient, marker: Path) -> None:
    # the curl: text/plain (no preflight), foreign Origin and Host
    response = client.post(
        URL,
        content=BODY,
        headers={
            "content-type": "text/plain",
            "origin": "http://evil.example",
            "host": "evil.example:8765",
        },
    )
    assert response.status_code == 421
    assert "evil.example" in response.json()["detail"]
    assert "allowed_hosts" in response.json()["detail"]
    assert not marker.exists()


@pytest.mark.parametrize(
    "origin",
    ["http://evil.example", "http://127.0.0.1:9999", "null", "https://127.0.0.1:8765"],
)
def test_foreign_origin_refused_even_with_json(
    client: TestClient, marker: Path, origin: str
) -> None:
    response = client.post(
        URL, content=BODY, headers={"content-type": "application/json", "origin": origin}
    )
    assert response.status_code == 403
    assert "allowed_origins" in response.json()["detail"]
    assert not marker.exists()


def test_configured_origin_is_accepted(client: TestClient, marker: Path) -> None:
    response = client.post(
        URL,
        content=BODY,
        headers={"content-type": "application/json", "origin": "https://app.example.com"},
    )
    assert response.status_code == 200
    assert marker.exists()


def test_rebinding_host_refused_on_every_route(client: TestClient) -> None:
    for path in ("/healthz", "/api/tools", "/tools", "/metrics", "/api/audit"):
        response = client.get(path, headers={"host": "attacker.example:8765"})
        assert response.status_code == 421, path  # the first time, and remembered


def test_many_host_names_do_not_wear_out_the_check(client: TestClient) -> None:
    """The guard remembers its last 64 verdicts; more names are checked afresh."""
    for n in range(70):
        assert client.get("/healthz", headers={"host": f"a{n}.example"}).status_code == 421
    assert client.get("/healthz", headers={"host": "a0.example"}).status_code == 421
    assert client.get("/healthz", headers={"host": "localhost:8765"}).status_code == 200


@pytest.mark.parametrize("host", ["127.0.0.1:8765", "localhost:8765", "[::1]:8765", "10.1.2.3"])
def test_ip_literals_and_localhost_are_accepted(client: TestClient, host: str) -> None:
    assert client.get("/healthz", headers={"host": host}).status_code == 200


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", None],
)
def test_non_json_bodies_get_415(
    client: TestClient, marker: Path, content_type: str | None
) -> None:
    headers = {"content-type": content_type} if content_type else {}
    response = client.post(URL, content=BODY, headers=headers)
    assert response.status_code == 415
    assert "application/json" in response.json()["detail"]
    assert not marker.exists()


def test_json_with_charset_and_empty_body_pass(client: TestClient, marker: Path) -> None:
    response = client.post(
        URL, content=BODY, headers={"content-type": "application/json; charset=utf-8"}
    )
    assert response.status_code == 200
    assert client.post(URL).status_code == 200  # no body: the tool's defaults


def test_body_limit_declared_and_streamed(client: TestClient, marker: Path) -> None:
    big = json.dumps({"text": "y" * 2000})
    response = client.post(URL, content=big, headers={"content-type": "application/json"})
    assert response.status_code == 413
    assert "max_body_bytes=1000" in response.json()["detail"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        yield b'{"text": "'
        for _ in range(20):
            yield b"z" * 100
        yield b'"}'

    response = client.post(URL, content=chunks(), headers={"content-type": "application/json"})
    assert response.status_code == 413
    assert not marker.exists()


def test_guard_rules_parse_hosts() -> None:
    rules = GuardRules.build(bind_host="tools.internal", allowed_hosts=["API.example.com."])
    assert rules.host_problem("tools.internal:80") is None
    assert rules.host_problem("api.example.com") is None
    assert rules.host_problem("[2001:db8::1]:8765") is None
    assert rules.host_problem("") is not None
    assert rules.host_problem("evil.example:bad") is not None
    assert "*" not in GuardRules.build(bind_host="0.0.0.0").hosts
    assert GuardRules.build(bind_host="0.0.0.0", allowed_hosts=["*"]).host_problem("x") is None


def test_serve_refuses_a_network_bind_without_a_key(tmp_path: Path) -> None:
    env = {"TOOLDECK_DATA_DIR": str(tmp_path)}
    result = CliRunner().invoke(cli, ["serve", "--host", "0.0.0.0", "--port", "1"], env=env)
    assert result.exit_code == 2
    assert "refusing to start" in result.stderr
    assert "server.api_key" in result.stderr and "--insecure" in result.stderr
