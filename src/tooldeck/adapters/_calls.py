"""What every adapter does with a call: the context it runs with, and its approval."""

from __future__ import annotations

from tooldeck.core.confirmation import ConfirmationDecision, ConfirmationRequest
from tooldeck.core.context import ToolContext
from tooldeck.core.definition import ToolDefinition
from tooldeck.core.tool import Arguments
from tooldeck.core.validation import parse_arguments
from tooldeck.exceptions import InvalidArgumentsError

__all__ = ["approved_by", "needs_approval"]


def needs_approval(definition: ToolDefinition, arguments: Arguments) -> bool:
    """Whether a call of ``definition`` with ``arguments`` needs a person's approval.

    A tool that requires confirmation always does; a composite tool whose
    ``confirm_actions`` name the call's ``action`` does too. Arguments that are not a
    JSON object name no action (the tool will refuse them).
    """
    if definition.requires_confirmation:
        return True
    if not definition.confirm_actions:
        return False
    try:
        return parse_arguments(arguments).get("action") in definition.confirm_actions
    except InvalidArgumentsError:
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
