"""``/api/approvals``: pending confirmations, approved (maybe with edited arguments) or denied."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, HTTPException, Request
from pydantic import BaseModel, ConfigDict

from tooldeck.observability.redact import redact
from tooldeck.providers.approvals import Approval, Decider, visible_to
from tooldeck.server.http import Problem, caller_of, is_approver, problems, runtime_of

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
async def pending(request: Request) -> list[dict[str, Any]]:
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
async def one(
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
async def approve(approval_id: str, body: ApproveBody, request: Request) -> dict[str, Any]:
    """Approve; the caller then repeats the same call (same tool, arguments, user) to run it.

    Only the principal whose REST call asked for it, or an approver in
    ``[approvals] approvers``, may decide it (403 otherwise).
    """
    store, by = runtime_of(request).approvals, _decider(request, body.token)
    return _decided(lambda: store.approve(approval_id, body.arguments, _name(by, body), by))


@router.post(
    "/{approval_id}/deny",
    summary="Deny a call",
    responses={
        403: {"model": Problem, "description": "Asked of another principal or channel"},
        **problems(400, 404, 409),
    },
)
async def deny(approval_id: str, body: DenyBody, request: Request) -> dict[str, Any]:
    """Deny; the caller's repeated call answers ``denied`` with the message."""
    store, by = runtime_of(request).approvals, _decider(request, body.token)
    return _decided(lambda: store.deny(approval_id, body.message, _name(by, body), by))


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
