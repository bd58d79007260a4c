"""``ConfirmingToolsProvider``: asks a human before tools that need confirmation (seed 002)."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Callable, Coroutine, Iterable, Mapping
from typing import Any, TypeVar

from tooldeck.core.confirmation import ConfirmationDecision, ConfirmationRequest
from tooldeck.core.context import ANONYMOUS, ToolContext, new_request_id
from tooldeck.core.definition import ToolDefinition
from tooldeck.core.result import ArgumentsEdit, ToolResult, trusted_metadata
from tooldeck.core.tool import Arguments, error_result
from tooldeck.core.validation import parse_arguments
from tooldeck.exceptions import InvalidArgumentsError, StoreUnavailableError
from tooldeck.providers.approvals import Approval, ApprovalStore
from tooldeck.providers.base import ToolsProvider, unknown_name
from tooldeck.providers.filtered import compile_globs
from tooldeck.providers.flow import FlowRules, FlowTracker
from tooldeck.providers.wrapper import WrapperProvider

__all__ = ["ConfirmingToolsProvider"]

_T = TypeVar("_T")


class ConfirmingToolsProvider(WrapperProvider):
    """Runs a tool that needs confirmation only once a human approved that exact call.

    Semantics:
        A tool needs confirmation when its name matches one of ``tools`` (names or
        globs), or else when ``rule(definition)`` is true (the per-profile policy, whose
        layers start from the tool's own flag, so configuration can relax it), or,
        without a rule, when its definition says so; its definition is shown with
        ``requires_confirmation`` set accordingly. A tool
        whose definition lists ``confirm_actions`` and needs no confirmation otherwise
        is guarded only for calls whose ``action`` argument is one of them. For a
        guarded call, in order:

        1. a decision already made for the same call (tool, canonical arguments,
           principal; see ``ApprovalStore``) is consumed: approved runs the call with
           the approver's arguments, denied returns ``denied`` with their message;
        2. else, with a ``ctx.confirm`` callback, the call is stored as pending and the
           callback asked; its answer is recorded through ``ApprovalStore.decide``
           (unless the approval was decided meanwhile through the store, as a chat
           run's confirm route does) and applied the same way (a callback that raises
           counts as a denial, an approval that expired as no decision, a callback
           that answers None, having found nobody to ask, as step 3);
        3. else the call is stored as pending and ``confirmation_required`` is
           returned; its ``details`` carry the ``approval_id``, tool, arguments, their
           hash, the principal and the expiry, which is what approving it later needs.

        Arguments that are not a JSON object are passed through, so the tool itself
        reports them as a validation error. Every decision goes to the store's
        listeners (the audit log). A call run with arguments the approver edited
        carries them in ``metadata.edited``, so the layers above (the audit) and the
        caller know what ran.

        With ``flow`` rules (``providers.flow``), a call also needs confirmation when
        its run has read ``private`` data and the tool has the ``egress`` effect, or
        has read ``untrusted`` content and the tool is ``destructive`` (for a tool with
        ``confirm_actions``, only for those actions); the request's ``reason`` says
        which tools were read. Calls of tools labelled ``private`` or ``untrusted`` are
        noted in ``tracker`` before they run.

    Args:
        wrapped: The provider whose tools are guarded.
        tools: Names or globs of tools that need confirmation.
        approvals: Store of pending and decided approvals, shared across profiles.
        rule: Decides for each definition, e.g. from policy configuration; None: the
            definition's own ``requires_confirmation``.
        flow: Data-flow labels of the tools; None: no data-flow rule.
        tracker: What each run has read, shared across profiles (with ``flow``).
    """

    def __init__(
        self,
        wrapped: ToolsProvider,
        *,
        tools: Iterable[str] = (),
        approvals: ApprovalStore | None = None,
        rule: Callable[[ToolDefinition], bool] | None = None,
        flow: FlowRules | None = None,
        tracker: FlowTracker | None = None,
    ) -> None:
        super().__init__(wrapped)
        self.tools = tuple(tools)
        self.approvals = approvals or ApprovalStore()
        self.rule = rule
        self.flow = flow
        self.tracker = tracker or FlowTracker()
        self._pattern = compile_globs(self.tools)
        self._guarded: dict[str, ToolDefinition] | None = None
        self._effects: dict[str, frozenset[str]] = {}
        self._tracked: dict[str, tuple[str, frozenset[str]]] = {}

    def needs_confirmation(self, definition: ToolDefinition) -> bool:
        """Whether calls of ``definition`` need a human's approval in this view.

        A name in ``tools`` always does. Otherwise ``rule`` decides when given (the
        policy, whose layers start from the tool's own ``requires_confirmation`` so
        that a trusted setup can relax it explicitly); without a rule, the tool's flag.
        """
        if self._pattern.fullmatch(definition.name) is not None:
            return True
        if self.rule is not None:
            return self.rule(definition)
        return definition.requires_confirmation

    def transform_definitions(self, definitions: list[ToolDefinition]) -> list[ToolDefinition]:
        """Definitions, those needing confirmation marked ``requires_confirmation``."""
        shown: list[ToolDefinition] = []
        guarded: dict[str, ToolDefinition] = {}
        effects: dict[str, frozenset[str]] = {}
        tracked: dict[str, tuple[str, frozenset[str]]] = {}
        for definition in definitions:
            needed = self.needs_confirmation(definition)
            if needed != definition.requires_confirmation:
                definition = definition.model_copy(update={"requires_confirmation": needed})
            names = (definition.name, *definition.aliases)
            if self.flow is not None:
                labels = self.flow.labels(definition) & _READ_LABELS
                for name in names if labels else ():
                    tracked[name] = (definition.name, labels)
                effects[definition.name] = self.flow.effects(definition)
            if (
                definition.requires_confirmation
                or definition.confirm_actions
                or effects.get(definition.name)
            ):
                for name in names:
                    guarded[name] = definition
            shown.append(definition)
        self._guarded, self._effects, self._tracked = guarded, effects, tracked
        return shown

    def reset(self) -> None:
        """Forget which tools are guarded."""
        super().reset()
        self._guarded = None

    def execute(
        self, name: str, arguments: Arguments = None, ctx: ToolContext | None = None
    ) -> Coroutine[Any, Any, ToolResult]:
        """Forward the call, after confirmation for guarded tools.

        An unguarded call returns the wrapped provider's awaitable itself (no extra
        coroutine frame on the hot path).
        """
        if type(name) is not str:
            return unknown_name(self, name, ctx)
        guarded = self._guarded
        if guarded is not None and name not in guarded:
            return self._run(name, arguments, ctx)
        return self._confirmed(name, arguments, ctx)

    def _run(
        self, name: str, arguments: Arguments, ctx: ToolContext | None
    ) -> Coroutine[Any, Any, ToolResult]:
        """Forward a call that may run, noting what its run reads."""
        if self._tracked:
            self._note_read(name, ctx)
        return self.wrapped.execute(name, arguments, ctx)

    async def _stored(self, operation: Callable[[ConfirmationRequest], _T], request: Any) -> _T:
        """``operation(request)`` on the approval store; in a thread unless in memory.

        A PostgreSQL store answers over the network (up to its pool's 5 s wait when the
        server is away), a file may wait for another process's lock: neither may hold
        up every other call on the event loop. Memory answers inline.
        """
        if self.approvals.shared:
            return await asyncio.to_thread(operation, request)
        return operation(request)

    def _note_read(self, name: str, ctx: ToolContext | None) -> None:
        """Record in the tracker that the call's run reads what ``name``'s results are."""
        read = self._tracked.get(name)
        if read is not None:
            run = FlowTracker.run_of(ctx)
            if run is not None:
                self.tracker.record(run, read[1], read[0])

    async def _confirmed(
        self, name: str, arguments: Arguments, ctx: ToolContext | None
    ) -> ToolResult:
        if self._guarded is None:
            await self.all_definitions()
        definition = (self._guarded or {}).get(name)
        parsed = _as_object(arguments) if definition is not None else None
        if definition is None or parsed is None:
            return await self._run(name, arguments, ctx)
        reason = self._flow_reason(definition, parsed, ctx)  # before the call's own read
        if (
            not definition.requires_confirmation
            and parsed.get("action") not in definition.confirm_actions
            and reason is None
        ):
            return await self._run(name, arguments, ctx)
        request = self.approvals.new_request(
            definition.name, parsed, ctx, definition.description, reason=reason
        )
        try:
            approval = await self._stored(self.approvals.take, request)
            if approval is None:
                pending = await self._stored(self.approvals.request, request)
                if ctx is None or ctx.confirm is None:
                    return self._required(pending.request, ctx)
                try:
                    approval = await self._ask(ctx, pending.request)
                except _NobodyAsked:
                    return self._required(pending.request, ctx)
        except Exception as exc:  # the approval store is away: nothing runs unapproved
            why = exc.public if isinstance(exc, StoreUnavailableError) else type(exc).__name__
            return error_result(
                "unavailable",
                f"The call to {definition.name} needs an approval, and the approvals cannot "
                f"be read right now ({why}); it did not run. Try again later.",
                trusted_metadata(definition.name, None, _request_id(ctx), 0.0),
                details={"tool": definition.name},
                retryable=True,
            )
        decision = approval.decision if approval is not None else None
        if decision is None or not decision.approved:
            if decision is not None and decision.message:
                reason = decision.message
            else:
                reason = "no reason given" if approval else "the approval expired undecided"
            return error_result(
                "denied",
                f"The call to {definition.name} was denied by "
                f"{(decision and decision.approver) or 'the approver'}: {reason}. Do not "
                "retry it as is; ask the user how to proceed.",
                trusted_metadata(definition.name, None, _request_id(ctx), 0.0),
                details={
                    "approval_id": (approval.request if approval else request).approval_id,
                    "message": reason,
                    "approver": decision.approver if decision else None,
                    "tool": definition.name,
                },
            )
        if decision.arguments is None or dict(decision.arguments) == dict(parsed):
            return await self._run(name, arguments, ctx)
        by = decision.approver or ANONYMOUS  # an approver without an identity is still one
        edit = ArgumentsEdit(arguments=dict(decision.arguments), by=by)
        result = await self._run(name, edit.arguments, ctx)
        return result.model_copy(
            update={"metadata": result.metadata.model_copy(update={"edited": edit})}
        )

    def _flow_reason(
        self, definition: ToolDefinition, arguments: Mapping[str, Any], ctx: ToolContext | None
    ) -> str | None:
        """Why the data-flow rules want a human to see this call, or None."""
        effects = self._effects.get(definition.name)
        if not effects:
            return None
        if definition.confirm_actions and arguments.get("action") not in definition.confirm_actions:
            effects = effects - {"destructive"}  # a composite's read actions change nothing
        return self.tracker.reason(FlowTracker.run_of(ctx), effects, definition.name)

    async def _ask(self, ctx: ToolContext, request: ConfirmationRequest) -> Approval | None:
        """Ask ``ctx.confirm`` about the pending ``request``; the decided approval, taken.

        Every decision goes through ``ApprovalStore.decide``: a callback that decided
        the approval itself (a chat run, through its confirm route) is taken as decided;
        otherwise its answer is recorded as the decision of the entry point that gave
        the callback. None when the approval expired before it was decided.

        Raises:
            _NobodyAsked: the callback answered None and the approval is still pending.
        """
        assert ctx.confirm is not None
        try:
            answer = ctx.confirm(request)
            if inspect.isawaitable(answer):
                answer = await answer
        except Exception as exc:  # a broken prompt is a denial, never a silent approval
            answer = ConfirmationDecision(
                approved=False, message=f"confirmation failed: {type(exc).__name__}: {exc}"
            )
        current = self.approvals.get(request.approval_id)
        if answer is None and current is not None and current.status == "pending":
            raise _NobodyAsked
        if not isinstance(answer, ConfirmationDecision):
            answer = ConfirmationDecision(approved=bool(answer))
        if current is not None and current.status == "pending":
            with contextlib.suppress(KeyError, ValueError):  # expired meanwhile
                self.approvals.decide(request.approval_id, answer)
        return self.approvals.take(request)

    @staticmethod
    def _required(request: ConfirmationRequest, ctx: ToolContext | None) -> ToolResult:
        why = f" {request.reason}" if request.reason else ""
        where = ctx.approve_at if ctx is not None else None
        if where:
            how = (
                f" A person must approve it: {where.replace('{approval_id}', request.approval_id)}."
                " Tell the user exactly that and what the call would do; do not repeat the"
                " call until they say they approved it, then repeat it with the same arguments."
            )
        else:
            how = (
                " Tell the user what you want to do and why; once they approve, repeat the"
                " same call with the same arguments."
            )
        return error_result(
            "confirmation_required",
            f"{request.tool} needs a person's approval before it runs (approval id "
            f"{request.approval_id}).{why}{how}",
            trusted_metadata(request.tool, None, _request_id(ctx), 0.0),
            details=request.as_dict(),
        )


_READ_LABELS = frozenset({"private", "untrusted"})


class _NobodyAsked(Exception):
    """The callback could ask nobody after all: the call stays pending."""


def _as_object(arguments: Arguments) -> Mapping[str, Any] | None:
    """The arguments as an object, or None: the tool then reports them as invalid."""
    try:
        return parse_arguments(arguments)
    except InvalidArgumentsError:
        return None


def _request_id(ctx: ToolContext | None) -> str:
    return (ctx and ctx.request_id) or new_request_id()
