"""``/api/approvals``: pending confirmations, approved (maybe with edited arguments) or denied."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from typing import Annotated, Any

from fastapi import APIRouter, Body, Header, HTTPException, Request
from pydantic import BaseModel, ConfigDict

from tooldeck.agent.calls import run_of_channel
from tooldeck.agent.contracts import ConfirmRequest
from tooldeck.observability.redact import redact
from tooldeck.providers.approvals import Approval, Decider, visible_to
from tooldeck.server.http import (
    Problem,
    caller_of,
    is_approver,
    problems,
    run_errors,
    runtime_of,
)

__all__ = ["router"]

router = APIRouter(prefix="/api/approvals", tags=["approvals"])


class ApproveBody(BaseModel):
    """Approve a pending call."""

    model_config = ConfigDict(extra="forbid")

    arguments: dict[str, Any] | None = None
    """Edited arguments to run instead of the requested ones."""
    approver: str | None = None
    """Who approves."""
    token: str | None = None
    """The secret of the approval's page link (MCP URL-mode elicitation), if that is
    how the caller got here."""


class DenyBody(BaseModel):
    """Deny a pending call."""

    model_config = ConfigDict(extra="forbid")

    message: str | None = None
    """Why; the model sees it in the ``denied`` error."""
    approver: str | None = None
    """Who denies."""
    token: str | None = None
    """The secret of the approval's page link, as for approving."""


@router.get("", summary="Pending approvals")
def pending(request: Request) -> list[dict[str, Any]]:
    """The caller's calls waiting for a decision (an approver's: everyone's), oldest first.

    Arguments are redacted as in the audit log: a key in them is not shown in clear.
    """
    approvals = runtime_of(request).approvals.pending(
        caller_of(request), privileged=is_approver(request)
    )
    return [redact(a.as_dict()) for a in approvals]


@router.get(
    "/{approval_id}",
    summary="One approval",
    responses={**problems(404)},
)
def one(
    approval_id: str,
    request: Request,
    token: Annotated[str | None, Header(alias="X-Approval-Token")] = None,
) -> dict[str, Any]:
    """One approval, if the caller may see it.

    Their own, an approver's, or any with the secret of its page link in
    ``X-Approval-Token`` (a header, so that it stays out of access logs); 404 otherwise
    (its existence is not disclosed).
    """
    store = runtime_of(request).approvals
    approval = store.linked(approval_id, token) if token else store.get(approval_id)
    if approval is None or not (
        token
        or visible_to(
            caller_of(request), approval.request.principal, privileged=is_approver(request)
        )
    ):
        raise HTTPException(status_code=404, detail=f"no approval with id {approval_id!r}")
    return redact(approval.as_dict())  # type: ignore[no-any-return]


@router.post(
    "/{approval_id}/approve",
    summary="Approve a call",
    responses={
        403: {"model": Problem, "description": "Asked of another principal or channel"},
        **problems(400, 404, 409),
    },
)
async def approve(
    approval_id: str, request: Request, body: Annotated[ApproveBody | None, Body()] = None
) -> dict[str, Any]:
    """Approve; the caller then repeats the same call (same tool, arguments, user) to run it.

    The body is optional (``curl -X POST .../approve``): a browser on another origin is
    refused by its ``Origin`` before it gets here (``server.guard``).

    Only the principal whose REST call asked for it, or an approver in
    ``[approvals] approvers``, may decide it (403 otherwise). A chat run's call is
    decided through its run (as ``POST /api/runs/{id}/confirm``), which then goes on.
    """
    body = body or ApproveBody()
    confirm = ConfirmRequest(approve=True, arguments=body.arguments)
    return await _decide(request, approval_id, body, confirm)


@router.post(
    "/{approval_id}/deny",
    summary="Deny a call",
    responses={
        403: {"model": Problem, "description": "Asked of another principal or channel"},
        **problems(400, 404, 409),
    },
)
async def deny(
    approval_id: str, request: Request, body: Annotated[DenyBody | None, Body()] = None
) -> dict[str, Any]:
    """Deny; the caller's repeated call answers ``denied`` with the message (body optional)."""
    body = body or DenyBody()
    confirm = ConfirmRequest(approve=False, message=body.message)
    return await _decide(request, approval_id, body, confirm)


async def _decide(
    request: Request, approval_id: str, body: ApproveBody | DenyBody, confirm: ConfirmRequest
) -> dict[str, Any]:
    """Decide in the store, or, for a run's call, through the run's engine.

    A run waits on its engine (the embedded run manager, or a Temporal workflow's
    ``confirm`` update), not on the store: deciding only the stored approval would
    leave a Temporal run waiting until its time-out. So a decision of a call whose
    channel is ``run:<id>`` is the run's confirm, by the same rules (the run's user or
    an approver), and the approval is returned once the store holds the decision.
    """
    runtime = runtime_of(request)
    store, by = runtime.approvals, _decider(request, body.token)
    approval = await asyncio.to_thread(store.get, approval_id)
    run_id = None if approval is None else run_of_channel(approval.request.channel)
    if run_id is None or body.token is not None:
        if confirm.approve:
            edited = confirm.arguments
            decide = functools.partial(store.approve, approval_id, edited, _name(by, body), by)
        else:
            decide = functools.partial(
                store.deny, approval_id, confirm.message, _name(by, body), by
            )
        return await asyncio.to_thread(_decided, decide)
    caller, approver = caller_of(request), is_approver(request)
    with run_errors():
        run = await runtime.runs.get(run_id)
        if not visible_to(caller, run.user, privileged=approver):  # before saying anything
            raise HTTPException(
                status_code=403,
                detail=f"approval {approval_id} is a call of another user's run; only they "
                "or an approver in [approvals] approvers may decide it",
            )
        pending = run.pending.approval_id if run.pending is not None else None
        if pending != approval_id:
            raise HTTPException(
                status_code=409,
                detail=f"run {run_id} is {run.state}"
                + (f" and waits on approval {pending} first" if pending else "")
                + f"; approval {approval_id} cannot be decided now",
            )
        await runtime.runs.confirm(run_id, confirm, user=caller, privileged=approver)
    with contextlib.suppress(TimeoutError):  # a worker records it as the run goes on
        approval = await store.decided(approval_id, _RECORDED_S)
    return redact(approval.as_dict())  # type: ignore[no-any-return,union-attr]


_RECORDED_S = 10.0
"""Seconds a run's decision may take to reach the approval store (a worker's activity)."""


def _decider(request: Request, token: str | None = None) -> Decider:
    principal = caller_of(request) or "anonymous"
    return Decider(
        principal=principal, channel="rest", privileged=is_approver(request), token=token
    )


def _name(by: Decider, body: ApproveBody | DenyBody) -> str | None:
    """The approver recorded: the verified principal, else the name the body gives."""
    return by.principal if by.principal != "anonymous" else body.approver


def _decided(decide: Any) -> dict[str, Any]:
    try:
        approval: Approval = decide()
    except KeyError as exc:
        raise HTTPException(status_code=404, detail=str(exc.args[0])) from None
    except PermissionError as exc:
        raise HTTPException(status_code=403, detail=str(exc)) from None
    except ValueError as exc:
        raise HTTPException(status_code=409, detail=str(exc)) from None
    return redact(approval.as_dict())  # type: ignore[no-any-return]
