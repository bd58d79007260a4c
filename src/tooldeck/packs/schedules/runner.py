"""``Scheduler``: runs the schedules' due fires through the owner's view of the tools.

Seed 002's TaskWorker: a tool call made later, by a background worker, with the same
service container and the same stack as every other call (profile, policies,
confirmation, audit). Each fire's call has the channel and session ``schedule:<id>``
(History groups by it) and the idempotency key ``schedule:<id>:<fire time>``, so a fire
claimed again after a crash never repeats a side effect (``providers.receipts``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from pathlib import Path

from tooldeck.core.confirmation import ConfirmationDecision, ConfirmationRequest
from tooldeck.core.context import ServiceContainer, ToolContext, new_request_id
from tooldeck.core.result import ToolResult, trusted_metadata
from tooldeck.core.tool import ToolViews, error_result
from tooldeck.exceptions import ConfigError, StoreUnavailableError
from tooldeck.packs.schedules.store import Fire, Schedule, ScheduleStore

__all__ = ["Scheduler"]

log = logging.getLogger("tooldeck.schedules")


class Scheduler:
    """Claims due fires from the store and runs each as a tool call.

    Semantics:
        ``run_due()`` claims what is due at ``clock()`` and runs those calls
        concurrently, recording each outcome on its schedule. ``serve()`` does so until
        cancelled, waking at the next due fire (or every ``poll_s``, for schedules
        another process added; ``wake()`` for one added here). A fire of a tool that
        needs confirmation runs without asking when the schedule carries the approval
        of exactly its tool and arguments (``Schedule.approved_hash``); otherwise it
        asks as any unattended call does (``confirmation_required``, a pending
        approval). The clock is injected (seed 002), so tests move time.

    Args:
        store: The schedules.
        services: The runtime's services (``ToolViews`` reaches the stack).
        clock: Unix time in seconds.
        poll_s: Longest sleep between two looks at the store, in seconds.
        grace_s: A fire later than this is missed (``Schedule.misfire`` applies).
        stale_s: A claimed fire unfinished after this is claimed again.
        beat: A file ``serve`` touches at each look, so that another process of the
            project knows a scheduler runs (``running``; ``tooldeck schedule add`` says
            when none does: issue 55); None: no such file (a shared PostgreSQL store,
            whose schedulers may run on other machines).
    """

    def __init__(
        self,
        store: ScheduleStore,
        services: ServiceContainer,
        *,
        clock: Callable[[], float] = time.time,
        poll_s: float = 5.0,
        grace_s: float = 60.0,
        stale_s: float = 900.0,
        beat: Path | None = None,
    ) -> None:
        self.store = store
        self.beat = beat
        self.services = services
        self.clock = clock
        self.poll_s = poll_s
        self.grace_s = grace_s
        self.stale_s = stale_s
        self._wake = asyncio.Event()
        self._running: set[asyncio.Task[ToolResult]] = set()

    def wake(self) -> None:
        """Look at the store now (a schedule was added or resumed in this process)."""
        self._wake.set()

    async def run_due(self) -> list[tuple[Fire, ToolResult]]:
        """Claim the fires due now and run them; each fire with its call's result."""
        fires = await asyncio.to_thread(
            self.store.claim_due, self.clock(), grace_s=self.grace_s, stale_s=self.stale_s
        )
        results = await asyncio.gather(*(self._start(fire) for fire in fires))
        return list(zip(fires, results, strict=True))

    def running(self) -> bool | None:
        """Whether a scheduler of this project looked at the store lately.

        True when its ``beat`` is younger than ``2 * poll_s + 5`` seconds; None when
        this cannot be told (no ``beat``).
        """
        if self.beat is None:
            return None
        try:
            return time.time() - self.beat.stat().st_mtime < 2 * self.poll_s + 5
        except OSError:  # never touched: none ever ran
            return False

    async def serve(self) -> None:
        """Run due fires until cancelled; a failing store is logged and tried again."""
        while True:
            if self.beat is not None:
                with contextlib.suppress(OSError):  # a read-only data dir: no beat
                    self.beat.touch()
            try:
                fires = await asyncio.to_thread(
                    self.store.claim_due, self.clock(), grace_s=self.grace_s, stale_s=self.stale_s
                )
                for fire in fires:  # a long call must not hold up the other schedules
                    task = asyncio.ensure_future(self._start(fire))
                    self._running.add(task)
                    task.add_done_callback(self._running.discard)
                following = await asyncio.to_thread(self.store.next_due)
            except StoreUnavailableError as exc:
                log.warning("schedules: %s; trying again in %g s", exc, self.poll_s)
                following = None
            except Exception:
                log.exception("schedules: cannot read the schedule store; trying again")
                following = None
            wait = self.poll_s
            if following is not None:
                wait = min(wait, max(0.0, following - self.clock()))
            await self.nap(wait)

    async def nap(self, seconds: float) -> None:
        """Sleep ``seconds``, or until ``wake()`` is called."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), seconds)
        self._wake.clear()

    async def drain(self) -> None:
        """Wait for the fires under way (a server stopping lets them finish)."""
        if self._running:
            await asyncio.gather(*self._running, return_exceptions=True)

    async def _start(self, fire: Fire) -> ToolResult:
        schedule = fire.schedule
        request_id = f"schedule-{schedule.id}-{new_request_id()}"
        try:
            view = self.services.get(ToolViews).view(schedule.profile)  # type: ignore[type-abstract]
        except ConfigError as exc:  # the profile was removed from the configuration
            result = error_result(
                "not_found",
                f"schedule {schedule.name!r} cannot run: {exc}",
                trusted_metadata(schedule.tool, None, request_id, 0.0),
            )
        else:
            ctx = ToolContext(
                services=self.services,
                user=schedule.owner,
                profile=schedule.profile,
                channel=f"schedule:{schedule.id}",
                session_id=f"schedule:{schedule.id}",
                request_id=request_id,
                idempotency_key=f"schedule:{schedule.id}:{fire.at!r}",
                confirm=_carried_approval(schedule),
            )
            result = await view.execute(schedule.tool, schedule.arguments, ctx)
        status = "success" if result.error is None else result.error.type.value
        try:
            await asyncio.to_thread(self.store.finish, fire, status, request_id, self.clock())
        except Exception:
            log.exception("schedules: the outcome of %r was not recorded", schedule.name)
        return result


def _carried_approval(
    schedule: Schedule,
) -> Callable[[ConfirmationRequest], ConfirmationDecision | None] | None:
    """Approves a fire's call when the schedule was approved for exactly that call."""
    if schedule.approved_hash is None:
        return None

    def confirm(request: ConfirmationRequest) -> ConfirmationDecision | None:
        if request.tool == schedule.tool and request.arguments_hash == schedule.approved_hash:
            return ConfirmationDecision(
                approved=True,
                approver=f"schedule {schedule.name} (approved by {schedule.approved_by})",
            )
        return None  # another call (the data-flow rules asked): nobody here to decide

    return confirm
