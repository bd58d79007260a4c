"""``delegate``: a profile's agent as a tool of another profile.

Seed 002's ``delegate_to_service``. A profile lists the profiles it may ask (``[profiles.desk] delegates = ["research"]``).
A run of ``desk`` then has a ``delegate(profile, task)`` tool: it starts a run of
``research`` for the same user, with research's own view of the tools (its filter,
policies and confirmations), waits for its answer and returns it with the child's
citations, grounding verdict and the data of its calls (from the audit, so the
parent's figures are checked against that data as the child's were). The parent's event stream shows the child: a
``tool_call.progress`` event names the child run, and another says when the child
waits for an approval (decided in the child run, by the same user, as any run's).

Only the profiles listed can be asked, so a delegate never has more than the
configuration gave; a delegated run cannot delegate again (one level), so no chain or
cycle can form.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from tooldeck.core.context import ANONYMOUS, ToolContext
from tooldeck.core.definition import ToolAnnotations
from tooldeck.core.result import ToolResult
from tooldeck.core.tool import BaseTool
from tooldeck.exceptions import ToolFailure
from tooldeck.observability.audit import AuditStore
from tooldeck.providers.flow import FlowTracker

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from tooldeck.agent.engine import RunEngine

__all__ = ["DELEGATE", "Delegation"]

DELEGATE = "delegate"
"""The tool's name."""


class Delegation:
    """Who may delegate to whom, and the runs that were delegated (a runtime service).

    Args:
        runs: The run engine (a callable: it is made on first use).
        delegates: Each profile's ``delegates``.
        tracker: The data-flow tracker: a delegated run starts with the labels its
            parent has read (a task can carry what the parent read); None: untracked.
    """

    def __init__(
        self,
        runs: Callable[[], RunEngine],
        delegates: Mapping[str, Sequence[str]],
        tracker: FlowTracker | None = None,
    ) -> None:
        self.runs = runs
        self.delegates = {p: list(t) for p, t in delegates.items() if t}
        self.tracker = tracker
        self.delegated: set[str] = set()
        """Runs started by ``delegate``: they are not offered it again."""

    def tool(self, ctx: ToolContext) -> DelegateTool | None:
        """The ``delegate`` tool for a run with context ``ctx``, or None.

        None when the run's profile lists no delegates, or the run was itself
        delegated.
        """
        targets = self.delegates.get(ctx.profile or "")
        if not targets or (ctx.run_id is not None and ctx.run_id in self.delegated):
            return None
        return DelegateTool(self, targets)


class _Evidence(BaseModel):
    tool: str
    source_id: str | None = None
    as_of: str | None = None
    data: Any = None


class _Answer(BaseModel):
    run_id: str
    answer_markdown: str
    citations: list[str]
    grounding: str
    results: list[_Evidence]
    """The data of the child's successful calls (from the audit): the figures the
    parent's answer states are checked against them, as the child's were."""


class DelegateTool(BaseTool[BaseModel, ToolResult]):
    """``delegate(profile, task)``: ask another profile's agent (the module docstring)."""

    name = DELEGATE
    annotations = ToolAnnotations(title="Ask another profile's agent", open_world=False)

    def __init__(self, delegation: Delegation, targets: Sequence[str]) -> None:
        self.delegation = delegation
        self.RequestModel = create_model(
            "DelegateRequest",
            __config__=ConfigDict(extra="forbid"),
            profile=(Literal[tuple(targets)], Field(description="Whose agent to ask.")),  # type: ignore[arg-type]
            task=(
                str,
                Field(min_length=1, max_length=4000, description="The question or task, whole."),
            ),
        )
        self.description = (
            "Ask the agent of another profile, with its own tools, and get its answer "
            f"and citations. Profiles: {', '.join(targets)}. Give the whole task: it does "
            "not see this conversation."
        )

    async def execute_internal(self, request: BaseModel, ctx: ToolContext) -> ToolResult:
        """Start the child run, follow it to its end, answer with its answer."""
        from tooldeck.agent.contracts import FINAL_STATES, ChatRequest

        values: dict[str, Any] = request.model_dump()
        runs = self.delegation.runs()
        child = await runs.start(
            ChatRequest(
                question=values["task"], profile=values["profile"], session_id=ctx.session_id
            ),
            user=ctx.user,
        )
        self.delegation.delegated.add(child.run_id)
        if self.delegation.tracker is not None:  # the child knows what its task carries
            principal = ctx.user or ANONYMOUS
            self.delegation.tracker.inherit(
                FlowTracker.run_of(ctx), (principal, f"run:{child.run_id}")
            )
        ctx.report_progress(0, None, f"asked {values['profile']}: run {child.run_id}")
        while True:
            run = await runs.wait(child.run_id)
            if run.state in FINAL_STATES:
                break
            pending = run.pending.tool if run.pending is not None else "a call"
            ctx.report_progress(
                0,
                None,
                f"run {child.run_id} waits for your approval of {pending} (decide it there)",
            )
            await _changed(runs, child.run_id, run.last_seq)
        answer = run.answer
        if run.state != "completed" or answer is None:
            raise ToolFailure(
                f"the {values['profile']} agent's run {run.run_id} ended {run.state}: "
                f"{run.error or 'no answer'}",
                details={"run_id": run.run_id},
            )
        data = _Answer(
            run_id=run.run_id,
            answer_markdown=answer.answer_markdown,
            citations=answer.citations,
            grounding=answer.grounding.verdict,
            results=await asyncio.to_thread(_evidence, ctx, run.run_id),
        )
        return ToolResult.ok(data.model_dump(), source_id=f"tool:delegate-{values['profile']}:v1")


def _evidence(ctx: ToolContext, run_id: str) -> list[_Evidence]:
    """The child run's successful calls, from the audit (none without one)."""
    store = ctx.services.get_optional(AuditStore)
    if store is None:
        return []
    store.flush()
    records = store.query(run_id=run_id, user=ctx.user, status="success", limit=100)
    return [
        _Evidence(tool=r.tool_name, source_id=r.source_id, as_of=r.as_of, data=r.data)
        for r in reversed(records)
    ]


async def _changed(runs: RunEngine, run_id: str, seq: int) -> None:
    """Until the run has an event after ``seq`` (its wait ended)."""
    async for _event in runs.events(run_id, after=seq):
        return
