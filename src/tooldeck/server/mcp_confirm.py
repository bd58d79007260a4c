"""Confirmation over MCP: a call a person must approve, asked in the client or on a page.

Three ways, by what the client declared (``elicitation_modes``) and its protocol:

- form elicitation: on a 2025-11-25 connection, ``elicitation/create`` in the middle of
  the call (``form_elicitation``); on 2026-07-28, an ``InputRequiredResult`` the client
  answers by repeating the call with the answer (``ask_for_confirmation``, recorded by
  ``apply_answers``);
- URL elicitation: the client opens the console's page for that one approval, its
  secret in the fragment (``url_elicitation``, ``ask_on_the_page``); the console must
  first prove it is this project's (``console_link``, ``server.console_proof``);
- neither: the call returns ``confirmation_required`` with the terminal command.

An answer decides only an approval asked on its own channel, for its own user, for
the repeat of that same call.
"""

from __future__ import annotations

import contextlib
import json
import time
from typing import TYPE_CHECKING, Any

from tooldeck.core.confirmation import (
    ConfirmationDecision,
    ConfirmationRequest,
    arguments_hash,
)
from tooldeck.core.context import ANONYMOUS
from tooldeck.providers.approvals import Decider
from tooldeck.runtime import Runtime
from tooldeck.server.console_proof import console_of, proves

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext
    from mcp_types import CallToolRequestParams, InputRequiredResult

__all__ = [
    "apply_answers",
    "ask_for_confirmation",
    "ask_on_the_page",
    "console_link",
    "elicitation_modes",
    "form_elicitation",
    "url_elicitation",
]


_CONFIRM_SCHEMA = {
    "type": "object",
    "properties": {
        "approve": {"type": "boolean", "title": "Run this call?", "default": False},
        "reason": {"type": "string", "title": "Reason (shown to the model if you deny)"},
    },
    "required": ["approve"],
}


def ask_for_confirmation(details: dict[str, Any]) -> InputRequiredResult:
    """A 2026-07-28 ``InputRequiredResult`` eliciting approval of a pending call.

    The client asks its user and repeats the call with the answer under the
    approval id; ``apply_answers`` records it and the confirming provider consumes it.
    """
    import mcp_types as types

    request = types.ElicitRequest(
        params=types.ElicitRequestFormParams(
            message=f"Allow {details.get('tool')} with arguments "
            f"{json.dumps(details.get('arguments', {}))}?"
            + (f" {details['reason']}" if details.get("reason") else ""),
            requested_schema=_CONFIRM_SCHEMA,
        )
    )
    return types.InputRequiredResult(input_requests={f"confirm:{details['approval_id']}": request})


def ask_on_the_page(details: dict[str, Any], link: str) -> InputRequiredResult:
    """A 2026-07-28 ``InputRequiredResult`` sending the user to the approval's page.

    The client opens ``link`` for its user and repeats the call; the repeat waits
    until the person decided there (``apply_answers``).
    """
    import mcp_types as types

    request = types.ElicitRequest(
        params=types.ElicitRequestURLParams(message=_page_message(details), url=link)
    )
    return types.InputRequiredResult(
        input_requests={f"confirm-url:{details['approval_id']}": request}
    )


def _page_message(details: dict[str, Any]) -> str:
    why = f" ({details['reason']})" if details.get("reason") else ""
    return (
        f"Approve or deny {details.get('tool')} with arguments "
        f"{json.dumps(details.get('arguments', {}))} on this page.{why}"
    )


async def apply_answers(
    runtime: Runtime, params: CallToolRequestParams, channel: str, user: str | None
) -> None:
    """Record the user's answers to ``ask_for_confirmation`` as decisions.

    An answer counts only for an approval this session asked for, for this caller
    (``user``), attached to the repeat of that same call (tool and arguments): a
    client cannot decide another client's or another user's approval, nor one of its
    own for a different call. An answer to
    ``ask_on_the_page`` is not a decision: accepted (the page was opened), the call
    waits until the person decides on the page or the approval expires; declined, the
    call is denied.
    """
    call_hash = arguments_hash(params.name, params.arguments or {})
    for key, answer in (params.input_responses or {}).items():
        kind, _, approval_id = key.partition(":")
        if kind not in ("confirm", "confirm-url"):
            continue
        approval = runtime.approvals.get(approval_id)
        if (
            approval is None
            or approval.request.channel != channel
            or approval.request.principal != (user or ANONYMOUS)
            or approval.request.tool != params.name
            or approval.request.arguments_hash != call_hash
        ):
            continue
        if kind == "confirm-url" and getattr(answer, "action", None) == "accept":
            left = max(0.0, approval.request.expires_at - time.time())
            with contextlib.suppress(TimeoutError, KeyError):  # undecided: asked again
                await runtime.approvals.decided(approval_id, left)
            continue
        content = getattr(answer, "content", None) or {}
        approved = getattr(answer, "action", None) == "accept" and (
            kind == "confirm" and content.get("approve") is True
        )
        reason = content.get("reason") or (None if approved else "declined in the MCP client")
        decision = ConfirmationDecision(
            approved=approved, message=None if approved else str(reason), approver="mcp-client"
        )
        by = Decider(principal=approval.request.principal, channel=channel)
        with contextlib.suppress(KeyError, ValueError):  # expired or already decided
            runtime.approvals.decide(approval.request.approval_id, decision, by)


def elicitation_modes(ctx: ServerRequestContext[Any]) -> frozenset[str]:
    """The elicitation modes the client declared: ``form``, ``url`` (MCP 2025-11-25).

    An empty ``elicitation`` object is form mode (as clients declared it before URL
    mode existed).
    """
    capabilities = ctx.session.client_capabilities
    declared = capabilities.elicitation if capabilities is not None else None
    if declared is None:
        return frozenset()
    if declared.form is None and declared.url is None:
        return frozenset({"form"})
    return frozenset(m for m in ("form", "url") if getattr(declared, m) is not None)


def url_elicitation(ctx: ServerRequestContext[Any], runtime: Runtime) -> Any:
    """Asks through the console's page for one approval (URL-mode elicitation).

    The page link carries the approval's secret (``ApprovalStore.link``) in its
    fragment; the client shows it to its user only (never to the model). The call waits
    until the person decides there (or the approval expires), then the client is told
    the elicitation is complete. None (nobody asked) when the console does not answer
    for this approval: it is not running, or not on this project's approvals.
    """

    async def confirm(request: ConfirmationRequest) -> ConfirmationDecision | None:
        store = runtime.approvals
        page = await console_link(runtime, request.approval_id)
        if page is None:
            return None
        answer = await ctx.session.elicit_url(
            _page_message(request.as_dict()),
            page,
            request.approval_id,
            related_request_id=ctx.request_id,
        )
        if answer.action != "accept":
            return ConfirmationDecision(
                approved=False, message=f"user chose {answer.action}", approver="mcp-client"
            )
        try:
            decided = await store.decided(
                request.approval_id, max(0.0, request.expires_at - time.time())
            )
        except (TimeoutError, KeyError):
            return ConfirmationDecision(approved=False, message="nobody decided in time")
        with contextlib.suppress(Exception):  # a courtesy; the result follows anyway
            await ctx.session.send_elicit_complete(request.approval_id, ctx.request_id)
        return decided.decision

    return confirm


async def console_link(runtime: Runtime, approval_id: str) -> str | None:
    """The console page that decides ``approval_id``, its secret in the fragment.

    None when the console (``[approvals] console_url``, default
    ``http://127.0.0.1:<server.port>``) does not show that approval: it is not
    running, serves another project's approvals, or is not this project's own (it
    must first prove it reads the project's ``console.key``, ``server.console_proof``,
    before the API key and the approval's token are sent to it).
    """
    import httpx

    settings = runtime.settings
    console, port = console_of(settings)
    try:
        async with httpx.AsyncClient(timeout=2.0) as client:
            if not await proves(client, console, port, settings.data_dir):
                return None
            token = runtime.approvals.link(approval_id)
            headers = {"x-approval-token": token}
            if settings.server.api_key is not None:
                key = settings.server.api_key.get_secret_value()
                headers["authorization"] = f"Bearer {key}"
            answer = await client.get(f"{console}/api/approvals/{approval_id}", headers=headers)
    except httpx.HTTPError:
        return None
    if answer.status_code != 200:
        return None
    return f"{console}/tools/approvals#approval={approval_id}&token={token}"


def form_elicitation(ctx: ServerRequestContext[Any]) -> Any:
    """Asks the client's user with a form (``elicitation/create``, 2025-11-25 and before).

    The confirmation callback of a call: the client shows the tool, its arguments and
    why it is asked; its answer is the decision (``approver`` ``mcp-client``).
    """

    async def confirm(request: ConfirmationRequest) -> ConfirmationDecision:
        why = request.reason or (request.description.splitlines() or [""])[0]
        answer = await ctx.session.elicit_form(
            f"Allow {request.tool} with arguments {json.dumps(dict(request.arguments))}? ({why})",
            _CONFIRM_SCHEMA,
            related_request_id=ctx.request_id,
        )
        content = answer.content or {}
        approved = answer.action == "accept" and content.get("approve") is True
        reason = content.get("reason")
        return ConfirmationDecision(
            approved=approved,
            message=(str(reason) if reason else None)
            or (None if approved else f"user chose {answer.action}"),
            approver="mcp-client",
        )

    return confirm
