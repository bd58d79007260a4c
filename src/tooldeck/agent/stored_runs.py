"""Runs that another process runs, seen through the shared run store.

With the audit database shared by replicas (``[store] url``), a run lives in the
process that started it, but any replica can serve it: read it, stream its events,
confirm its pending call and cancel it. ``StoredRuns`` does that through the store:

- **read and follow**: the record and events are stored as they happen; a follower
  reads new ones when the store notifies a change of the run (PostgreSQL ``NOTIFY``,
  ``core.notify``), or every ``poll_s`` without notifications, until the run is final.
- **confirm**: the decision goes into the approval store, which replicas share; the
  process running the run sees it within a second (``ApprovalStore.decided``) and
  resumes; the follower waits for the stored state to move on.
- **cancel**: a request stored on the run (``RunStore.request_cancel``); the running
  process's ``keep`` loop reads it when notified (else within a second) and cancels
  the run itself.
- **a process that died**: the running process renews each run's lease (``touch``)
  every third of ``lease_s``; ``keep`` in any process fails runs whose lease ran out,
  with a ``run.failed`` event, so nothing waits for them forever.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from tooldeck.agent.calls import run_channel
from tooldeck.agent.contracts import FINAL_STATES, TRANSITIONS, ChatRun, ConfirmRequest, RunEvent
from tooldeck.core.confirmation import ConfirmationDecision
from tooldeck.core.notify import Notifications
from tooldeck.exceptions import (
    RunEngineError,
    RunNotFoundError,
    RunStateError,
    StoreUnavailableError,
)
from tooldeck.observability.runs import RunStore
from tooldeck.providers.approvals import ApprovalStore, Decider

__all__ = ["CANCELLABLE", "StoredRuns", "decide_pending"]

log = logging.getLogger("tooldeck.runs")

INTERRUPTED = "interrupted: the process running it stopped"

CANCELLABLE = sorted(state for state, after in TRANSITIONS.items() if "cancelled" in after)
"""The states a run can be cancelled in."""


def decide_pending(
    approvals: ApprovalStore,
    run: ChatRun,
    body: ConfirmRequest,
    *,
    user: str | None,
    privileged: bool,
) -> None:
    """Decide the pending call of ``run`` in ``approvals``, as its run's own channel.

    Only the run's user (``anonymous`` for both when the entry point knows no
    identity) or a ``privileged`` approver may (``ApprovalStore.decide``).

    Raises:
        RunStateError: the run waits for nothing, or the approval expired or was
            decided a moment ago (HTTP 409).
        PermissionError: ``user`` may not decide it (HTTP 403).
    """
    if run.state != "waiting_input" or run.pending is None:
        raise RunStateError(run.run_id, run.state, "confirm", ["waiting_input"])
    by = Decider(
        principal=user or "anonymous", channel=run_channel(run.run_id), privileged=privileged
    )
    decision = ConfirmationDecision(
        approved=body.approve, arguments=body.arguments, message=body.message, approver=user
    )
    try:
        approvals.decide(run.pending.approval_id, decision, by)
    except (KeyError, ValueError):  # expired, or decided a moment ago
        raise RunStateError(run.run_id, run.state, "confirm", ["waiting_input"]) from None


def _interrupted(record: dict[str, Any], last_seq: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """A stored run whose process died, as failed: (record, its ``run.failed`` event).

    ``last_seq`` is the run's last stored event (events without a state change are
    stored without a new record, so the record's own ``last_seq`` may be behind).
    """
    now = datetime.now(UTC).isoformat(timespec="milliseconds")
    seq = last_seq + 1
    event = RunEvent(
        run_id=record["run_id"], seq=seq, type="run.failed", timestamp=now,
        data={"error": INTERRUPTED},
    )  # fmt: skip
    run = ChatRun.model_validate(record).model_copy(
        update={
            "state": "failed", "pending": None, "error": INTERRUPTED, "updated_at": now,
            "last_seq": seq,
        }
    )  # fmt: skip
    return run.model_dump(mode="json"), event.model_dump(mode="json")


class StoredRuns:
    """The run API for runs of other processes, over the shared store (module docstring).

    Args:
        store: The run store replicas share.
        approvals: The approval store replicas share.
        lease_s: A running process renews its runs' lease every third of this; a run
            whose lease is older counts as its process having died.
        poll_s: Seconds between two reads when following a run without notifications
            (with them: 5 s, in case one is lost).
        notifications: The shared PostgreSQL's ``LISTEN`` connection, or None.
    """

    def __init__(
        self,
        store: RunStore,
        approvals: ApprovalStore,
        *,
        lease_s: float,
        poll_s: float = 0.25,
        notifications: Notifications | None = None,
    ) -> None:
        self.store = store
        self.approvals = approvals
        self.lease_s = lease_s
        self.poll_s = poll_s
        self.notifications = notifications
        self._changed: dict[str, set[asyncio.Event]] = {}
        self._cancel_asked: asyncio.Event | None = None

    def _listen(self) -> None:
        if self.notifications is not None and self._cancel_asked is None:
            self._cancel_asked = asyncio.Event()
            self.notifications.subscribe("tooldeck_runs", self._notified)

    def _notified(self, payload: str) -> None:
        if payload.startswith("cancel:"):
            if self._cancel_asked is not None:
                self._cancel_asked.set()
            return
        for changed in self._changed.get(payload, ()):
            changed.set()

    @contextlib.contextmanager
    def _watching(self, run_id: str) -> Iterator[asyncio.Event]:
        """An event set by each notification of a change of ``run_id`` while the block runs.

        Registered before the first read, and cleared before each: a change stored
        between a read and the wait after it is not missed.
        """
        self._listen()
        changed = asyncio.Event()
        self._changed.setdefault(run_id, set()).add(changed)
        try:
            yield changed
        finally:
            waiting = self._changed.get(run_id)
            if waiting is not None:
                waiting.discard(changed)
                if not waiting:
                    del self._changed[run_id]

    async def _pause(self, changed: asyncio.Event) -> None:
        """Until ``changed`` is set (a notification) or the poll interval passes; cleared."""
        notified = self.notifications is not None and self.notifications.connected
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(changed.wait(), 5.0 if notified else self.poll_s)
        changed.clear()

    async def get(self, run_id: str) -> ChatRun:
        """The stored record.

        Raises:
            RunNotFoundError: no run has this id.
        """
        record = await asyncio.to_thread(self.store.get, run_id)
        if record is None:
            raise RunNotFoundError(f"no run {run_id!r}")
        return ChatRun.model_validate(record)

    async def wait(
        self, run_id: str, *, moved_from: ChatRun | None = None, final: bool = False
    ) -> ChatRun:
        """Follow the run until it is final or ``waiting_input``.

        With ``moved_from``, waiting on another call than that record's pending one;
        with ``final``, until it is final.
        """
        with self._watching(run_id) as changed:
            while True:
                run = await self.get(run_id)
                if run.state in FINAL_STATES:
                    return run
                if (
                    not final
                    and run.state == "waiting_input"
                    and (moved_from is None or run.pending != moved_from.pending)
                ):
                    return run
                await self._pause(changed)

    async def events(self, run_id: str, after: int = 0) -> AsyncIterator[RunEvent]:
        """Stored events with ``seq > after``, then new ones as they are stored, until final.

        Raises:
            RunNotFoundError: no run has this id.
        """
        sent = after
        with self._watching(run_id) as changed:
            while True:
                run = await self.get(run_id)  # first: events stored before it are complete
                for record in await asyncio.to_thread(self.store.events, run_id, sent):
                    event = RunEvent.model_validate(record)
                    sent = event.seq
                    yield event
                if run.state in FINAL_STATES and sent >= run.last_seq:
                    return
                await self._pause(changed)

    async def confirm(
        self, run: ChatRun, body: ConfirmRequest, *, user: str | None, privileged: bool
    ) -> ChatRun:
        """Decide the pending call of ``run`` (``waiting_input``); wait until it moves on.

        Raises:
            RunStateError: the run waits for nothing, or the approval was just decided.
            PermissionError: ``user`` may not decide it.
        """
        decide_pending(self.approvals, run, body, user=user, privileged=privileged)
        return await self.wait(run.run_id, moved_from=run)

    async def cancel(self, run: ChatRun, reason: str) -> ChatRun:
        """Ask the process running ``run`` to cancel it; the run once final.

        Raises:
            RunStateError: the run has finished.
            RunEngineError: it did not end within ``lease_s`` (its process is stuck;
                once the lease runs out it is failed).
        """
        if not await asyncio.to_thread(self.store.request_cancel, run.run_id, reason):
            current = await self.get(run.run_id)
            raise RunStateError(run.run_id, current.state, "cancel", CANCELLABLE)
        try:
            return await asyncio.wait_for(self.wait(run.run_id, final=True), self.lease_s + 5.0)
        except TimeoutError:
            raise RunEngineError(
                f"run {run.run_id}: the process running it did not cancel it within "
                f"{self.lease_s + 5.0:g} s"
            ) from None

    async def keep(
        self,
        live: Callable[[], list[str]],
        cancel: Callable[[str, str], Awaitable[object]],
        *,
        poll_s: float = 1.0,
    ) -> None:
        """Forever: cancel ``live`` runs asked to, renew their leases, fail dead processes' runs.

        After the database was away, no run is failed for ``lease_s``: no replica could
        renew its leases meanwhile, and each renews at its first look after.

        Args:
            live: The ids of the runs this process runs that are not final.
            cancel: Cancels one of them, given the reason.
            poll_s: Seconds between two looks for cancel requests.
        """
        renew_at = trust_leases_at = 0.0
        loop = asyncio.get_running_loop()
        self._listen()
        while True:
            try:
                ids = live()
                if ids:
                    asked = await asyncio.to_thread(self.store.cancel_requests, ids)
                    for run_id, reason in asked.items():
                        await cancel(run_id, reason)
                if loop.time() >= renew_at:
                    renew_at = loop.time() + self.lease_s / 3
                    if ids:
                        await asyncio.to_thread(self.store.touch, ids)
                    if loop.time() >= trust_leases_at:
                        await self._fail_dead(set(ids))
            except StoreUnavailableError as exc:  # try again, the runs go on
                log.warning("runs: cannot renew leases or read cancel requests: %s", exc)
                # nobody could renew a lease meanwhile: renew ours as soon as the database
                # answers, and give every replica a lease's time to renew theirs before
                # a run is taken for dead
                renew_at, trust_leases_at = 0.0, loop.time() + self.lease_s
            except Exception:
                log.exception("runs: could not renew leases or read cancel requests")
            asked_now = self._cancel_asked
            if asked_now is None:
                await asyncio.sleep(poll_s)
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asked_now.wait(), poll_s)
            asked_now.clear()

    async def _fail_dead(self, ours: set[str]) -> None:
        before = datetime.now(UTC) - timedelta(seconds=self.lease_s)
        for record in await asyncio.to_thread(self.store.stale, before):
            if record["run_id"] in ours:
                continue
            run_id, last = record["run_id"], int(record.get("last_seq") or 0)
            later = await asyncio.to_thread(self.store.events, run_id, last)
            failed, event = _interrupted(record, max([last, *(e["seq"] for e in later)]))
            if await asyncio.to_thread(self.store.save, failed, event, stale_before=before):
                log.warning("runs: %s failed: its process stopped", record["run_id"])
