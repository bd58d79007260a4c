"""``RunActivities``: a Temporal run's turns and tool calls, on a worker's runtime.

Both activities take and return JSON (the workflow imports nothing of tooldeck):

- ``run_turn({start, journal})`` runs the agent from the question with the journal
  replayed (``worker.journal``). It returns ``{"calls": [...]}`` with the calls the
  agent needs next (each with its ``budget_s``: what the tool's policy may take, its
  retries included), or ``{"answer": ChatAnswer, "chunks": [...]}`` once the agent
  answered and the grounding validator decided, or ``{"error": ...}`` when the model
  endpoint failed. New model responses come back as ``"model"`` entries.
- ``tool_call({start, call, decision})`` runs one call through the profile's provider
  stack (policies, confirmation, receipts, audit) under the idempotency key
  ``run:<run_id>:<call_id>``, so a retry after a worker died answers from the receipt
  instead of running the call twice. A call that needs confirmation comes back as
  ``{"confirmation": PendingConfirmation}``; the workflow asks, then calls again with
  the ``decision``, which is recorded in the approval store before the call, so the
  confirming provider consumes it as any other decision.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from temporalio import activity

from tooldeck.agent.answering import answer_chunks, grounded_answer
from tooldeck.agent.calls import RunTools, run_channel, shown_arguments
from tooldeck.agent.contracts import PendingConfirmation
from tooldeck.agent.factory import agent_factory
from tooldeck.agent.model_agent import ModelError
from tooldeck.core.confirmation import ConfirmationDecision
from tooldeck.core.context import ToolContext
from tooldeck.core.definition import ToolDefinition
from tooldeck.core.periodic import periodically
from tooldeck.observability.runs import RunStore
from tooldeck.providers.approvals import Decider
from tooldeck.worker.journal import Journal, JournalTools, NeedsCalls, ReplayingClient
from tooldeck.worker.workflow import PROGRESS, RECORD_RUN, TOOL_CALL, TURN

if TYPE_CHECKING:
    from tooldeck.runtime import Runtime

__all__ = ["RunActivities"]


class RunActivities:
    """The activities of ``RunWorkflow``, bound to one worker's runtime.

    Args:
        runtime: The worker's runtime (``build_runtime`` on the same configuration as
            the servers): its views, approvals, receipts and audit serve every call.
    """

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def _context(self, start: dict[str, Any]) -> ToolContext:
        return self.runtime.context(
            run_id=start["run_id"],
            session_id=start.get("session_id"),
            user=start.get("user"),
            channel=run_channel(start["run_id"]),
            profile=start.get("profile"),
        )

    @activity.defn(name=TURN)
    async def run_turn(self, request: dict[str, Any]) -> dict[str, Any]:
        """One turn of the agent (see the module docstring), heartbeating throughout.

        A worker that dies while the model thinks (or while the view's definitions are
        read for the calls' budgets) is noticed in ``heartbeat_s``, not at the turn's
        10-minute limit (issue 55): the next worker takes the turn.
        """
        async with periodically(request["start"]["heartbeat_s"] / 3, activity.heartbeat):
            return await self._turn(request)

    async def _turn(self, request: dict[str, Any]) -> dict[str, Any]:
        start = request["start"]
        view = self.runtime.view(start.get("profile"))
        journal = Journal(request["journal"])
        client = self.runtime.model_client
        answers = self.runtime.answers
        replaying = ReplayingClient(client, journal) if client is not None else None
        agent = agent_factory(self.runtime.settings.agent, answers, replaying)(view)
        tools = JournalTools(journal, self._context(start))
        params = dict(start.get("params") or {})
        if start.get("account"):
            params["account"] = start["account"]
        subjects = answers.subjects() if answers is not None else None
        try:
            draft = await agent.answer(start["question"], params, tools)
            answer = await grounded_answer(agent, draft, tools, view, start["question"], subjects)
        except NeedsCalls:
            await asyncio.sleep(0)  # calls started beside it in a gather register theirs
            asked = {call["name"] for call in journal.asked}
            budgets = await self._budgets(view, start.get("profile"), asked)
            calls = [
                {
                    **call,
                    "shown": shown_arguments(call["arguments"]),
                    "budget_s": budgets.get(call["name"], _DEFAULT_BUDGET_S),
                }
                for call in journal.asked
            ]
            return {"calls": calls, "model": journal.new_models}
        except ModelError as exc:
            return {"error": str(exc), "model": journal.new_models}
        return {
            "answer": answer.model_dump(mode="json"),
            "chunks": answer_chunks(answer.answer_markdown),
            "model": journal.new_models,
        }

    async def _budgets(self, view: Any, profile: str | None, names: set[str]) -> dict[str, float]:
        """Seconds a call of each of ``names`` may take (an activity's timeout).

        Its policy's ``longest_s`` (``_DEFAULT_BUDGET_S`` without a timeout) plus
        ``_MARGIN_S``.
        """
        config = self.runtime.policy_config
        budgets: dict[str, float] = {}
        definition: ToolDefinition
        for definition in await view.definitions():
            called = names.intersection((definition.name, *definition.aliases))
            if called:
                longest = config.resolve(definition, profile).longest_s()
                budget = (longest or _DEFAULT_BUDGET_S) + _MARGIN_S
                budgets.update(dict.fromkeys(called, budget))
        return budgets

    @activity.defn(name=RECORD_RUN)
    async def record_run(self, request: dict[str, Any]) -> None:
        """Copy a finished run's record and events into the audit's run tables.

        Where the embedded engine keeps its runs, so the audit, ``tooldeck audit`` and
        SQL over ``[store] url`` see every run whichever engine ran it. Idempotent: a
        retry stores the events it had not stored. Nothing when auditing is off.
        """
        audit = self.runtime.audit
        if audit is not None:
            store = RunStore(audit.engine)
            await asyncio.to_thread(store.archive, request["record"], request["events"])

    @activity.defn(name=TOOL_CALL)
    async def tool_call(self, request: dict[str, Any]) -> dict[str, Any]:
        """One tool call through the stack (see the module docstring)."""
        start, call, decision = request["start"], request["call"], request.get("decision")
        view = self.runtime.view(start.get("profile"))
        ctx = self._context(start)
        if decision is not None:
            self._decide(call, decision, ctx)
        tools = RunTools(view, ctx, _Progress())  # key run:<run_id>:<call_id>, as in process
        async with periodically(start["heartbeat_s"] / 3, activity.heartbeat):
            result = await tools.execute(call["name"], call["arguments"], call_id=call["call_id"])
        error = result.error
        if decision is None and error is not None and error.type == "confirmation_required":
            details = error.details or {}
            described = {d.name: d.description for d in await view.definitions()}
            pending = PendingConfirmation(
                approval_id=details["approval_id"],
                tool=details["tool"],
                arguments=details["arguments"],
                arguments_hash=details["arguments_hash"],
                description=_described(details, described.get(details["tool"], "")),
                expires_at=details["expires_at"],
            )
            return {"confirmation": pending.model_dump(mode="json")}
        (record,) = tools.records
        return {
            "record": record.model_dump(mode="json"),
            "entry": {
                "name": call["name"],
                "arguments": call["arguments"],
                "result": result.model_dump(mode="json"),
                "duration_ms": record.duration_ms,
            },
        }

    def _decide(self, call: dict[str, Any], decision: dict[str, Any], ctx: ToolContext) -> None:
        """Record the workflow's decision in this worker's approval store, for the stack.

        The approval asked by an earlier attempt may be in another worker's store, or
        have expired while the run waited: then the call is asked again here and
        decided at once. A decision already recorded (a retried attempt) stands.
        """
        approvals = self.runtime.approvals
        by = (
            Decider(
                principal=decision.get("by") or "anonymous",
                channel=run_channel(ctx.run_id or ""),
                privileged=bool(decision.get("privileged")),
            )
            if "by" in decision
            else None  # the workflow's own time-out
        )
        answer = ConfirmationDecision(
            approved=bool(decision.get("approve")),
            arguments=decision.get("arguments"),
            message=decision.get("message"),
            approver=decision.get("by"),
        )
        approval_id = decision["approval_id"]
        with contextlib.suppress(ValueError):  # decided by an earlier attempt
            try:
                approvals.decide(approval_id, answer, by)
            except KeyError:
                arguments = shown_arguments(call["arguments"])
                if not isinstance(arguments, dict):
                    return
                asked = approvals.request(approvals.new_request(call["name"], arguments, ctx))
                approvals.decide(asked.request.approval_id, answer, by)


_DEFAULT_BUDGET_S = 300.0
"""A call of a tool no view lists (it fails at once), or of one without a timeout."""
_MARGIN_S = 30.0
"""Added to a tool's budget for the stack around it (confirmation, receipts, audit)."""


class _Progress:
    """A call's progress reports, sent to its workflow as the signal ``progress``.

    The workflow sends a call's other events itself. Each signal is an event in the
    workflow's history (which Temporal bounds), so a report within
    ``_PROGRESS_EVERY_S`` of the last one sent is dropped, and a call sends at most
    ``_PROGRESS_SIGNALS``; a signal that cannot be sent is dropped too (never failing
    the call).
    """

    def __init__(self) -> None:
        self._last = -_PROGRESS_EVERY_S
        self._sent = 0

    async def __call__(self, type: str, data: dict[str, Any]) -> None:
        now = asyncio.get_running_loop().time()
        if type != "tool_call.progress" or now - self._last < _PROGRESS_EVERY_S:
            return
        if self._sent >= _PROGRESS_SIGNALS:
            return
        self._last, self._sent = now, self._sent + 1
        workflow_id = activity.info().workflow_id
        if workflow_id is None:  # not a workflow's activity
            return
        with contextlib.suppress(Exception):
            await activity.client().get_workflow_handle(workflow_id).signal(PROGRESS, data)


_PROGRESS_EVERY_S = 0.5
_PROGRESS_SIGNALS = 1_000


def _described(details: dict[str, Any], description: str) -> str:
    reason = details.get("reason")
    return f"{reason}\n\n{description}" if reason else description
