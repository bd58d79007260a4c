"""Regular expressions from a document written elsewhere cannot stop the server (issue 53, 3).

An OpenAPI document's argument pattern ``^(a|aa)+$`` against ``"a" * 40 + "!"``
blocked ``/healthz`` for 50 s (``re`` backtracks ~10^8 times, on the event loop); a
response schema's pattern froze a server past SIGTERM. Against a real ``tooldeck
serve`` and a real API on 127.0.0.1: the match is time-bounded and off the event
loop, the caller gets an error naming the pattern, the server keeps answering and
stops on SIGTERM at once.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from deadlines import scaled
from integration.processes import Server, free_port, serve_http

pytestmark = [pytest.mark.integration]

EVIL = "^(a|aa)+$"
VALUE = "a" * 40 + "!"


class _Words(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps({"echo": VALUE}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def document(url: str) -> dict[str, object]:
    word = {"type": "string", "pattern": EVIL}
    answer = {"type": "object", "properties": {"echo": word}}
    ok = {"description": "ok", "content": {"application/json": {"schema": answer}}}
    return {
        "openapi": "3.0.0",
        "info": {"title": "words", "version": "1"},
        "servers": [{"url": url}],
        "paths": {
            "/check": {"get": {"operationId": "check", "responses": {"200": ok},
                               "parameters": [{"name": "w", "in": "query", "required": True,
                                               "schema": word}]}},
            "/evil": {"get": {"operationId": "evil", "responses": {"200": ok}}},
        },
    }  # fmt: skip


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    with serve_http(_Words) as url:
        (tmp_path / "words.json").write_text(json.dumps(document(url)))
        (tmp_path / "tooldeck.toml").write_text(
            f'data_dir = "{tmp_path / "data"}"\n[builtin]\nenabled = false\n'
            f'[openapi.words]\nspec = "words.json"\nbase_url = "{url}"\n'
            'allow_hosts = ["127.0.0.1"]\n'
        )
        serving = Server(
            None, free_port(), ["--config", str(tmp_path / "tooldeck.toml")], cwd=tmp_path
        )
        try:
            yield serving
        finally:
            serving.stop()


def slowest_health_check(url: str, busy: threading.Event) -> float:
    """Seconds of the slowest ``/healthz`` answer while ``busy`` is set."""
    slowest = 0.0
    while busy.is_set():
        start = time.monotonic()
        httpx.get(f"{url}/healthz", timeout=120)
        slowest = max(slowest, time.monotonic() - start)
        time.sleep(0.02)
    return slowest


def call_while_watching(server: Server, tool: str, arguments: dict[str, str]) -> tuple[dict, float]:
    busy = threading.Event()
    busy.set()
    answer: dict = {}

    def call() -> None:
        try:
            url = f"{server.url}/api/tools/execute/{tool}"
            answer.update(httpx.post(url, json=arguments, timeout=300).json())
        finally:
            busy.clear()

    caller = threading.Thread(target=call)
    caller.start()
    slowest = slowest_health_check(server.url, busy)
    caller.join()
    return answer, slowest


def test_an_argument_pattern_is_bounded_and_the_server_keeps_answering(server: Server) -> None:
    answer, slowest = call_while_watching(server, "check", {"w": VALUE})
    assert answer["error"]["type"] == "validation", answer
    assert "could not be matched in time" in answer["error"]["message"]
    assert slowest < scaled(1.0), f"/healthz waited {slowest:.1f} s"
    fine = httpx.post(f"{server.url}/api/tools/execute/check", json={"w": "aaaa"}).json()
    assert fine["error"]["message"].startswith("words: GET /check answered HTTP 200 with a body")


def test_a_response_pattern_is_bounded_and_sigterm_stops_the_server(server: Server) -> None:
    answer, slowest = call_while_watching(server, "evil", {})
    assert answer["status"] == "error" and "could not be matched in time" in str(answer), answer
    assert slowest < scaled(1.0), f"/healthz waited {slowest:.1f} s"

    def call() -> None:
        with contextlib.suppress(httpx.HTTPError):  # the server may stop before answering
            httpx.post(f"{server.url}/api/tools/execute/evil", json={}, timeout=60)

    caller = threading.Thread(target=call)
    caller.start()
    time.sleep(0.05)
    start = time.monotonic()
    server.proc.send_signal(signal.SIGTERM)
    server.proc.wait(timeout=30)
    assert time.monotonic() - start < scaled(10)
    caller.join()
