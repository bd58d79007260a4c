"""The REST server: ``create_app()`` → FastAPI application (run by ``tooldeck serve``)."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Request

from tooldeck.runtime import Runtime, build_runtime
from tooldeck.server.http import runtime_of
from tooldeck.server.routes import brokerage, tools

__all__ = ["create_app"]


def _require_api_key(request: Request) -> None:
    key = runtime_of(request).settings.server.api_key
    if key is None:
        return
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not secrets.compare_digest(
        token.encode(), key.get_secret_value().encode()
    ):
        raise HTTPException(
            status_code=401,
            detail="missing or wrong API key: send 'Authorization: Bearer <server.api_key>'",
            headers={"WWW-Authenticate": "Bearer"},
        )


def create_app(runtime: Runtime | None = None) -> FastAPI:
    """The FastAPI application over ``runtime`` (default: built from ``load_settings()``).

    Routes: ``GET /healthz``; ``GET /api/tools``; ``POST /api/tools/execute/{name}``;
    the seed 004 ``GET /api/positions`` ... ``/api/facts``. When ``server.api_key`` is
    set, ``/api/*`` requires it as a bearer token. The runtime is closed (audit
    flushed) when the application shuts down.
    """
    runtime = runtime or build_runtime()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        await runtime.aclose()

    app = FastAPI(
        title="tooldeck",
        summary="Typed tools, executed safely, with provenance on every result.",
        version="0.1.0",
        lifespan=lifespan,
    )
    app.state.runtime = runtime
    guarded = [Depends(_require_api_key)]
    app.include_router(tools.router, dependencies=guarded)
    app.include_router(brokerage.router, dependencies=guarded)

    @app.get("/healthz", tags=["health"])
    async def healthz() -> dict[str, Any]:
        """Liveness: ``{"status": "ok", "tools": <count>}``."""
        return {"status": "ok", "tools": len(await runtime.provider.definitions())}

    return app
