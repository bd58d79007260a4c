"""``/api/chat`` and ``/api/runs``: ask a question, follow the run, confirm or cancel it.

Contracts: ``docs/contracts.md`` (seed 003). Server-Sent Events carry
``id: <run_id>:<seq>``, ``event: <type>`` and the ``RunEvent`` as JSON ``data``. A client
that lost the stream reconnects with the ``Last-Event-ID`` header (an ``EventSource``
does it by itself on ``GET /api/runs/{id}/events``; on ``POST /api/chat/stream`` the
header resumes that run instead of starting a new one) and receives every later event.
"""

from __future__ import annotations

from collections.abc import AsyncIterable
from typing import Annotated

from fastapi import APIRouter, Depends, Header, HTTPException, Query, Request, Response
from fastapi.sse import EventSourceResponse, ServerSentEvent

from tooldeck.agent.contracts import ChatRequest, ChatRun, ConfirmRequest, RunEvent
from tooldeck.agent.engine import RunEngine
from tooldeck.exceptions import ConfigError, RunNotFoundError
from tooldeck.providers.approvals import visible_to
from tooldeck.server.http import caller_of, is_approver, problems, run_errors, runtime_of

__all__ = ["router"]

router = APIRouter(tags=["chat"])

_WHY = {
    "e404": "No run has this id (among the caller's runs), or the profile is unknown.",
    "e409": "The run's state does not allow this (an illegal transition), or "
    "Last-Event-ID names an event of another run.",
}
_ERRORS = problems(404, 409, **_WHY)
_BODY_ERRORS = problems(400, 404, 409, **_WHY)

LastEventId = Annotated[
    str,
    Header(
        pattern=r"^\s*(([A-Za-z0-9_-]+:)?\d+)?\s*$",
        description="``<run_id>:<seq>`` of the last event received (resumes after it).",
    ),
]


def _runs(request: Request) -> RunEngine:
    return runtime_of(request).runs


async def _start(request: Request, body: ChatRequest) -> ChatRun:
    with run_errors():
        try:
            return await _runs(request).start(body, user=caller_of(request))
        except ConfigError as exc:  # unknown profile
            raise HTTPException(status_code=404, detail=str(exc)) from None


async def _get(request: Request, run_id: str) -> ChatRun:
    """The run, if the caller may see it (its own, or any for an approver); else 404.

    Another user's run answers as an unknown one: its existence is not disclosed.
    """
    with run_errors():
        run = await _runs(request).get(run_id)
        if not visible_to(caller_of(request), run.user, privileged=is_approver(request)):
            raise RunNotFoundError(f"no run {run_id!r}")
        return run


def _after(last_event_id: str, run_id: str | None = None) -> tuple[str | None, int]:
    """(run id, sequence number) of a ``Last-Event-ID`` of the form ``<run_id>:<seq>``."""
    if not last_event_id.strip():
        return run_id, 0
    head, _, tail = last_event_id.strip().rpartition(":")
    if head and run_id and head != run_id:
        raise HTTPException(
            status_code=409,
            detail=f"Last-Event-ID {last_event_id!r} is an event of another run than "
            f"{run_id!r}; send the id of an event of this stream",
        )
    return head or run_id, int(tail)


async def _sse(runs: RunEngine, run_id: str, after: int) -> AsyncIterable[ServerSentEvent]:
    event: RunEvent
    async for event in runs.events(run_id, after):
        yield ServerSentEvent(
            id=f"{event.run_id}:{event.seq}", event=event.type, data=event.model_dump(mode="json")
        )


@router.post(
    "/api/chat",
    response_model=ChatRun,
    summary="Ask a question; the answer in one response",
    responses={
        202: {"model": ChatRun, "description": "The run waits for a confirmation."},
        **problems(400, 404, **_WHY),
    },
)
async def chat(body: ChatRequest, request: Request, response: Response) -> ChatRun:
    """Run the agent and return the run once it completed, failed, or waits for input.

    A run that waits for a confirmation is returned with status 202 and ``pending``;
    confirm it with ``POST /api/runs/{id}/confirm``, then read ``GET /api/runs/{id}``.
    """
    run = await _start(request, body)
    with run_errors():
        run = await _runs(request).wait(run.run_id)
    if run.state == "waiting_input":
        response.status_code = 202
    return run


async def _stream_target(
    body: ChatRequest,
    request: Request,
    last_event_id: LastEventId = "",
) -> tuple[str, int]:
    """(run id, seq to stream after): a new run, or the run ``Last-Event-ID`` names.

    A dependency, so a bad header or profile is an error response, not a broken stream.
    """
    run_id, after = _after(last_event_id)
    if run_id is None:
        return (await _start(request, body)).run_id, 0
    await _get(request, run_id)
    return run_id, after


async def _replay_target(
    run_id: str,
    request: Request,
    after: Annotated[int, Query(ge=0, description="Only events with a larger seq.")] = 0,
    last_event_id: LastEventId = "",
) -> tuple[str, int]:
    """(run id, seq to stream after) of ``GET /api/runs/{id}/events``."""
    await _get(request, run_id)
    _, seq = _after(last_event_id, run_id)
    return run_id, max(seq, after)


@router.post(
    "/api/chat/stream",
    response_class=EventSourceResponse,
    responses=_BODY_ERRORS,
    summary="Ask a question; the run's events as Server-Sent Events",
)
async def chat_stream(
    request: Request, target: Annotated[tuple[str, int], Depends(_stream_target)]
) -> AsyncIterable[ServerSentEvent]:
    """Start a run and stream its events until it ends.

    The stream ends after ``run.completed``, ``run.failed`` or ``run.cancelled``. With
    ``Last-Event-ID: <run_id>:<seq>``, resume that run instead of starting one.
    """
    async for item in _sse(_runs(request), *target):
        yield item


@router.get("/api/runs", response_model=list[ChatRun], summary="Recent runs")
async def list_runs(
    request: Request, limit: Annotated[int, Query(ge=1, le=500)] = 50
) -> list[ChatRun]:
    """The caller's newest runs first (an approver's: everyone's).

    This process's runs, and with the audit database on, all.
    """
    user = None if is_approver(request) else (caller_of(request) or "anonymous")
    with run_errors():
        return await _runs(request).recent(limit, user=user)


@router.get("/api/runs/{run_id}", response_model=ChatRun, responses=_ERRORS, summary="A run")
async def get_run(run_id: str, request: Request) -> ChatRun:
    """The run's state, answer or pending confirmation."""
    return await _get(request, run_id)


@router.get(
    "/api/runs/{run_id}/events",
    response_class=EventSourceResponse,
    responses=_ERRORS,
    summary="A run's events as Server-Sent Events",
)
async def run_events(
    request: Request, target: Annotated[tuple[str, int], Depends(_replay_target)]
) -> AsyncIterable[ServerSentEvent]:
    """Replay the events after ``Last-Event-ID`` (or ``?after=``), then follow the run live."""
    async for item in _sse(_runs(request), *target):
        yield item


@router.post(
    "/api/runs/{run_id}/confirm",
    response_model=ChatRun,
    responses=_BODY_ERRORS,
    summary="Approve or deny the call a run waits on",
)
async def confirm_run(run_id: str, body: ConfirmRequest, request: Request) -> ChatRun:
    """Decide the pending confirmation; the run resumes (409 unless ``waiting_input``).

    Only the run's own user, or an approver in ``[approvals] approvers``, decides it.
    """
    await _get(request, run_id)
    with run_errors():
        return await _runs(request).confirm(
            run_id, body, user=caller_of(request), privileged=is_approver(request)
        )


@router.post(
    "/api/runs/{run_id}/cancel", response_model=ChatRun, responses=_ERRORS, summary="Cancel a run"
)
async def cancel_run(run_id: str, request: Request) -> ChatRun:
    """Cancel a run of the caller's that has not finished (409 once it has)."""
    await _get(request, run_id)
    with run_errors():
        return await _runs(request).cancel(run_id, by=caller_of(request))
