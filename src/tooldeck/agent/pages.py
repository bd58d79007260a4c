"""``read_result``: a run's model reads the part of a long result its view left out.

A result longer than the model's budget is shown as its head and tail with a marker
between them (``ToolResult.to_llm``): ``…[characters 13333 to 4986667 of 5000000 left
out; request_id=call_7]…``. From then on the run's model is also given ``read_result``,
which pages through that text, so every byte of the result stays reachable while the
model's context stays within its budget. Only the results of the same run can be read
(the tool looks in the run's own ``RunTools``), so another user's or another run's
results cannot be named.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field

from tooldeck.core.context import ToolContext
from tooldeck.core.definition import ToolAnnotations
from tooldeck.core.result import ToolResult
from tooldeck.core.tool import BaseTool
from tooldeck.exceptions import InvalidArgumentsError

__all__ = ["PAGE_CHARS", "READ_RESULT", "ReadResult"]

READ_RESULT = "read_result"
"""The paging tool's name."""
PAGE_CHARS = 12_000
"""Most characters one ``read_result`` call returns (under the model budget of 20,000)."""


class ReadRequest(BaseModel):
    """Arguments of ``read_result``."""

    model_config = ConfigDict(extra="forbid")

    request_id: str = Field(
        min_length=1, max_length=200, description="The request_id in the cut result's marker."
    )
    offset: int = Field(0, ge=0, description="First character to read (the marker gives it).")
    limit: int = Field(PAGE_CHARS, ge=1, le=PAGE_CHARS, description="Most characters to read.")


class ReadResult(BaseTool[ReadRequest, ToolResult]):
    """Reads characters ``offset`` to ``offset + limit`` of one of the run's results.

    The text is the one ``ToolResult.to_llm`` shows (``llm_body``), so the marker's
    offsets apply. The page comes back as the result's text, followed by a line
    giving the range read and the next offset (``data`` holds the same as fields).

    Args:
        lookup: The run's result with a ``request_id`` (``RunTools.result``), or None.
    """

    name = READ_RESULT
    description = (
        "Read part of a tool result that was too long to show whole: give the request_id "
        "and the offset from the result's '…[characters A to B of N left out; "
        "request_id=…]…' marker; call again with the next offset for more."
    )
    RequestModel = ReadRequest
    annotations = ToolAnnotations(read_only=True, open_world=False, title="Read a long result")
    blocking = False

    def __init__(self, lookup: Callable[[str], ToolResult | None]) -> None:
        self.lookup = lookup

    def execute_internal(self, request: ReadRequest, ctx: ToolContext) -> ToolResult:
        """The page, or a ``validation`` error naming what exists."""
        result = self.lookup(request.request_id)
        if result is None or not result.success:
            raise InvalidArgumentsError.for_field(
                "request_id",
                f"no result of this run has request_id {request.request_id!r}; use the one "
                "in the marker of a result that was cut",
            )
        body = result.llm_body()
        if request.offset > len(body):
            raise InvalidArgumentsError.for_field(
                "offset", f"the result has {len(body)} characters; offset must be at most that"
            )
        end = min(len(body), request.offset + request.limit)
        following = end if end < len(body) else None
        tail = f"next offset: {following}" if following is not None else "that is the end"
        return ToolResult.ok(
            {"offset": request.offset, "end": end, "total": len(body), "next_offset": following},
            output=(
                f"{body[request.offset : end]}\n[characters {request.offset} to {end} of "
                f"{len(body)} of request_id={request.request_id}; {tail}]"
            ),
        )
