"""Observability: the audit store (and, later, tracing)."""

from tooldeck.observability.audit import AuditRecord, AuditSink, AuditStore
from tooldeck.observability.redact import redact

__all__ = ["AuditRecord", "AuditSink", "AuditStore", "redact"]
