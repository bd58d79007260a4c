"""Helpers for the built-in tools' tests: a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

Route = Callable[["Handler"], tuple[int, dict[str, str], bytes]]


class Handler(BaseHTTPRequestHandler):
    routes: dict[tuple[str, str], Route] = {}
    seen: list[dict[str, Any]] = []

    def _serve(self) -> None:
        path = self.path.split("?")[0]
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        self.seen.append(
            {"method": self.command, "path": self.path, "headers": self.headers, "body": body}
        )
        route = self.routes.get((self.command, path))
        status, headers, payload = route(self) if route else (404, {}, b'{"message": "Not Found"}')
        self.send_response(status)
        headers = {"content-type": "application/json", **headers}
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = _serve

    def log_message(self, *args: Any) -> None:
        pass


class LocalServer:
    """Routes ``(METHOD, path) -> (status, headers, body)`` served on 127.0.0.1."""

    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], Route] = {}
        self.seen: list[dict[str, Any]] = []
        handler = type("H", (Handler,), {"routes": self.routes, "seen": self.seen})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def json(self, method: str, path: str, data: Any, status: int = 200, **headers: str) -> None:
        body = json.dumps(data).encode()
        self.routes[(method, path)] = lambda _h: (status, headers, body)

    def raw(self, method: str, path: str, body: bytes, status: int = 200, **headers: str) -> None:
        self.routes[(method, path)] = lambda _h: (status, headers, body)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[LocalServer]:
    local = LocalServer()
    yield local
    local.close()
