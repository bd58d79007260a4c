"""OpenTelemetry spans per tool call, checked with the SDK's in-memory exporter."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from fastapi.testclient import TestClient
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from tooldeck.config import load_settings
from tooldeck.runtime import Runtime, build_runtime
from tooldeck.server.app import create_app

pytestmark = pytest.mark.anyio


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> TracerProvider:
    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(exporter))
    return tp


def make_runtime(provider: TracerProvider, **settings: object) -> Runtime:
    return build_runtime(
        load_settings(
            profiles={"analyst": {"tools": ["get_*", "execute_script"]}},
            builtin={"python": {"preload": ["json"]}},
            policy={"tools": {"execute_script": {"requires_confirmation": False}}},
            **settings,
        ),
        tracer_provider=provider,
    )


@pytest.fixture
async def runtime(provider: TracerProvider) -> AsyncIterator[Runtime]:
    rt = make_runtime(provider)
    await rt.start()
    yield rt
    await rt.aclose()


def tool_spans(exporter: InMemorySpanExporter) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.name.startswith("execute_tool ")]


async def test_one_span_per_call_with_genai_attributes(
    runtime: Runtime, exporter: InMemorySpanExporter
) -> None:
    result = await runtime.view("analyst").execute(
        "get_positions", {"symbol": "AAPL"}, runtime.context(profile="analyst")
    )
    (span,) = tool_spans(exporter)
    assert span.name == "execute_tool get_positions" and span.kind is SpanKind.INTERNAL
    attributes = dict(span.attributes or {})
    assert attributes["gen_ai.operation.name"] == "execute_tool"
    assert attributes["gen_ai.tool.name"] == "get_positions"
    assert attributes["gen_ai.tool.type"] == "function"
    assert attributes["gen_ai.tool.call.id"] == result.metadata.request_id
    assert attributes["tooldeck.source_id"] == "tool:positions:v1"
    assert attributes["tooldeck.as_of"] == "2026-11-20"
    assert (
        attributes["tooldeck.profile"] == "analyst" and attributes["tooldeck.status"] == "success"
    )
    assert "gen_ai.tool.call.arguments" not in attributes  # content is opt-in
    assert span.status.status_code is StatusCode.UNSET


async def test_error_span_carries_the_error_type_and_a_caller_id(
    runtime: Runtime, exporter: InMemorySpanExporter
) -> None:
    await runtime.provider.execute(
        "get_positions", {"symbol": ""}, runtime.context(request_id="call_7")
    )
    await runtime.provider.execute("get_positons", {}, runtime.context())
    bad, missing = tool_spans(exporter)
    assert bad.attributes is not None and bad.attributes["error.type"] == "validation"
    assert bad.attributes["gen_ai.tool.call.id"] == "call_7"
    assert bad.status.status_code is StatusCode.ERROR and "symbol" in (bad.status.description or "")
    assert missing.attributes is not None and missing.attributes["error.type"] == "not_found"


async def test_spans_nest_under_the_callers_span_and_inner_calls_under_the_script(
    runtime: Runtime, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    agent = provider.get_tracer("agent")
    with agent.start_as_current_span("invoke_agent") as parent:
        result = await runtime.view("analyst").execute(
            "execute_script",
            {"code": "result = tools.get_quotes(symbol='AAPL')['quotes'][0]['symbol']"},
            runtime.context(profile="analyst"),
        )
    assert result.success, result.error
    spans = {s.name: s for s in tool_spans(exporter)}
    script, inner = spans["execute_tool execute_script"], spans["execute_tool get_quotes"]
    assert script.parent is not None and script.parent.span_id == parent.get_span_context().span_id
    assert inner.parent is not None and inner.parent.span_id == script.context.span_id
    assert inner.context.trace_id == parent.get_span_context().trace_id


async def test_capture_content_records_redacted_arguments_and_the_model_text(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    runtime = make_runtime(provider, tracing={"capture_content": True})
    try:
        await runtime.provider.execute(
            "get_quotes",
            '{"symbol": "AAPL", "api_key": "sk-secret-0123456789abcdef"}',
            runtime.context(),
        )
    finally:
        await runtime.aclose()
    (span,) = tool_spans(exporter)
    assert span.attributes is not None
    assert span.attributes["gen_ai.tool.call.arguments"] == '{"symbol": "AAPL", "api_key": "***"}'
    # api_key is not an argument of get_quotes: the model text is that error, redacted too
    result = str(span.attributes["gen_ai.tool.call.result"])
    assert "Invalid arguments for get_quotes" in result and "sk-secret" not in result


def test_rest_traceparent_is_the_parent_of_the_tool_span(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    trace_id, span_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    with TestClient(create_app(make_runtime(provider)), base_url="http://127.0.0.1") as client:
        response = client.post(
            "/api/tools/execute/get_quotes",
            json={"symbol": "MSFT"},
            headers={"traceparent": f"00-{trace_id}-{span_id}-01"},
        )
        plain = client.post("/api/tools/execute/get_quotes", json={"symbol": "MSFT"})
    assert response.status_code == 200 and plain.status_code == 200
    traced, untraced = tool_spans(exporter)
    assert traced.parent is not None and traced.parent.is_remote
    assert (f"{traced.context.trace_id:032x}", f"{traced.parent.span_id:016x}") == (
        trace_id,
        span_id,
    )
    assert untraced.parent is None and untraced.context.trace_id != traced.context.trace_id


def test_tracing_is_off_by_default_and_the_console_exporter_is_owned_and_shut_down(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert build_runtime(load_settings(audit={"enabled": False})).tracer is None
    runtime = build_runtime(load_settings(tracing={"exporter": "console"}))

    async def call() -> None:
        await runtime.provider.execute("get_quotes", {"symbol": "AAPL"}, runtime.context())
        await runtime.aclose()  # shuts the provider down, which exports the batch

    asyncio.run(call())
    assert '"name": "execute_tool get_quotes"' in capsys.readouterr().out


async def test_a_chat_run_is_one_invoke_agent_span_over_its_tool_spans(
    runtime: Runtime, exporter: InMemorySpanExporter
) -> None:
    from tooldeck.agent.contracts import ChatRequest

    run = await runtime.runs.start(
        ChatRequest(question="How much is my AAPL position worth and how is it doing?")
    )
    run = await runtime.runs.wait(run.run_id)
    spans = {s.name: s for s in exporter.get_finished_spans()}
    agent = spans["invoke_agent tooldeck"]
    assert agent.attributes is not None
    assert agent.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert agent.attributes["tooldeck.run_id"] == run.run_id
    assert agent.attributes["tooldeck.grounding.verdict"] == "grounded"
    assert agent.attributes["tooldeck.run.state"] == "completed"
    for name in ("execute_tool get_positions", "execute_tool get_quotes"):
        tool = spans[name]
        assert tool.parent is not None and tool.parent.span_id == agent.context.span_id
        assert tool.context.trace_id == agent.context.trace_id
