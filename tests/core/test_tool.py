from __future__ import annotations

import threading
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from tooldeck.core import BaseTool, ToolContext
from tooldeck.core.definition import ToolAnnotations
from tooldeck.exceptions import (
    InvalidArgumentsError,
    RegistrationError,
    ToolDeniedError,
    ToolUnavailableError,
    TransientToolError,
)

pytestmark = pytest.mark.anyio


class Req(BaseModel):
    model_config = ConfigDict(extra="forbid")
    symbol: str
    limit: int = 10


class Resp(BaseModel):
    as_of: str
    symbol: str
    thread: str


class SyncBlocking(BaseTool[Req, Resp]):
    """Reports the thread it ran on."""

    name = "sync_blocking"
    RequestModel = Req
    ResponseModel = Resp
    source_id = "tool:threads:v1"

    def execute_internal(self, request: Req, ctx: ToolContext) -> Resp:
        return Resp(
            as_of="2026-01-15", symbol=request.symbol, thread=threading.current_thread().name
        )


class SyncInline(SyncBlocking):
    name = "sync_inline"
    blocking = False


class AsyncTool(BaseTool[Req, dict[str, Any]]):
    name = "async_tool"
    description = "Echo."
    RequestModel = Req

    async def execute_internal(self, request: Req, ctx: ToolContext) -> dict[str, Any]:
        await ctx.emit("progress", done=1)
        return {"symbol": request.symbol, "limit": request.limit, "session": ctx.session_id}


class Raising(BaseTool[Req, Any]):
    name = "raising"
    RequestModel = Req
    blocking = False

    def execute_internal(self, request: Req, ctx: ToolContext) -> Any:
        kinds = {
            "invalid": InvalidArgumentsError(
                "symbol 'X' does not exist", details={"allowed": ["A"]}
            ),
            "transient": TransientToolError("try again"),
            "unavailable": ToolUnavailableError("service down"),
            "denied": ToolDeniedError("outside the allowed roots"),
        }
        if request.symbol in kinds:
            raise kinds[request.symbol]
        raise KeyError("secret-internal-state")


async def test_blocking_sync_tool_runs_in_a_worker_thread() -> None:
    result = await SyncBlocking().execute({"symbol": "AAPL"})
    assert result.success
    assert result.data["thread"] != threading.current_thread().name
    assert result.source_id == "tool:threads:v1"
    assert result.as_of == "2026-01-15"
    assert result.metadata.tool_name == "sync_blocking"
    assert result.metadata.tool_version == "1.0.0"
    assert result.metadata.duration_ms is not None and result.metadata.duration_ms >= 0
    assert result.metadata.request_id


async def test_non_blocking_sync_tool_runs_inline() -> None:
    result = await SyncInline().execute('{"symbol": "AAPL"}')
    assert result.data["thread"] == threading.current_thread().name


async def test_async_tool_gets_context_and_emits_events() -> None:
    events = []
    ctx = ToolContext(session_id="s-1", request_id="call-7", event_emitter=events.append)
    result = await AsyncTool().execute({"symbol": "MSFT"}, ctx)
    assert result.data == {"symbol": "MSFT", "limit": 10, "session": "s-1"}
    assert result.metadata.request_id == "call-7"
    assert [(e.type, dict(e.data), e.request_id) for e in events] == [
        ("progress", {"done": 1}, "call-7")
    ]


async def test_no_context_and_no_arguments_are_fine() -> None:
    result = await AsyncTool().execute()
    assert result.error is not None
    assert result.error.type == "validation"
    assert result.error.details == {
        "errors": [{"field": "symbol", "message": "Field required", "type": "missing"}]
    }


async def test_validation_errors_name_field_expectation_and_arguments() -> None:
    result = await AsyncTool().execute({"symbol": 5, "limit": "many", "extra": 1})
    assert result.error is not None
    message = result.error.message
    assert message.startswith("Invalid arguments for async_tool: ")
    assert "symbol: Input should be a valid string (got 5)" in message
    assert "limit: Input should be a valid integer" in message
    assert "extra: unexpected argument" in message
    assert message.endswith("Arguments: symbol (string, required), limit (integer).")
    assert not result.error.retryable


async def test_invalid_json_is_a_validation_error() -> None:
    result = await AsyncTool().execute('{"symbol": ')
    assert result.error is not None and result.error.type == "validation"
    assert "arguments are not valid JSON" in result.error.message


async def test_strict_mode_nulls_fall_back_to_defaults() -> None:
    result = await AsyncTool().execute('{"symbol": "A", "limit": null}')
    assert result.success and result.data["limit"] == 10
    required_null = await AsyncTool().execute('{"symbol": null}')
    assert required_null.error is not None and required_null.error.type == "validation"


@pytest.mark.parametrize(
    ("symbol", "error_type", "retryable"),
    [
        ("invalid", "validation", False),
        ("transient", "execution", True),
        ("unavailable", "unavailable", True),
        ("denied", "denied", False),
    ],
)
async def test_tool_failures_choose_their_envelope(
    symbol: str, error_type: str, retryable: bool
) -> None:
    result = await Raising().execute({"symbol": symbol})
    assert result.error is not None
    assert (result.error.type, result.error.retryable) == (error_type, retryable)


async def test_unexpected_exception_is_execution_with_traceback_for_audit_only() -> None:
    result = await Raising().execute({"symbol": "other"})
    assert result.error is not None
    assert result.error.type == "execution"
    assert result.error.message == "raising failed: KeyError: 'secret-internal-state'"
    assert result.error.details is not None
    assert "Traceback" in result.error.details["traceback"]
    assert "Traceback" not in result.to_llm()


def test_definition_from_class_attributes_and_docstring() -> None:
    definition = SyncBlocking().definition
    assert definition.name == "sync_blocking"
    assert definition.description == "Reports the thread it ran on."
    assert definition.input_schema["required"] == ["symbol"]
    assert definition.output_schema is not None
    assert set(definition.output_schema["properties"]) == {"as_of", "symbol", "thread"}
    assert definition.source_id == "tool:threads:v1"


def test_hand_written_schema_wins() -> None:
    class Handwritten(AsyncTool):
        name = "handwritten"
        input_schema = {
            "type": "object",
            "properties": {"symbol": {"type": "string", "description": "Ticker."}},
        }
        annotations = ToolAnnotations(read_only=True)

    assert Handwritten().definition.input_schema["properties"]["symbol"]["description"] == "Ticker."


def test_missing_name_or_model_is_a_registration_error() -> None:
    class NoName(AsyncTool):
        name = ""

    with pytest.raises(RegistrationError, match="has no name"):
        _ = NoName().definition

    class NoModel(BaseTool[Any, Any]):
        name = "no_model"

        def execute_internal(self, request: Any, ctx: ToolContext) -> Any:
            return None

    with pytest.raises(RegistrationError, match="no RequestModel and no input_schema"):
        _ = NoModel().definition
