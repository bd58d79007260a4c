"""Runs: one chat question answered by an agent, as a state machine with an event stream.

Example::

    run = await runs.start(ChatRequest(question="What's my cash?"), user="ana")
    run = await runs.wait(run.run_id)            # completed, failed, cancelled or waiting_input
    async for event in runs.events(run.run_id, after=0):
        ...                                      # replay, then live until the run ends

States and transitions are seed 003's (``contracts.TRANSITIONS``). A tool call that
needs confirmation moves the run to ``waiting_input`` until ``confirm`` (or the
approval TTL, which denies); ``cancel`` stops it. Every change is an event (run_id,
seq 1, 2, ..., timestamp) kept in memory for live runs and, with the audit database on,
stored with the run's record, so a client that reconnects gets what it missed, even from
another process. Another process sharing the store (a replica on ``[store] url``) also
follows, confirms and cancels it (``stored_runs``); runs whose process stopped are
marked ``failed`` once their lease (``lease_s``) runs out.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import logging
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tooldeck.agent.answering import answer_chunks, grounded_answer
from tooldeck.agent.base import Agent
from tooldeck.agent.calls import RunTools, run_channel
from tooldeck.agent.contracts import (
    FINAL_STATES,
    TRANSITIONS,
    ChatAnswer,
    ChatRequest,
    ChatRun,
    ConfirmRequest,
    PendingConfirmation,
    RunEvent,
)
from tooldeck.agent.model_agent import ModelError
from tooldeck.agent.stored_runs import CANCELLABLE, StoredRuns, decide_pending
from tooldeck.core.confirmation import ConfirmationDecision, ConfirmationRequest
from tooldeck.core.context import ToolContext
from tooldeck.core.notify import Notifications
from tooldeck.exceptions import RunNotFoundError, RunStateError
from tooldeck.observability.runs import RunStore
from tooldeck.providers.approvals import ApprovalStore, visible_to
from tooldeck.providers.base import ToolsProvider

__all__ = ["RunManager"]

log = logging.getLogger("tooldeck.runs")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass(eq=False)
class _Live:
    """A run this process executes: its record, events and the waits on it."""

    run: ChatRun
    events: list[RunEvent] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    span: Any = None
    """The run's ``invoke_agent`` span while it runs (with tracing on)."""


class RunManager:
    """Starts, tracks, confirms and cancels runs; serves their events.

    Args:
        view: The provider stack of a profile (``Runtime.view``); raises
            ``ConfigError`` for an unknown profile.
        context: Makes the run's ``ToolContext`` (``Runtime.context``: services).
        agent: Makes the agent of one run, given the profile's view.
        approvals: Where a run's pending calls wait and are decided: the store of the
            views' confirming providers (the runtime's, shared with REST, MCP and the
            CLI); a run's call is decided only by the run's own user or a privileged
            approver (``confirm``).
        store: Persists records and events; None keeps runs in memory only.
        confirm_timeout_s: How long a run waits for a confirmation before the call
            is denied.
        keep: Finished runs kept in memory (older ones are read from ``store``).
        lease_s: With a store, this process renews the lease of each run it runs every
            third of this; a run whose lease is older is failed by any process.
        notifications: The shared PostgreSQL's ``LISTEN`` connection (``[store] url``):
            other replicas' runs are followed as they change, not by polling.
        tracer: An OpenTelemetry tracer for the run's ``invoke_agent`` span, or None.
        subjects: Display names of subjects for the grounding validator
            (``IntentPack.subjects``), or None.
    """

    def __init__(
        self,
        *,
        view: Callable[[str | None], ToolsProvider],
        context: Callable[..., ToolContext],
        agent: Callable[[ToolsProvider], Agent],
        approvals: ApprovalStore,
        store: RunStore | None = None,
        confirm_timeout_s: float = 600.0,
        keep: int = 256,
        lease_s: float = 30.0,
        notifications: Notifications | None = None,
        tracer: Any = None,
        subjects: Callable[[], Mapping[str, tuple[str, str]]] | None = None,
    ) -> None:
        self.view = view
        self.subjects = subjects
        self.context = context
        self.agent = agent
        self.store = store
        self.approvals = approvals
        self.confirm_timeout_s = confirm_timeout_s
        self.keep = keep
        self.tracer = tracer
        self._live: OrderedDict[str, _Live] = OrderedDict()
        self._stored = (
            None
            if store is None
            else StoredRuns(store, approvals, lease_s=lease_s, notifications=notifications)
        )
        self._keeper: asyncio.Task[None] | None = None

    # -- persistence ----------------------------------------------------------------

    async def _persist(self, call: Callable[..., object], *args: Any) -> None:
        """Store in a thread; a run cancelled meanwhile waits for this save, then stops.

        Without the wait, the save in flight and the cancellation's own (``cancelled``)
        ran in two threads at once, and the older one could land last: a finished run
        stored as ``waiting_input`` with a fresh lease.
        """
        # submitted now, as ``await asyncio.to_thread`` would, not at the next loop turn
        saving = asyncio.get_running_loop().run_in_executor(
            None, functools.partial(contextvars.copy_context().run, call, *args)
        )
        try:
            await asyncio.shield(saving)
        except asyncio.CancelledError:
            await asyncio.wait([saving])  # saves land in the order they were made
            if saving.exception() is not None:
                log.error("runs: could not store %s: %s", _name(call), saving.exception())
            raise
        except Exception:  # the run goes on in memory; the log says what was not stored
            log.exception("runs: could not store %s", _name(call))

    def _watch(self) -> StoredRuns | None:
        """The stored runs, with (once started) their ``keep`` loop.

        The loop renews this process's leases, reads cancel requests and fails the runs
        of processes that stopped.
        """
        if self._stored is not None and self._keeper is None:
            self._keeper = asyncio.create_task(self._stored.keep(self._running, self._cancel_asked))
        return self._stored

    def _running(self) -> list[str]:
        return [k for k, v in self._live.items() if v.run.state not in FINAL_STATES]

    async def _cancel_asked(self, run_id: str, reason: str) -> None:
        live = self._live.get(run_id)
        if live is not None and live.run.state not in FINAL_STATES:
            await self._cancel(live, reason)

    # -- events and state -----------------------------------------------------------

    @staticmethod
    def _event(live: _Live, type: str, data: dict[str, Any] | None) -> RunEvent:
        """Append the run's next event (``seq`` = count + 1); the caller updates ``last_seq``."""
        event = RunEvent.model_validate(
            {
                "run_id": live.run.run_id,
                "seq": len(live.events) + 1,
                "type": type,
                "timestamp": _now(),
                "data": data or {},
            }
        )
        live.events.append(event)
        return event

    async def _emit(self, live: _Live, type: str, data: dict[str, Any] | None = None) -> None:
        """An event that changes no state (``tool_call.*``, ``message.delta``)."""
        event = self._event(live, type, data)
        live.run = live.run.model_copy(update={"last_seq": event.seq})
        self._signal(live)
        if self.store is not None:
            await self._persist(self.store.add_event, event.model_dump(mode="json"))

    async def _move(
        self,
        live: _Live,
        state: str,
        event: str | None = None,
        data: dict[str, Any] | None = None,
        **fields: Any,
    ) -> None:
        """Move to ``state`` and emit ``event`` in one step, stored in one transaction.

        Nothing runs in between, so whoever sees the new state sees its event too, and
        the stored record's ``last_seq`` counts it. Waiters are woken once the store has
        it: a client told ``waiting_input`` by this replica reads the same from another.
        """
        current = live.run.state
        if state not in TRANSITIONS[current]:
            sources = [s for s, targets in TRANSITIONS.items() if state in targets]
            raise RunStateError(live.run.run_id, current, f"move to {state}", sources)
        update: dict[str, Any] = {"state": state, "updated_at": _now(), **fields}
        stored = None
        if event is not None:
            stored = self._event(live, event, data)
            update["last_seq"] = stored.seq
        live.run = live.run.model_copy(update=update)
        try:
            if self.store is not None:
                await self._persist(
                    self.store.save,
                    live.run.model_dump(mode="json"),
                    None if stored is None else stored.model_dump(mode="json"),
                )
        finally:
            self._signal(live)

    @staticmethod
    def _signal(live: _Live) -> None:
        """Wake everything waiting on a change of ``live``."""
        changed, live.changed = live.changed, asyncio.Event()
        changed.set()

    def _remember(self, live: _Live) -> None:
        self._live[live.run.run_id] = live
        finished = [k for k, v in self._live.items() if v.run.state in FINAL_STATES]
        for run_id in finished[: max(0, len(finished) - self.keep)]:
            del self._live[run_id]

    # -- API --------------------------------------------------------------------------

    async def start(self, request: ChatRequest, *, user: str | None = None) -> ChatRun:
        """Create a run (``queued``), emit ``run.created`` and start it in the background.

        Raises:
            ConfigError: ``request.profile`` is not a configured profile.
        """
        self._watch()
        view = self.view(request.profile)
        now = _now()
        run = ChatRun(
            run_id=f"run_{uuid.uuid4().hex}",
            state="queued",
            question=request.question,
            profile=request.profile,
            user=user,
            created_at=now,
            updated_at=now,
        )
        live = _Live(run)
        self._remember(live)
        event = self._event(live, "run.created", {"question": run.question, "profile": run.profile})
        live.run = run.model_copy(update={"last_seq": event.seq})
        if self.store is not None:
            await self._persist(
                self.store.save, live.run.model_dump(mode="json"), event.model_dump(mode="json")
            )
        live.task = asyncio.create_task(self._execute(live, request, view))
        return live.run

    async def get(self, run_id: str) -> ChatRun:
        """The run's current record.

        Raises:
            RunNotFoundError: no run has this id.
        """
        live = self._live.get(run_id)
        if live is not None:
            return live.run
        stored = self._watch()
        if stored is None:
            raise RunNotFoundError(f"no run {run_id!r}")
        return await stored.get(run_id)

    async def recent(self, limit: int = 50, *, user: str | None = None) -> list[ChatRun]:
        """The newest runs first: those in memory, and the store's.

        Args:
            limit: At most this many.
            user: Only this user's runs (``anonymous``: those made without a user);
                None: everyone's.
        """
        runs = {
            run_id: live.run
            for run_id, live in self._live.items()
            if user is None or visible_to(user, live.run.user)
        }
        if self.store is not None:
            for record in self.store.recent(limit, user=user):
                runs.setdefault(record["run_id"], ChatRun.model_validate(record))
        return sorted(runs.values(), key=lambda r: r.created_at, reverse=True)[:limit]

    async def wait(self, run_id: str) -> ChatRun:
        """Wait until the run is final or ``waiting_input``; return its record.

        Raises:
            RunNotFoundError: no run has this id.
        """
        live = self._live.get(run_id)
        if live is None:
            stored = self._watch()
            return await self.get(run_id) if stored is None else await stored.wait(run_id)
        while live.run.state not in FINAL_STATES and live.run.state != "waiting_input":
            await live.changed.wait()
        return live.run

    async def confirm(
        self, run_id: str, body: ConfirmRequest, *, user: str | None, privileged: bool = False
    ) -> ChatRun:
        """Answer the pending confirmation of a ``waiting_input`` run; it resumes.

        The decision goes through ``ApprovalStore.decide`` like every other: only the
        run's own user (``anonymous`` for both when the entry point knows no identity)
        or a ``privileged`` approver may make it. Returns once the run is final or
        waits for input again (as ``wait``).

        Args:
            run_id: The run.
            body: Approve (maybe with edited arguments) or deny with a message.
            user: Who decides (the verified caller), or None.
            privileged: ``user`` is an approver of anyone's calls.

        Raises:
            RunNotFoundError: no run has this id.
            RunStateError: the run is not waiting for input (HTTP 409).
            PermissionError: ``user`` may not decide this run's call (HTTP 403).
        """
        run = await self.get(run_id)
        live = self._live.get(run_id)
        if live is None and self._stored is not None and self.approvals.shared:
            return await self._stored.confirm(run, body, user=user, privileged=privileged)
        if live is None:
            raise RunStateError(run_id, run.state, "confirm", ["waiting_input"])
        decide_pending(self.approvals, run, body, user=user, privileged=privileged)
        while live.run.state == "waiting_input":
            await live.changed.wait()
        return await self.wait(run_id)

    async def cancel(self, run_id: str, *, by: str | None = None) -> ChatRun:
        """Cancel a run that has not finished; emits ``run.cancelled``.

        Raises:
            RunNotFoundError: no run has this id.
            RunStateError: the run already finished (HTTP 409).
        """
        run = await self.get(run_id)
        live = self._live.get(run_id)
        reason = f"cancelled by {by}" if by else "cancelled"
        if live is None and self._stored is not None and run.state not in FINAL_STATES:
            return await self._stored.cancel(run, reason)
        if live is None or run.state in FINAL_STATES:
            raise RunStateError(run_id, run.state, "cancel", CANCELLABLE)
        return await self._cancel(live, reason)

    async def _cancel(self, live: _Live, reason: str) -> ChatRun:
        await self._move(
            live, "cancelled", "run.cancelled", {"reason": reason}, pending=None, error=reason
        )
        if live.task is not None:
            live.task.cancel()
        return live.run

    async def events(self, run_id: str, after: int = 0) -> AsyncIterator[RunEvent]:
        """The run's events with ``seq > after``, then live ones until the run ends.

        Raises:
            RunNotFoundError: no run has this id.
        """
        live = self._live.get(run_id)
        if live is None:
            stored = self._watch()
            if stored is None:
                raise RunNotFoundError(f"no run {run_id!r}")
            async for event in stored.events(run_id, after):  # followed until it ends
                yield event
            return
        sent = after
        while True:
            changed = live.changed
            for event in live.events[sent:]:
                sent = event.seq
                yield event
            if live.run.state in FINAL_STATES and sent == len(live.events):
                return
            await changed.wait()

    async def aclose(self) -> None:
        """Cancel the runs still going (they end ``cancelled``)."""
        for live in list(self._live.values()):
            if live.run.state not in FINAL_STATES:
                with contextlib.suppress(RunStateError):
                    await self.cancel(live.run.run_id, by="shutdown")
        tasks = [live.task for live in self._live.values() if live.task is not None]
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._keeper is not None:
            self._keeper.cancel()
            await asyncio.gather(self._keeper, return_exceptions=True)

    # -- the run itself ---------------------------------------------------------------

    async def _execute(self, live: _Live, request: ChatRequest, view: ToolsProvider) -> None:
        run = live.run
        ctx = self.context(
            run_id=run.run_id,
            session_id=request.session_id,
            user=run.user,
            channel=run_channel(run.run_id),
            profile=run.profile,
            confirm=lambda req: self._ask(live, req),
        )

        async def emit(type: str, data: dict[str, Any]) -> None:
            await self._emit(live, type, data)

        live.span = self._span(run)
        try:
            await self._move(live, "running", "run.started")
            agent = self.agent(view)
            tools = RunTools(view, ctx, emit)
            params = dict(request.params)
            if request.account:
                params["account"] = request.account
            try:
                draft = await agent.answer(request.question, params, tools)
                subjects = self.subjects() if self.subjects else None
                answer = await grounded_answer(
                    agent, draft, tools, view, request.question, subjects
                )
            except ModelError as exc:
                await self._finish(live, "failed", error=str(exc))
                return
            for chunk in answer_chunks(answer.answer_markdown):
                await self._emit(live, "message.delta", {"text": chunk})
            await self._finish(live, "completed", answer=answer)
        except asyncio.CancelledError:  # cancel() emitted run.cancelled, or shutdown did
            await self._finish(live, "cancelled", error="cancelled")
        except Exception as exc:  # a bug must fail the run, not leave it running forever
            log.exception("runs: run %s failed", run.run_id)
            await self._finish(live, "failed", error=f"{type(exc).__name__}: {exc}")

    async def _finish(
        self, live: _Live, state: str, *, answer: ChatAnswer | None = None, error: str | None = None
    ) -> None:
        """End the run's span, then move to the final ``state`` and emit its event.

        The span ends first, so a client told the run is over finds its trace complete.
        A run already final (cancelled from outside) only gets its span ended.
        """
        span, live.span = live.span, None
        if span is not None:
            span.set_attribute("tooldeck.run.state", state)
            if answer is not None:
                span.set_attribute("tooldeck.grounding.verdict", answer.grounding.verdict)
            if state == "failed":
                from opentelemetry.trace import Status, StatusCode

                span.set_status(Status(StatusCode.ERROR, error or "failed"))
            span.end()
        if live.run.state in FINAL_STATES:
            return
        if answer is not None:
            data: dict[str, Any] = {"answer": answer.model_dump(mode="json")}
            await self._move(live, state, "run.completed", data, answer=answer)
        else:
            data = {"error": error} if state == "failed" else {"reason": error}
            await self._move(live, state, f"run.{state}", data, pending=None, error=error)

    def _span(self, run: ChatRun) -> Any:
        """The run's ``invoke_agent`` span (GenAI conventions), made current for its task."""
        if self.tracer is None:
            return None
        from opentelemetry import context as otel_context
        from opentelemetry import trace

        span = self.tracer.start_span(
            "invoke_agent tooldeck",
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "tooldeck",
                "gen_ai.conversation.id": run.run_id,
                "tooldeck.run_id": run.run_id,
                **({"tooldeck.profile": run.profile} if run.profile else {}),
            },
        )
        otel_context.attach(trace.set_span_in_context(span))  # the task's own context
        return span

    async def _ask(self, live: _Live, request: ConfirmationRequest) -> ConfirmationDecision:
        """The run's confirmation callback: wait in ``waiting_input`` for ``confirm``."""
        pending = PendingConfirmation(
            approval_id=request.approval_id,
            tool=request.tool,
            arguments=dict(request.arguments),
            arguments_hash=request.arguments_hash,
            description=(
                f"{request.reason}\n\n{request.description}"
                if request.reason
                else request.description
            ),
            expires_at=request.expires_at,
        )
        data = {"pending": pending.model_dump(mode="json")}
        await self._move(live, "waiting_input", "run.waiting_input", data, pending=pending)
        try:
            approval = await self.approvals.decided(request.approval_id, self.confirm_timeout_s)
            decision = approval.decision or ConfirmationDecision(
                approved=False, message=f"the approval {approval.status}"
            )
        except (TimeoutError, KeyError):
            decision = ConfirmationDecision(
                approved=False, message=f"no decision within {self.confirm_timeout_s:g} s"
            )
        await self._move(live, "running", pending=None)
        return decision


def _name(call: Callable[..., object]) -> str:
    return str(getattr(call, "__name__", call))
