"""Observability: the audit store, metering over it, Prometheus metrics and tracing.

``metrics`` (prometheus_client) is imported on use: ``tooldeck.observability.metrics``.
"""

from tooldeck.observability.audit import AuditRecord, AuditSink, AuditStore
from tooldeck.observability.metering import BucketStats, CallStats, parse_since, percentile
from tooldeck.observability.redact import redact
from tooldeck.observability.tracing import ToolTracer, make_tracer_provider

__all__ = [
    "AuditRecord",
    "AuditSink",
    "AuditStore",
    "BucketStats",
    "CallStats",
    "ToolTracer",
    "make_tracer_provider",
    "parse_since",
    "percentile",
    "redact",
]
