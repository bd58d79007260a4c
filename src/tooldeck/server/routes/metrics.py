"""``/metrics``: Prometheus text exposition of the audit store's running totals."""

from __future__ import annotations

import dataclasses

from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from tooldeck.observability.metrics import metrics_registry
from tooldeck.providers.cache import CachingToolsProvider
from tooldeck.server.http import audit_of, problems, runtime_of

__all__ = ["router"]

router = APIRouter(tags=["metrics"])


@router.get(
    "/metrics", summary="Prometheus metrics", response_class=Response, responses=problems(404)
)
def metrics(request: Request) -> Response:
    """Call counters, a latency histogram and the result cache's counters.

    Calls by tool, status, error type and profile; the cache's hits, misses and saved
    seconds when one runs.

    Raises:
        HTTPException: 404 when the audit store is off (the figures live in it).
    """
    store = audit_of(request)
    cache = runtime_of(request).services.get_optional(CachingToolsProvider)
    stats = None if cache is None else (lambda: dataclasses.asdict(cache.stats))
    # The collectors are stateless (they read the store), so a registry per scrape costs µs.
    registry = metrics_registry(store, stats)
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)
