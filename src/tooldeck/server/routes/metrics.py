"""``/metrics``: Prometheus text exposition of the audit store's running totals."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from tooldeck.observability.metrics import metrics_registry
from tooldeck.server.http import audit_of, problems

__all__ = ["router"]

router = APIRouter(tags=["metrics"])


@router.get(
    "/metrics", summary="Prometheus metrics", response_class=Response, responses=problems(404)
)
def metrics(request: Request) -> Response:
    """Call counters by tool, status, error type and profile, and a latency histogram.

    Raises:
        HTTPException: 404 when the audit store is off (the figures live in it).
    """
    store = audit_of(request)
    # The collector is stateless (it reads the store), so a registry per scrape costs µs.
    return Response(generate_latest(metrics_registry(store)), media_type=CONTENT_TYPE_LATEST)
