"""``ApprovalStore``: pending and decided confirmations, bound to the exact call.

An approval covers one tool, one canonical form of its arguments (a hash), one
principal, and expires. A changed argument, another user or a late retry needs a new
approval. It is decided by the principal who asked, on the channel it was asked on
(the REST approvals API for a REST call, the same MCP session for an MCP call), or by
a privileged approver; never by another client's tool call. Each decision is passed
to the store's listeners (the audit log).
"""

from __future__ import annotations

import asyncio
import hmac
import secrets
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from tooldeck.core.confirmation import ConfirmationDecision, ConfirmationRequest, arguments_hash
from tooldeck.core.context import ToolContext, principal_of
from tooldeck.core.notify import Notifications
from tooldeck.providers.approval_table import ApprovalMemory, ApprovalTable, Rows, call_key

__all__ = ["Approval", "ApprovalStatus", "ApprovalStore", "Decider", "visible_to"]

ApprovalStatus = Literal["pending", "approved", "denied", "used", "expired"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Approval:
    """A confirmation request and what became of it."""

    request: ConfirmationRequest
    """The call it covers."""
    status: ApprovalStatus = "pending"
    """``pending`` → ``approved`` | ``denied`` → ``used`` (consumed by the call); or ``expired``."""
    decision: ConfirmationDecision | None = None
    """The decision, once made."""
    decided_at: float | None = None
    """Unix time (s) of the decision."""
    created_at: float = field(default_factory=time.time)
    """Unix time (s) the request was made."""
    link_token: str | None = None
    """The secret of the approval's page link (``ApprovalStore.link``); never in
    ``as_dict``, so never in what a model or a listing sees."""

    def as_dict(self) -> dict[str, Any]:
        """JSON-able form for APIs and the audit log."""
        decision = self.decision
        return {
            **self.request.as_dict(),
            "status": self.status,
            "created_at": self.created_at,
            "decided_at": self.decided_at,
            "approved": decision.approved if decision else None,
            "approver": decision.approver if decision else None,
            "message": decision.message if decision else None,
            "edited_arguments": (
                dict(decision.arguments) if decision and decision.arguments is not None else None
            ),
        }


DecisionListener = Callable[[Approval], None]


@dataclass(frozen=True, kw_only=True, slots=True)
class Decider:
    """Who is deciding an approval, and through which channel (entry points fill it in)."""

    principal: str
    """The deciding principal (``anonymous`` when the entry point knows no identity)."""
    channel: str
    """The channel the decision arrives on (``rest``, ``mcp:<session>``...)."""
    privileged: bool = False
    """An approver configured to decide anyone's approvals (``[approvals] approvers``)."""
    token: str | None = None
    """The secret of an approval's page link, shown only to the person the call's
    client asked (MCP URL-mode elicitation); it lets them decide that one approval."""

    def may_decide(self, approval: Approval) -> bool:
        """Whether this decider may decide ``approval``."""
        request = approval.request
        return (
            self.privileged
            or (self.principal == request.principal and self.channel == request.channel)
            or _token_matches(approval, self.token)
        )


def visible_to(principal: str | None, owner: str | None, *, privileged: bool = False) -> bool:
    """Whether ``principal`` may see a record (an approval, a run, an audit row) of ``owner``.

    A principal sees its own records only; a privileged one (``[approvals] approvers``)
    sees everyone's. None and ``anonymous`` are the same principal: the caller of a
    server that knows no identities (``server.trust_user_header`` off), which owns every
    record made without one.
    """
    return privileged or (principal or "anonymous") == (owner or "anonymous")


class ApprovalStore:
    """Approvals shared by every profile's confirming provider: in memory, or in a file.

    Semantics:
        ``request`` returns the pending approval for an identical call if there is one
        (so retrying a call does not pile up requests). ``approve``/``deny`` decide a
        pending approval by id; ``take`` consumes the decided approval matching a call
        (tool, arguments hash, principal) so one approval runs one call. Expired
        approvals are never taken. Times are Unix seconds.

        With ``path``, the approvals live in that SQLite file (``approval_table``), so
        every process of one data dir sees the same ones: a call a stdio MCP session
        asked for is approved from a terminal (``tooldeck approvals``), and pending
        approvals outlive a restart. Each operation is one transaction. With ``url``,
        they live in PostgreSQL, shared by every replica the same way.

    Args:
        ttl_s: How long a request and its approval stay valid, in seconds.
        clock: Unix-time source (tests pass a fake).
        path: The SQLite file; None (and no ``url``) keeps the approvals in this process.
        url: A ``postgresql://`` URL (``[store] url``); wins over ``path``.
        notifications: ``url``'s ``LISTEN`` connection: a decision made on another
            replica wakes this one's waiters at once instead of at their next poll.

    Raises:
        ConfigError: ``path`` is not private to this user, or not a SQLite file.
        ConfigError: ``url``'s server cannot be reached (5 s).
    """

    def __init__(
        self,
        ttl_s: float = 600.0,
        clock: Callable[[], float] = time.time,
        path: Path | None = None,
        url: str | None = None,
        notifications: Notifications | None = None,
    ) -> None:
        self.ttl_s = ttl_s
        self.clock = clock
        self.notifications = notifications
        self._subscribed = False
        self._state: ApprovalMemory | ApprovalTable
        if url is not None:
            self._state = ApprovalTable.postgres(url)
        elif path is not None:
            self._state = ApprovalTable.file(path)
        else:
            self._state = ApprovalMemory()
        self._listeners: list[DecisionListener] = []
        self._waiters: dict[str, list[asyncio.Future[Approval]]] = {}

    @property
    def shared(self) -> bool:
        """Whether other processes see these approvals (a file or PostgreSQL, not memory)."""
        return self._state.shared

    def on_decision(self, listener: DecisionListener) -> None:
        """Call ``listener(approval)`` after each decision (approve, deny, callback answer)."""
        self._listeners.append(listener)

    def new_request(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        ctx: ToolContext | None,
        description: str = "",
        reason: str | None = None,
    ) -> ConfirmationRequest:
        """A ``ConfirmationRequest`` for this call (not stored); ``reason``: see its field."""
        return ConfirmationRequest(
            approval_id=secrets.token_hex(8),
            tool=tool,
            arguments=dict(arguments),
            arguments_hash=arguments_hash(tool, arguments),
            principal=principal_of(ctx),
            channel=ctx.channel if ctx else None,
            profile=ctx.profile if ctx else None,
            description=description,
            expires_at=self.clock() + self.ttl_s,
            reason=reason,
        )

    def request(self, request: ConfirmationRequest) -> Approval:
        """Store ``request`` as pending, or return the pending approval of the same call.

        The same call is the same tool, arguments and principal, asked on the same
        channel (a call asked again in a chat run is not folded into a REST one).
        """
        with self._open(("call", call_key(request))) as items:
            for item in items.values():
                if (
                    item.status == "pending"
                    and _same_call(item.request, request)
                    and item.request.channel == request.channel
                ):
                    return item
            approval = items[request.approval_id] = Approval(request=request)
            return approval

    def get(self, approval_id: str) -> Approval | None:
        """The approval with this id, or None."""
        with self._open(("id", approval_id)) as items:
            return items.get(approval_id)

    def pending(self, principal: str | None = None, *, privileged: bool = True) -> list[Approval]:
        """Approvals waiting for a decision, oldest first.

        Args:
            principal: Whose approvals (see ``visible_to``).
            privileged: Every principal's (the default, for trusted in-process code).
        """
        with self._open(("pending", None)) as items:
            found = [
                a
                for a in items.values()
                if a.status == "pending"
                and visible_to(principal, a.request.principal, privileged=privileged)
            ]
        return sorted(found, key=lambda a: a.created_at)

    async def decided(self, approval_id: str, timeout_s: float | None = None) -> Approval:
        """Wait until the approval ``approval_id`` is decided (by any channel); return it.

        A decision made in this process wakes the waiter at once; one made by another
        process sharing the file is seen within a second, one made by a replica on
        PostgreSQL at once (a notification; within 5 s if it is lost).

        Args:
            approval_id: A stored approval.
            timeout_s: Seconds to wait at most; None: until it is decided.

        Raises:
            KeyError: no approval has this id.
            TimeoutError: not decided within ``timeout_s`` (it stays pending).
        """
        approval = self.get(approval_id)
        if approval is None:
            raise KeyError(f"no approval with id {approval_id!r}; it may have expired")
        if approval.status != "pending":
            return approval
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[Approval] = loop.create_future()
        self._waiters.setdefault(approval_id, []).append(waiter)
        deadline = None if timeout_s is None else loop.time() + timeout_s
        poll = 1.0 if self.shared else None  # another process may decide it
        if self.notifications is not None:
            if not self._subscribed:
                self._subscribed = True
                self.notifications.subscribe("tooldeck_approvals", self._changed_elsewhere)
            if self.notifications.connected:
                poll = 5.0
        try:
            while True:
                left = None if deadline is None else max(0.0, deadline - loop.time())
                step = left if poll is None else poll if left is None else min(left, poll)
                try:
                    return await asyncio.wait_for(asyncio.shield(waiter), step)
                except TimeoutError:
                    current = self.get(approval_id)
                    if current is not None and current.status != "pending":
                        return current
                    if deadline is not None and loop.time() >= deadline:
                        raise
        finally:
            waiter.cancel()
            waiters = self._waiters.get(approval_id)
            if waiters is not None and waiter in waiters:
                waiters.remove(waiter)
                if not waiters:
                    del self._waiters[approval_id]

    def _changed_elsewhere(self, approval_id: str) -> None:
        """A notification: wake the waiters of ``approval_id`` if it is decided now."""
        if approval_id not in self._waiters:
            return
        current = self.get(approval_id)
        if current is not None and current.status != "pending":
            for waiter in self._waiters.pop(approval_id, ()):
                _resolve(waiter, current)

    def decide(
        self, approval_id: str, decision: ConfirmationDecision, by: Decider | None = None
    ) -> Approval:
        """Record ``decision`` for a pending approval.

        Args:
            approval_id: The pending approval.
            decision: Approve (maybe with edited arguments) or deny.
            by: Who decides and through which channel; None: trusted in-process code.

        Raises:
            KeyError: no approval has this id (or it expired and was pruned).
            PermissionError: ``by`` is neither the principal and channel the approval
                was asked of nor a privileged approver.
            ValueError: the approval is not pending any more (already decided, used or
                expired); the message says which.
        """
        with self._open(("id", approval_id)) as items:
            approval = items.get(approval_id)
            if approval is None:
                raise KeyError(f"no approval with id {approval_id!r}; it may have expired")
            request = approval.request
            if by is not None and not by.may_decide(approval):
                raise PermissionError(
                    f"approval {approval_id} was asked of {request.principal} on channel "
                    f"{request.channel}; {by.principal} on {by.channel} cannot decide it "
                    "(only the caller's own channel, or an approver in [approvals] approvers)"
                )
            if approval.status != "pending":
                raise ValueError(f"approval {approval_id} is already {approval.status}")
            decided = items[approval_id] = replace(
                approval,
                status="approved" if decision.approved else "denied",
                decision=decision,
                decided_at=self.clock(),
            )
        self.record(decided)
        for waiter in self._waiters.pop(approval_id, ()):
            waiter.get_loop().call_soon_threadsafe(_resolve, waiter, decided)
        return decided

    def approve(
        self,
        approval_id: str,
        arguments: Mapping[str, Any] | None = None,
        approver: str | None = None,
        by: Decider | None = None,
    ) -> Approval:
        """Approve, optionally with edited ``arguments``; see ``decide`` for errors."""
        return self.decide(
            approval_id,
            ConfirmationDecision(approved=True, arguments=arguments, approver=approver),
            by,
        )

    def deny(
        self,
        approval_id: str,
        message: str | None = None,
        approver: str | None = None,
        by: Decider | None = None,
    ) -> Approval:
        """Deny with a ``message`` the model will see; see ``decide`` for errors."""
        return self.decide(
            approval_id,
            ConfirmationDecision(approved=False, message=message, approver=approver),
            by,
        )

    def link(self, approval_id: str) -> str:
        """The secret of a page link that decides the pending approval ``approval_id``.

        For an MCP client that can open a URL for its user (URL-mode elicitation): the
        link goes to the person, never to the model, and whoever holds it may see and
        decide that one approval (``Decider.token``). Made once; the same one after.

        Raises:
            KeyError: no approval has this id (or it expired and was pruned).
        """
        with self._open(("id", approval_id)) as items:
            approval = items.get(approval_id)
            if approval is None:
                raise KeyError(f"no approval with id {approval_id!r}; it may have expired")
            if approval.link_token is None:
                approval = items[approval_id] = replace(
                    approval, link_token=secrets.token_urlsafe(24)
                )
            assert approval.link_token is not None
            return approval.link_token

    def linked(self, approval_id: str, token: str) -> Approval | None:
        """The approval ``approval_id`` if ``token`` is its link's secret, else None."""
        approval = self.get(approval_id)
        return approval if approval is not None and _token_matches(approval, token) else None

    def take(self, request: ConfirmationRequest) -> Approval | None:
        """Consume the decided, unexpired approval of the same call, if any."""
        with self._open(("call", call_key(request))) as items:
            for approval_id, item in items.items():
                if item.status in ("approved", "denied") and _same_call(item.request, request):
                    items[approval_id] = replace(item, status="used")
                    return item
        return None

    def expire_pending(self, channel: str) -> int:
        """Expire the approvals still pending that were asked on ``channel``; how many.

        For a channel that ended (a stdio MCP session that closed): no call can come
        back on it, so its requests leave the pending list (``tooldeck approvals``,
        ``watch``) instead of waiting there for their ``ttl_s``. Decided approvals stay
        for ``take``.
        """
        with self._open(("pending", None)) as items:
            stale = [
                i
                for i, a in items.items()
                if a.status == "pending" and a.request.channel == channel
            ]
            for approval_id in stale:
                items[approval_id] = replace(items[approval_id], status="expired")
        return len(stale)

    def record(self, approval: Approval) -> None:
        """Pass a decision to the listeners (a failing listener never breaks a call)."""
        for listener in self._listeners:
            try:
                listener(approval)
            except Exception:  # the audit log must not decide whether a tool runs
                continue

    def close(self) -> None:
        """Close the file, if any (the in-memory store has nothing to close)."""
        self._state.close()

    def _open(self, rows: Rows) -> AbstractContextManager[dict[str, Approval]]:
        """The approvals ``rows`` names (in memory: all), expired as of now.

        An approval is kept one ``ttl_s`` after it expired, for the history.
        """
        return self._state.transaction(rows, self.clock(), self.ttl_s)


def _resolve(waiter: asyncio.Future[Approval], approval: Approval) -> None:
    if not waiter.done():
        waiter.set_result(approval)


def _token_matches(approval: Approval, token: str | None) -> bool:
    expected = approval.link_token
    return bool(token and expected and hmac.compare_digest(token, expected))


def _same_call(a: ConfirmationRequest, b: ConfirmationRequest) -> bool:
    return a.tool == b.tool and a.arguments_hash == b.arguments_hash and a.principal == b.principal
