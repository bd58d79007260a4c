"""``/api/schedules``: the caller's schedules over HTTP.

Creating and cancelling go through the tools (``schedule_tool_call``, which needs a
person's approval, and ``cancel_schedule``), so the profile's view, confirmation and
the audit apply as to any call; listing, pausing and resuming read and change the
caller's own schedules (an approver's: anyone's listing). Arguments are shown redacted,
as the approvals API and the audit log show them.
"""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, HTTPException, Request, Response

from tooldeck.core.context import principal_of
from tooldeck.packs.schedules.store import ScheduleStore
from tooldeck.packs.schedules.tools import ScheduleInfo, ScheduleRequest
from tooldeck.server.http import (
    PROFILE,
    TOOL_RESPONSES,
    USER,
    call_context,
    is_approver,
    problems,
    redact,
    runtime_of,
    tool_response,
    view_of,
)

__all__ = ["router"]

router = APIRouter(prefix="/api/schedules", tags=["schedules"])


def _store(request: Request) -> ScheduleStore:
    store = runtime_of(request).services.get_optional(ScheduleStore)
    if store is None:
        why = runtime_of(request).packs.get("schedules", "off")
        raise HTTPException(404, f"the schedules pack is {why} ([schedules] enabled = true)")
    return store


@router.get("", summary="List schedules", responses=problems(404))
def list_schedules(request: Request) -> list[ScheduleInfo]:
    """The caller's schedules (an approver's: everyone's), by owner and name."""
    owner = None if is_approver(request) else principal_of(call_context(request))
    return [ScheduleInfo(**redact(s.as_dict())) for s in _store(request).owned_by(owner)]


@router.post(
    "",
    summary="Schedule a tool call",
    responses=TOOL_RESPONSES,
    openapi_extra={
        "parameters": [PROFILE, USER],
        "requestBody": {
            "required": True,
            "description": "The arguments of schedule_tool_call.",
            "content": {"application/json": {"schema": ScheduleRequest.model_json_schema()}},
        },
    },
)
async def create_schedule(request: Request) -> Response:
    """Run ``schedule_tool_call``: answers ``confirmation_required`` until a person approves.

    Approve it (``POST /api/approvals/{id}/approve``), then send the same request again.
    The body is the tool's arguments, checked by the tool (a ``validation`` result).
    """
    body = await request.body()
    call = view_of(request).execute("schedule_tool_call", body or b"{}", call_context(request))
    return await tool_response(request, call)


@router.delete(
    "/{name}",
    summary="Cancel a schedule",
    responses=TOOL_RESPONSES,
    openapi_extra={"parameters": [PROFILE, USER]},
)
async def cancel_schedule(name: str, request: Request) -> Response:
    """Run ``cancel_schedule`` for the caller's schedule ``name``."""
    call = view_of(request).execute("cancel_schedule", {"name": name}, call_context(request))
    return await tool_response(request, call)


def _pause(request: Request, name: str, paused: bool) -> dict[str, Any]:
    owner = principal_of(call_context(request))
    changed = _store(request).set_paused(owner, name, paused, time.time())
    if changed is None:
        raise HTTPException(404, f"you have no schedule {name!r}")
    return ScheduleInfo(**redact(changed.as_dict())).model_dump()


@router.post("/{name}/pause", summary="Pause a schedule", responses=problems(404))
def pause_schedule(name: str, request: Request) -> dict[str, Any]:
    """Stop the caller's schedule ``name`` from firing until it is resumed."""
    return _pause(request, name, True)


@router.post("/{name}/resume", summary="Resume a schedule", responses=problems(404))
def resume_schedule(name: str, request: Request) -> dict[str, Any]:
    """Let it fire again, from its next fire after now (missed fires are not made up)."""
    return _pause(request, name, False)
