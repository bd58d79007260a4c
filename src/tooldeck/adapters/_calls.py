"""What every adapter does with a call: the context it runs with, and its approval."""

from __future__ import annotations

from tooldeck.core.confirmation import ConfirmationDecision, ConfirmationRequest
from tooldeck.core.context import ToolContext
from tooldeck.core.definition import ToolDefinition

__all__ = ["approved_by", "needs_approval"]


def needs_approval(definition: ToolDefinition, arguments: object) -> bool:
    """Whether a call of ``definition`` with ``arguments`` needs a person's approval.

    A tool that requires confirmation always does; a composite tool whose
    ``confirm_actions`` name the call's ``action`` does too.
    """
    if definition.requires_confirmation:
        return True
    if definition.confirm_actions and isinstance(arguments, dict):
        return arguments.get("action") in definition.confirm_actions
    return False


def approved_by(ctx: ToolContext, approver: str) -> ToolContext:
    """``ctx`` whose confirmation answers yes, given by ``approver``.

    For a call the host framework had approved (its own human-in-the-loop step) before
    it ran the tool: tooldeck's confirmation layer records the approver in the audit
    rather than asking again.
    """

    def confirm(request: ConfirmationRequest) -> ConfirmationDecision:
        return ConfirmationDecision(approved=True, approver=approver)

    return ctx.derive(confirm=confirm)
