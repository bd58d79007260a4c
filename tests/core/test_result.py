from __future__ import annotations

import pytest
from pydantic import ValidationError

from tooldeck.core.result import (
    ResultMetadata,
    ToolResult,
    trusted_metadata,
    trusted_success,
)
from tooldeck.core.tool import error_result


def test_trusted_constructors_equal_validated_ones() -> None:
    meta = trusted_metadata("t", "1.0.0", "r-1", 1.5, 2, "local")
    fast = trusted_success({"a": 1}, "tool:x:v1", "2026-01-15", meta)
    slow = ToolResult.ok(
        {"a": 1},
        source_id="tool:x:v1",
        as_of="2026-01-15",
        metadata=ResultMetadata(
            tool_name="t",
            tool_version="1.0.0",
            request_id="r-1",
            duration_ms=1.5,
            attempts=2,
            provider="local",
        ),
    )
    assert fast == slow
    assert fast.model_dump() == slow.model_dump()
    assert fast.model_dump_json() == slow.model_dump_json()
    assert ToolResult.model_validate_json(fast.model_dump_json()) == slow

    err_fast = error_result("timeout", "too slow", meta, retryable=True)
    err_slow = ToolResult.fail("timeout", "too slow", retryable=True, metadata=slow.metadata)
    assert err_fast.model_dump() == err_slow.model_dump()


def test_success_is_derived_and_dumped() -> None:
    assert ToolResult.ok(1).model_dump()["success"] is True
    assert ToolResult.fail("execution", "boom").model_dump()["success"] is False


def test_status_and_error_must_agree() -> None:
    with pytest.raises(ValidationError, match="error must be set exactly"):
        ToolResult(status="error")
    with pytest.raises(ValidationError):
        ToolResult(status="success", error={"type": "execution", "message": "x"})
    with pytest.raises(ValidationError):
        ToolResult(status="success", unknown_field=1)  # extra="forbid"


def test_to_llm_renders_data_and_provenance() -> None:
    result = ToolResult.ok({"price": 193.12}, source_id="tool:quotes:v1", as_of="2026-01-15")
    assert result.to_llm() == '{"price":193.12}\n[source_id: tool:quotes:v1 | as_of: 2026-01-15]'
    assert ToolResult.ok(output="plain text").to_llm() == "plain text"


def test_to_llm_errors_are_short_and_actionable() -> None:
    failed = ToolResult.fail("unavailable", "the quote service is down", retryable=True)
    assert (
        failed.to_llm()
        == "Error (unavailable): the quote service is down This may succeed if retried."
    )
    traced = ToolResult.fail("execution", "x failed", details={"traceback": "Traceback ... secret"})
    assert "Traceback" not in traced.to_llm()


def test_to_llm_keeps_the_head_and_the_tail_with_a_marker_and_the_full_data() -> None:
    rows = [f"row {i:03}" for i in range(100)]
    big = ToolResult.ok({"rows": rows}, metadata=ResultMetadata(request_id="abc"))
    whole = big.llm_body()
    head, marker, tail = big.to_llm(max_chars=210).split("\n")
    assert whole.startswith(head) and whole.endswith(tail)
    assert len(head) == 140 and len(tail) == 70  # two thirds, one third
    assert (
        marker
        == f"…[characters 140 to {len(whole) - 70} of {len(whole)} left out; request_id=abc]…"
    )
    assert "row 099" in tail  # the end of a list is often what matters
    assert big.data["rows"] == rows


def test_with_metadata_derives_a_copy() -> None:
    original = ToolResult.ok(1, metadata=ResultMetadata(attempts=1))
    derived = original.with_metadata(attempts=3)
    assert derived.metadata.attempts == 3
    assert original.metadata.attempts == 1


def test_a_dump_validates_back_and_contradictions_are_refused() -> None:
    result = ToolResult.fail("validation", "bad symbol")
    assert ToolResult.model_validate(result.model_dump()) == result
    with pytest.raises(ValidationError, match="contradicts"):
        ToolResult.model_validate({**result.model_dump(), "success": True})
