"""``/metrics``: Prometheus text exposition of the audit store's running totals."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from tooldeck.observability.metrics import metrics_registry
from tooldeck.server.http import runtime_of

__all__ = ["router"]

router = APIRouter(tags=["metrics"])


@router.get("/metrics", summary="Prometheus metrics", response_class=Response)
def metrics(request: Request) -> Response:
    """Call counters by tool, status, error type and profile, and a latency histogram.

    Raises:
        HTTPException: 404 when the audit store is off (the figures live in it).
    """
    state = request.app.state
    registry = getattr(state, "metrics_registry", None)
    if registry is None:
        store = runtime_of(request).audit
        if store is None:
            raise HTTPException(
                status_code=404, detail="/metrics needs the audit store ([audit] enabled = true)"
            )
        registry = state.metrics_registry = metrics_registry(store)
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)
