"""The first ``GET /openapi.json`` must not build the document on the event loop (issue 25,
finding 10: it held the loop 2.7 s); the server builds it while it starts."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tooldeck.config import load_settings
from tooldeck.runtime import build_runtime
from tooldeck.server.app import create_app


def test_the_openapi_document_is_built_before_the_first_request() -> None:
    app = create_app(build_runtime(load_settings(None, builtin={"enabled": False})))
    assert app.openapi_schema is None
    with TestClient(app, base_url="http://127.0.0.1") as client:
        assert app.openapi_schema is not None  # built during start-up, in a thread
        assert client.get("/openapi.json").json() == app.openapi_schema
