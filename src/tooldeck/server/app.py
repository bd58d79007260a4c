"""The REST server: ``create_app()`` → FastAPI application (run by ``tooldeck serve``)."""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Query, Request
from fastapi_offline import FastAPIOffline
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tooldeck.exceptions import StoreUnavailableError
from tooldeck.runtime import Runtime, ToolsReload, build_runtime
from tooldeck.server import ui
from tooldeck.server.console_proof import console_key, proof
from tooldeck.server.guard import GuardRules, RequestGuard
from tooldeck.server.http import TraceContextMiddleware, runtime_of
from tooldeck.server.routes import approvals, audit, catalog, chat, metrics, resources, tools

__all__ = ["check_exposure", "create_app"]

_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def check_exposure(runtime: Runtime, *, insecure: bool = False) -> str | None:
    """Why serving ``runtime`` as configured is unsafe, or None.

    Binding an address other than loopback without ``server.api_key`` lets anyone on
    the network run every tool (code included) as the server's user. The caller
    refuses to start unless ``insecure`` is given, and then prints the returned text
    as a warning.

    Returns:
        The explanation when the bind is exposed without a key, else None.
    """
    server = runtime.settings.server
    if server.host in _LOOPBACK or server.host.startswith("127.") or server.api_key is not None:
        return None
    return (
        f"server.host = {server.host!r} is reachable from the network and server.api_key "
        "is not set: anyone who can reach the port could run every tool, including "
        "python and shell. Set server.api_key (or TOOLDECK_SERVER__API_KEY), bind "
        "127.0.0.1, or pass --insecure if a trusted network or proxy guards the port."
    )


def _authorized(runtime: Runtime, authorization: str) -> bool:
    key = runtime.settings.server.api_key
    if key is None:
        return True
    scheme, _, token = authorization.partition(" ")
    return scheme.lower() == "bearer" and secrets.compare_digest(
        token.encode(), key.get_secret_value().encode()
    )


async def _require_api_key(request: Request) -> None:
    """The API key check of every route, when ``server.api_key`` is set.

    Async: FastAPI runs a sync dependency on a worker thread (~0.1 ms a request).
    """
    if not _authorized(runtime_of(request), request.headers.get("authorization", "")):
        raise HTTPException(
            status_code=401,
            detail="missing or wrong API key: send 'Authorization: Bearer <server.api_key>'",
            headers={"WWW-Authenticate": "Bearer"},
        )


def _keyed(
    endpoint: Callable[[Request], Awaitable[Response]],
) -> Callable[[Request], Awaitable[Response]]:
    """``endpoint`` behind the API key check (a plain route has no FastAPI dependencies)."""

    async def keyed(request: Request) -> Response:
        await _require_api_key(request)
        return await endpoint(request)

    return keyed


def create_app(
    runtime: Runtime | None = None, *, on_reload: Callable[[ToolsReload], None] | None = None
) -> FastAPI:
    """The FastAPI application over ``runtime`` (default: built from ``load_settings()``).

    Routes: ``GET /healthz``; ``GET /api/tools[?profile=]``;
    ``POST /api/tools/execute/{name}[?profile=]``; ``GET /api/catalog[?profile=]``;
    ``/api/approvals``; ``GET /api/audit``, ``/api/audit/{id}``, ``/api/stats``; each
    pack's own (``PackParts.routes``: the brokerage pack's seed 004 ``GET
    /api/positions`` ... ``/api/facts``, ``/api/documents``, ``/api/context``); ``GET /metrics`` (Prometheus);
    the tools UI at ``/tools``; and the MCP endpoint ``/mcp`` (streamable HTTP,
    ``?profile=`` picks the view). When ``server.api_key`` is set, ``/api/*``,
    ``/metrics`` and ``/mcp`` require it as a bearer token (the UI asks for it). Every
    route is behind ``RequestGuard`` (``server.guard``): ``Host`` and ``Origin`` checked,
    bodies JSON only and at most ``server.max_body_bytes``. MCP servers are connected at
    start-up; the runtime is closed (sessions ended, audit flushed) at shutdown. With
    ``on_reload`` (``serve --reload``), the user's tools reload when their files change
    and ``on_reload`` gets each report (``Runtime.watch_tools``).
    """
    from tooldeck.server.mcp import create_mcp_http_app

    runtime = runtime or build_runtime()
    mcp_app, mcp_manager = create_mcp_http_app(runtime, _authorized)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await runtime.start()
        # the first build of the OpenAPI document takes seconds of CPU: done here, in a
        # thread, and not by the first GET /openapi.json on the event loop
        await asyncio.to_thread(app.openapi)
        tools = await runtime.root.all_definitions()
        remote = sum(1 for d in tools if d.server_id is not None)
        logging.getLogger("uvicorn.error").info(
            "tooldeck: %d tools ready (%d local, %d from MCP servers)",
            len(tools),
            len(tools) - remote,
            remote,
        )
        watcher = asyncio.create_task(runtime.watch_tools(on_reload)) if on_reload else None
        worker = await _start_worker(runtime)
        try:
            async with mcp_manager.run(), runtime.serving():
                yield
        finally:
            for task in (watcher, worker):
                if task is not None:
                    task.cancel()
            if worker is not None:
                await asyncio.gather(worker, return_exceptions=True)
            await runtime.aclose()

    # /docs and /redoc from assets in the package (fastapi-offline): they work with no network
    app = FastAPIOffline(
        title="tooldeck",
        summary="Typed tools, executed safely, with provenance on every result.",
        version="0.1.0",
        lifespan=lifespan,
    )
    app.state.runtime = runtime
    app.add_middleware(TraceContextMiddleware)
    server = runtime.settings.server
    routes = [make() for make in runtime.routes]
    rules = GuardRules.build(
        bind_host=server.host,
        allowed_hosts=server.allowed_hosts,
        allowed_origins=server.allowed_origins,
        max_body_bytes=server.max_body_bytes,
        large_bodies={path: size for r in routes for path, size in r.body_limits.items()},
    )
    app.add_middleware(RequestGuard, rules=rules)  # outermost: runs before anything else
    # Without a key there is nothing to check: no dependency (FastAPI solving one costs
    # ~0.1 ms a request; benchmarks/rest.py).
    guarded = [Depends(_require_api_key)] if server.api_key is not None else []
    for module in (tools, catalog, resources, approvals, audit, chat, metrics):
        app.include_router(module.router, dependencies=guarded)
    for pack_routes in routes:  # each pack's own (PackParts.routes)
        for router in pack_routes.routers:
            app.include_router(router, dependencies=guarded)
    ui.install(app, runtime.console)  # static pages; their API calls carry the key
    app.router.routes.append(Route("/mcp", endpoint=mcp_app))
    execute = tools.execute_endpoint if server.api_key is None else _keyed(tools.execute_endpoint)
    fast = Route("/api/tools/execute/{name:path}", endpoint=execute, methods=["POST"])
    app.router.routes.insert(0, fast)  # first: found at once, ahead of its APIRoute

    fastapi_openapi = app.openapi

    def openapi() -> dict[str, Any]:  # FastAPI's document, as the packs amend it
        if app.openapi_schema is None:
            document = fastapi_openapi()
            definitions = runtime.registry.list_definitions()
            for pack_routes in routes:
                if pack_routes.openapi is not None:
                    pack_routes.openapi(document, definitions)
        return app.openapi_schema  # type: ignore[return-value]

    app.openapi = openapi  # type: ignore[method-assign]
    app.add_exception_handler(405, _method_not_allowed)
    app.add_exception_handler(StoreUnavailableError, _store_unavailable)

    @app.get("/healthz", tags=["health"])
    async def healthz() -> dict[str, Any]:
        """Liveness: ``{"status": "ok", "tools": <count>}``."""
        return {"status": "ok", "tools": len(await runtime.provider.definitions())}

    key = console_key(runtime.settings.data_dir)

    @app.get("/api/console/proof", tags=["health"])
    async def console_proof(nonce: str = Query(min_length=16, max_length=64)) -> dict[str, str]:
        """That this console is the project's: ``{"proof": HMAC(console.key, "nonce:port")}``.

        ``tooldeck mcp`` asks before it sends this console any secret
        (``server.console_proof``); the answer says nothing without the key.
        """
        return {"proof": proof(key, nonce, runtime.settings.server.port)}

    return app


async def _method_not_allowed(request: Request, exc: Exception) -> Response:
    """405 with every method the path answers in ``Allow`` (RFC 9110 15.5.6).

    Starlette names only the methods of the first route whose path matched, so a path
    served by two routes (``PUT`` and ``DELETE``) would advertise one.
    """
    path = request.url.path
    allowed = sorted(
        {
            method
            for route in request.app.router.routes
            if isinstance(route, Route) and route.path_regex.match(path)
            for method in route.methods or ()
        }
    )
    return JSONResponse(
        {"detail": "Method Not Allowed"}, status_code=405, headers={"Allow": ", ".join(allowed)}
    )


async def _store_unavailable(request: Request, exc: Exception) -> Response:
    """503 naming the store that is away (not the driver's reason: it names the host).

    ``Retry-After: 5``: the pool reconnects by itself once the database is back.
    """
    public = exc.public if isinstance(exc, StoreUnavailableError) else "a store is unavailable"
    detail = f"{public}; try again later"
    return JSONResponse({"detail": detail}, status_code=503, headers={"Retry-After": "5"})


async def _start_worker(runtime: Runtime) -> asyncio.Task[None] | None:
    """A Temporal worker inside the server (``[runs] worker_in_server``), once it polls.

    A worker that cannot start (Temporal down) is logged; the server serves anyway, and
    runs wait for a worker.
    """
    config = runtime.settings.runs
    if config.engine != "temporal" or not config.worker_in_server:
        return None
    from tooldeck.worker.runner import run_worker

    ready = asyncio.Event()
    worker = asyncio.create_task(run_worker(runtime, ready=ready.set))
    waiting = asyncio.create_task(ready.wait())
    await asyncio.wait({worker, waiting}, return_when=asyncio.FIRST_COMPLETED)
    waiting.cancel()
    if worker.done() and not worker.cancelled() and worker.exception() is not None:
        logging.getLogger("uvicorn.error").error(
            "tooldeck: the Temporal worker did not start: %s", worker.exception()
        )
        return None
    return worker
