"""``/api/audit`` (call history) and ``/api/stats`` (metering), read from the audit store."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Path, Query, Request

from tooldeck.observability.audit import AuditRecord
from tooldeck.observability.metering import CallStats, parse_since
from tooldeck.server.http import TIME_SCHEMA, audit_of, caller_of, is_approver, problems

__all__ = ["router"]

router = APIRouter(prefix="/api", tags=["audit"])

ROW_ID_MAX = 2**63 - 1
"""The largest row id a database stores (a signed 64-bit integer)."""

SINCE_HELP = "A duration back from now (30m, 24h, 7d) or an ISO date/time."


def _time(value: str, name: str) -> datetime | None:
    if not value.strip():
        return None
    try:
        return parse_since(value)
    except OverflowError:  # a duration longer than the calendar: since the beginning
        return datetime.min.replace(tzinfo=UTC)
    except ValueError as exc:
        raise HTTPException(status_code=400, detail=f"{name}: {exc}") from None


Time = Annotated[str, Query(description=SINCE_HELP, json_schema_extra=TIME_SCHEMA)]


@router.get("/audit", summary="Call history", responses=problems(400))
def history(
    request: Request,
    tool: str | None = None,
    status: Literal["success", "error"] | None = None,
    error_type: str | None = None,
    profile: Annotated[
        str | None, Query(description='Only this profile; "" for calls made without one.')
    ] = None,
    since: Time = "",
    until: Time = "",
    before_id: Annotated[
        int | None, Query(ge=1, le=ROW_ID_MAX, description="Next page: records older than this id.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    run: Annotated[str | None, Query(description="Only the calls of this chat run.")] = None,
    session: Annotated[
        str | None, Query(description="Only the calls of this session (an MCP connection).")
    ] = None,
) -> dict[str, Any]:
    """The caller's recent calls (an approver's: everyone's), newest first.

    Without arguments and data (``/api/audit/{id}`` has them).

    Returns ``{"records": [...], "next_before_id": <id or null>}``; pass
    ``next_before_id`` as ``before_id`` for the next page.
    """
    records = audit_of(request).query(
        limit=limit,
        tool=tool or None,
        status=status,
        error_type=error_type or None,
        profile=profile,
        since=_time(since, "since"),
        until=_time(until, "until"),
        before_id=before_id,
        summary=True,
        user=_owner(request),
        run_id=run or None,
        session_id=session or None,
    )
    next_id = records[-1].id if len(records) == limit else None
    return {
        "records": [
            r.model_dump(
                mode="json", exclude={"arguments", "data", "error_details", "asked_arguments"}
            )
            for r in records
        ],
        "next_before_id": next_id,
    }


@router.get("/audit/{record_id}", summary="One call", responses=problems(404))
def record(record_id: Annotated[int, Path(ge=1, le=ROW_ID_MAX)], request: Request) -> AuditRecord:
    """One of the caller's calls with its arguments (redacted), result data and error details.

    Raises:
        HTTPException: 404 when there is no such record (or it was pruned, or it is
            another user's and the caller is not an approver).
    """
    found = audit_of(request).get(record_id, user=_owner(request))
    if found is None:
        raise HTTPException(status_code=404, detail=f"no audit record {record_id}")
    return found


def _owner(request: Request) -> str | None:
    """Whose records the caller reads: its own, or (None) everyone's for an approver."""
    return None if is_approver(request) else (caller_of(request) or "anonymous")


@router.get(
    "/stats", summary="Calls, errors and latency per tool or profile", responses=problems(400)
)
def stats(
    request: Request,
    since: Time = "24h",
    until: Time = "",
    by: Literal["tool", "profile"] = "tool",
    buckets: Annotated[int, Query(ge=0, le=200, description="Time buckets per series.")] = 0,
    tool: str | None = None,
) -> dict[str, Any]:
    """``{"since", "until", "by", "stats": [CallStats...]}``, most called first.

    A window that ends before it starts is empty.
    """
    start = _time(since, "since") or parse_since("24h")
    end = max(_time(until, "until") or datetime.now(UTC), start)
    rows: list[CallStats] = audit_of(request).stats(
        since=start, until=end, by=by, buckets=buckets, tool=tool or None
    )
    return {
        "since": start.isoformat(),
        "until": end.isoformat(),
        "by": by,
        "stats": [s.model_dump(mode="json") for s in rows],
    }
