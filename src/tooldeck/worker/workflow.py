"""``RunWorkflow``: one chat run as a Temporal workflow (deterministic; no I/O here).

The workflow holds the run's record and events and decides nothing itself: each turn
of the agent is the activity ``tooldeck.run_turn`` (the agent runs again from the
question with the journal of what is already known, and says which tool calls it
needs next, or gives its answer), each tool call is the activity ``tooldeck.tool_call``.
A call that needs confirmation moves the run to ``waiting_input`` until the update
``confirm`` (or the approval time-out, which denies); a durable timer, so the wait
survives restarts of every process. The update ``cancel`` (or cancelling the
workflow) ends the run ``cancelled``. Events and the record are read with the queries
``snapshot`` (record and events), and the record from the workflow's memo, which a
server reads with no worker running; the workflow's result is both, once finished, and
the activity ``tooldeck.record_run`` then copies both into the audit's ``runs`` and
``run_events`` tables, where the embedded engine keeps its runs (the tables
``docs/deploy.md`` describes; issue 55). A tool's progress reports reach the run's
events through the signal ``progress``, which the ``tool_call`` activity sends (at most
two a second per call).

Everything crossing the workflow boundary is JSON (dicts), so this module imports
nothing of tooldeck and stays replay-safe; the shapes are the run contract's
(``agent.contracts``: ``ChatRun``, ``RunEvent``, ``ToolCallRecord``).
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError

__all__ = [
    "PROGRESS",
    "RECORD_RUN",
    "RUN_WORKFLOW",
    "TOOL_CALL",
    "TURN",
    "RunWorkflow",
    "record_of",
]

RUN_WORKFLOW = "tooldeck.run"
"""The workflow type of a run."""
TURN = "tooldeck.run_turn"
"""Activity: one turn of the agent (``RunActivities.run_turn``)."""
TOOL_CALL = "tooldeck.tool_call"
"""Activity: one tool call through the profile's stack (``RunActivities.tool_call``)."""
RECORD_RUN = "tooldeck.record_run"
"""Activity: the finished run's record and events into the audit (``RunActivities.record_run``)."""
PROGRESS = "progress"
"""Signal: a running call's progress (``tool_call.progress``'s data)."""

MAX_TURNS = 64
"""Turns of the agent at most (each asks for one batch of tool calls)."""
TURN_TIMEOUT = timedelta(minutes=10)
"""One turn: the agent's model requests and the grounding check."""
RETRIES = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_attempts=3)
"""Retries of an activity whose worker died or timed out. Tool failures are results,
not activity failures: the tool's own policy retried them already."""


def record_of(start: dict[str, Any]) -> dict[str, Any]:
    """The ``queued`` record of a run (what ``TemporalRuns.start`` returns too)."""
    return {
        "run_id": start["run_id"],
        "state": "queued",
        "question": start["question"],
        "profile": start.get("profile"),
        "user": start.get("user"),
        "created_at": start["created_at"],
        "updated_at": start["created_at"],
        "answer": None,
        "pending": None,
        "error": None,
        "last_seq": 0,
    }


@workflow.defn(name=RUN_WORKFLOW)
class RunWorkflow:
    """A run: the agent's turns and tool calls as activities, confirmations as updates."""

    def __init__(self) -> None:
        self.record: dict[str, Any] = {}
        self.events: list[dict[str, Any]] = []
        self.decision: dict[str, Any] | None = None
        self.cancel_reason: str | None = None
        self._asking = asyncio.Lock()  # one pending confirmation at a time (ChatRun.pending)
        self._running: set[str] = set()  # call ids between started and completed
        self._work: asyncio.Task[None] | None = None

    # -- the run ----------------------------------------------------------------------

    @workflow.run
    async def run(self, start: dict[str, Any]) -> dict[str, Any]:
        """Run ``start`` (``TemporalRuns.start``'s input) to a final state.

        Returns:
            ``{"record": ChatRun, "events": [RunEvent, ...]}`` as JSON.
        """
        self.record = record_of(start)
        self._event("run.created", {"question": start["question"], "profile": start["profile"]})
        self._work = asyncio.create_task(self._answer(start))
        try:
            await self._work
        except asyncio.CancelledError:  # cancel() or a cancelled workflow
            reason = self.cancel_reason or "cancelled"
            self._finish("cancelled", {"reason": reason}, error=reason)
        except ActivityError as exc:  # a worker failed every attempt of an activity
            self._finish("failed", {"error": _why(exc)}, error=_why(exc))
        if workflow.patched("record-run"):  # runs begun before this step skip it on replay
            with contextlib.suppress(ActivityError):  # the audit is down: the result keeps it
                await workflow.execute_activity(
                    RECORD_RUN,
                    {"record": self.record, "events": self.events},
                    start_to_close_timeout=timedelta(minutes=1),
                    retry_policy=RETRIES,
                )
        await workflow.wait_condition(workflow.all_handlers_finished)  # followers answered
        return {"record": self.record, "events": self.events}

    async def _answer(self, start: dict[str, Any]) -> None:
        self._move("running", "run.started")
        journal: list[dict[str, Any]] = []
        for _ in range(MAX_TURNS):
            turn = await workflow.execute_activity(
                TURN,
                {"start": start, "journal": journal},
                start_to_close_timeout=TURN_TIMEOUT,
                heartbeat_timeout=timedelta(seconds=start["heartbeat_s"]),
                retry_policy=RETRIES,
            )
            journal.extend(turn.get("model", ()))
            if "error" in turn:
                self._finish("failed", {"error": turn["error"]}, error=turn["error"])
                return
            if "answer" in turn:
                for chunk in turn["chunks"]:
                    self._event("message.delta", {"text": chunk})
                self._finish("completed", {"answer": turn["answer"]}, answer=turn["answer"])
                return
            entries = await asyncio.gather(*(self._call(start, c) for c in turn["calls"]))
            journal.extend(entries)
        error = f"the agent asked for tools in more than {MAX_TURNS} turns"
        self._finish("failed", {"error": error}, error=error)

    async def _call(self, start: dict[str, Any], call: dict[str, Any]) -> dict[str, Any]:
        """One tool call: events around it, a confirmation when the stack asks for one."""
        shown = {"call_id": call["call_id"], "name": call["name"], "arguments": call["shown"]}
        self._event("tool_call.started", shown)
        self._running.add(call["call_id"])
        try:
            done = await self._tool(start, call, None)
            if done.get("confirmation") is not None:
                async with self._asking:
                    decision = await self._ask(done["confirmation"], start)
                done = await self._tool(start, call, decision)
        finally:
            self._running.discard(call["call_id"])
        self._event("tool_call.completed", {"call_id": call["call_id"], **done["record"]})
        return {"kind": "tool", "call_id": call["call_id"], **done["entry"]}

    async def _tool(
        self, start: dict[str, Any], call: dict[str, Any], decision: dict[str, Any] | None
    ) -> dict[str, Any]:
        result: dict[str, Any] = await workflow.execute_activity(
            TOOL_CALL,
            {"start": start, "call": call, "decision": decision},
            start_to_close_timeout=timedelta(seconds=call["budget_s"]),
            heartbeat_timeout=timedelta(seconds=start["heartbeat_s"]),
            retry_policy=RETRIES,
        )
        return result

    async def _ask(self, pending: dict[str, Any], start: dict[str, Any]) -> dict[str, Any]:
        """Wait in ``waiting_input`` for ``confirm``; no decision in time denies."""
        self.decision = None
        self._move("waiting_input", "run.waiting_input", {"pending": pending}, pending=pending)
        timeout = start["confirm_timeout_s"]
        try:
            await workflow.wait_condition(lambda: self.decision is not None, timeout=timeout)
            decision = dict(self.decision or {})
        except TimeoutError:
            decision = {"approve": False, "message": f"no decision within {timeout:g} s"}
        decision["approval_id"] = pending["approval_id"]
        self.decision = None
        self._move("running", pending=None)
        return decision

    # -- updates, signals and queries ----------------------------------------------------

    @workflow.signal(name=PROGRESS)
    def progress(self, data: dict[str, Any]) -> None:
        """A running call's progress: ``{call_id, progress, total, message}``.

        A report for a call that is not running (late, or a retried attempt's after
        the call completed) is dropped: progress stays between started and completed.
        """
        if data.get("call_id") in self._running:
            self._event("tool_call.progress", data)

    @workflow.update
    async def confirm(self, decision: dict[str, Any]) -> dict[str, Any]:
        """Decide the pending call: ``{approve, message, arguments, by, privileged}``.

        Returns once the run left that ``waiting_input`` (the record then).
        """
        approval_id = self.record["pending"]["approval_id"]
        self.decision = decision
        await workflow.wait_condition(
            lambda: (self.record.get("pending") or {}).get("approval_id") != approval_id
        )
        return self.record

    @confirm.validator
    def _may_confirm(self, decision: dict[str, Any]) -> None:
        if self.record.get("state") != "waiting_input" or self.decision is not None:
            raise ApplicationError(
                f"run is {self.record.get('state')}", type="RunStateError", non_retryable=True
            )
        by = decision.get("by") or "anonymous"
        owner = self.record.get("user") or "anonymous"
        if by != owner and not decision.get("privileged"):
            raise ApplicationError(
                f"only {owner} or an approver may decide this run's calls; {by} may not",
                type="PermissionError",
                non_retryable=True,
            )

    @workflow.update
    async def cancel(self, by: str | None) -> dict[str, Any]:
        """Cancel the run (``by``: who asked); returns the ``cancelled`` record."""
        self.cancel_reason = f"cancelled by {by}" if by else "cancelled"
        if self._work is not None:
            self._work.cancel()
        await workflow.wait_condition(lambda: self.record.get("state") == "cancelled")
        return self.record

    @cancel.validator
    def _may_cancel(self, by: str | None) -> None:
        if self.record.get("state") in _FINAL or self.cancel_reason is not None:
            raise ApplicationError(
                f"run is {self.record.get('state')}", type="RunStateError", non_retryable=True
            )

    @workflow.update
    async def follow(self, after: int) -> dict[str, Any]:
        """Wait for events after ``after`` (or the end); then ``snapshot(after)``.

        What ``TemporalRuns.events`` long-polls with: a new event reaches a stream at
        once, with no polling between.
        """
        await workflow.wait_condition(
            lambda: len(self.events) > after or self.record.get("state") in _FINAL
        )
        return self.snapshot(after)

    @workflow.update
    async def settled(self) -> dict[str, Any]:
        """Wait until the run is final or waits for input; its record then."""
        await workflow.wait_condition(
            lambda: self.record.get("state") in (*_FINAL, "waiting_input") and self.decision is None
        )
        return self.record

    @workflow.query(name="snapshot")
    def snapshot(self, after: int) -> dict[str, Any]:
        """``{"record": ChatRun, "events": [RunEvent with seq > after]}`` as JSON."""
        return {"record": self.record, "events": self.events[max(0, after) :]}

    # -- state ------------------------------------------------------------------------------

    def _event(self, type: str, data: dict[str, Any] | None = None) -> None:
        now = _now()
        seq = len(self.events) + 1
        self.events.append(
            {
                "run_id": self.record["run_id"],
                "seq": seq,
                "type": type,
                "timestamp": now,
                "data": data or {},
            }
        )
        self.record = {**self.record, "last_seq": seq, "updated_at": now}
        self._publish()

    def _publish(self) -> None:
        """Put the record in the workflow's memo: servers read it with no worker running."""
        workflow.upsert_memo({"record": self.record})

    def _move(
        self,
        state: str,
        event: str | None = None,
        data: dict[str, Any] | None = None,
        **fields: Any,
    ) -> None:
        self.record = {**self.record, "state": state, "updated_at": _now(), **fields}
        if event is not None:
            self._event(event, data)
        else:
            self._publish()

    def _finish(self, state: str, data: dict[str, Any], **fields: Any) -> None:
        if self.record["state"] not in _FINAL:
            self._move(state, f"run.{state}", data, pending=None, **fields)


_FINAL = ("completed", "failed", "cancelled")


def _now() -> str:
    return workflow.now().isoformat(timespec="milliseconds")


def _why(exc: ActivityError) -> str:
    cause = exc.cause
    return f"a worker failed: {cause}" if cause is not None else f"a worker failed: {exc}"
