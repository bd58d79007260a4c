"""OpenTelemetry spans for tool calls, after the GenAI semantic conventions (``execute_tool``).

One span per call, named ``execute_tool <tool name>``, kind INTERNAL, a child of the
caller's current span (an agent's, or a REST request's ``traceparent``) and the parent
of whatever the tool does (``execute_script``'s inner calls nest under it). Attributes:

- ``gen_ai.operation.name`` = ``execute_tool``, ``gen_ai.tool.name``, ``gen_ai.tool.type`` =
  ``function``, ``gen_ai.tool.call.id`` (the call's request id);
- on error, ``error.type`` (the ``ToolError`` type) and status ERROR with the message;
- ``tooldeck.status``, ``.source_id``, ``.as_of``, ``.provider``, ``.profile``,
  ``.attempts``, ``.duration_ms``;
- with ``capture_content``, ``gen_ai.tool.call.arguments`` (redacted) and
  ``gen_ai.tool.call.result`` (the text the model sees), which the conventions make
  opt-in because they may hold sensitive data.

Spec: https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/ (execute tool span).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import ProxyTracerProvider, Span, SpanKind, Status, StatusCode

from tooldeck.core.context import ToolContext
from tooldeck.core.result import ToolResult
from tooldeck.core.tool import Arguments
from tooldeck.exceptions import ConfigError
from tooldeck.observability.redact import redact, redact_text

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

__all__ = ["TRACER_NAME", "ToolTracer", "global_tracer", "make_tracer_provider"]

TRACER_NAME = "tooldeck"


class ToolTracer:
    """Opens and closes the ``execute_tool`` span of each call.

    Args:
        tracer: The OpenTelemetry tracer spans come from.
        capture_content: Also record arguments and result text (opt-in).
    """

    def __init__(self, tracer: trace.Tracer, *, capture_content: bool = False) -> None:
        self.tracer = tracer
        self.capture_content = capture_content

    def start(
        self, name: str, arguments: Arguments, ctx: ToolContext | None
    ) -> tuple[Span, object]:
        """Start the span of a call to ``name`` and make it current; returns (span, token)."""
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.type": "function",
        }
        if ctx is not None:
            if ctx.request_id:
                attributes["gen_ai.tool.call.id"] = ctx.request_id
            if ctx.profile:
                attributes["tooldeck.profile"] = ctx.profile
        if self.capture_content:
            attributes["gen_ai.tool.call.arguments"] = _arguments_text(arguments)
        span = self.tracer.start_span(
            f"execute_tool {name}", kind=SpanKind.INTERNAL, attributes=attributes
        )
        return span, otel_context.attach(trace.set_span_in_context(span))

    def end(self, span: Span, token: object, result: ToolResult | None) -> None:
        """Restore the caller's context and end ``span`` with ``result`` (None: cancelled)."""
        otel_context.detach(token)  # type: ignore[arg-type]
        if result is None:
            span.set_attribute("error.type", "cancelled")
            span.set_status(Status(StatusCode.ERROR, "cancelled"))
            span.end()
            return
        meta = result.metadata
        attributes: dict[str, Any] = {"tooldeck.status": result.status}
        for key, value in (
            ("gen_ai.tool.call.id", meta.request_id),
            ("tooldeck.source_id", result.source_id),
            ("tooldeck.as_of", result.as_of),
            ("tooldeck.provider", meta.provider),
            ("tooldeck.attempts", meta.attempts),
            ("tooldeck.duration_ms", meta.duration_ms),
        ):
            if value is not None:
                attributes[key] = value
        if self.capture_content:
            attributes["gen_ai.tool.call.result"] = redact_text(result.to_llm())
        span.set_attributes(attributes)
        if result.error is not None:
            span.set_attribute("error.type", result.error.type.value)
            span.set_status(Status(StatusCode.ERROR, redact_text(result.error.message)))
        span.end()


def global_tracer(*, capture_content: bool = False) -> ToolTracer | None:
    """A ``ToolTracer`` on the application's global tracer provider, or None when unset.

    A host application that configured OpenTelemetry before building the runtime gets
    its spans there; otherwise tracing costs nothing (no no-op spans on the hot path).
    """
    provider = trace.get_tracer_provider()
    if isinstance(provider, ProxyTracerProvider):
        return None
    return ToolTracer(provider.get_tracer(TRACER_NAME), capture_content=capture_content)


def make_tracer_provider(
    exporter: Literal["console", "otlp"],
    *,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    service_name: str = "tooldeck",
    schedule_delay_ms: int = 5000,
) -> TracerProvider:
    """A tracer provider exporting in batches to the console or an OTLP/HTTP endpoint.

    Args:
        exporter: ``console`` (stdout) or ``otlp`` (protobuf over HTTP).
        endpoint: OTLP traces URL, e.g. ``http://127.0.0.1:4318/v1/traces``; None
            lets the exporter use ``OTEL_EXPORTER_OTLP_*`` or its default.
        headers: Extra HTTP headers for OTLP (e.g. an API key).
        service_name: The ``service.name`` resource attribute.
        schedule_delay_ms: Longest time a finished span waits before export (ms).

    Raises:
        ConfigError: ``otlp`` without the exporter installed (``tooldeck[otel]``).
    """
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        ConsoleSpanExporter,
        SpanExporter,
    )

    span_exporter: SpanExporter
    if exporter == "console":
        span_exporter = ConsoleSpanExporter(out=sys.stdout)  # the current stdout
    else:
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError:
            raise ConfigError(
                "tracing.exporter = 'otlp' needs the OTLP exporter: pip install 'tooldeck[otel]'"
            ) from None
        span_exporter = OTLPSpanExporter(endpoint=endpoint, headers=dict(headers or {}))
    provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
    provider.add_span_processor(
        BatchSpanProcessor(span_exporter, schedule_delay_millis=schedule_delay_ms)
    )
    return provider


def _arguments_text(arguments: Arguments) -> str:
    """Redacted JSON text of ``arguments``, at most 10,000 characters."""
    value: Any = arguments
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    if isinstance(value, str):
        try:
            value = json.loads(value or "{}")
        except ValueError:
            value = {"_raw": value[:10_000]}
    return json.dumps(redact(value), default=str, ensure_ascii=False)[:10_000]
