"""Confirmation of a tool call by a human: what is asked, what is answered.

The confirming provider (``tooldeck.providers.confirming``) builds a
``ConfirmationRequest`` for a call that needs approval and hands it to the
``ToolContext.confirm`` callback of the entry point (a CLI prompt, an MCP elicitation,
a web page); the callback answers with a ``ConfirmationDecision`` (or a plain bool).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ConfirmationCallback",
    "ConfirmationDecision",
    "ConfirmationRequest",
    "arguments_hash",
]


def arguments_hash(tool: str, arguments: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of ``tool`` and the canonical JSON of ``arguments``.

    Canonical: keys sorted, no whitespace, UTF-8; so ``{"a":1,"b":2}`` and
    ``{"b": 2, "a": 1}`` hash alike and any changed value does not. Lone surrogates
    (valid in JSON text, not in UTF-8) are hashed as they are (``surrogatepass``).
    """
    text = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(f"{tool}\n{text}".encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, kw_only=True, slots=True)
class ConfirmationRequest:
    """One call waiting for a human's decision; an approval covers exactly this call."""

    approval_id: str
    """Id to approve or deny the call later (REST, CLI, UI)."""
    tool: str
    """Canonical name of the tool."""
    arguments: Mapping[str, Any]
    """The arguments as the caller sent them."""
    arguments_hash: str
    """``arguments_hash(tool, arguments)``: what the approval is bound to."""
    principal: str
    """Who asked (``ToolContext.user``, ``anonymous`` when unknown)."""
    channel: str | None
    """Where it was asked (``ToolContext.channel``); only there can it be decided."""
    profile: str | None
    """The profile the call was made in."""
    description: str
    """The tool's description, for the approver."""
    expires_at: float
    """Unix time (s) after which the approval no longer applies."""
    reason: str | None = None
    """Why this call needs a human when the tool itself does not (the data-flow rule:
    what the run has read, and what the call does with it); None otherwise."""

    def as_dict(self) -> dict[str, Any]:
        """JSON-able form, as carried in a ``confirmation_required`` error's details."""
        return {
            "approval_id": self.approval_id,
            "tool": self.tool,
            "arguments": dict(self.arguments),
            "arguments_hash": self.arguments_hash,
            "principal": self.principal,
            "channel": self.channel,
            "profile": self.profile,
            "expires_at": self.expires_at,
            **({"reason": self.reason} if self.reason else {}),
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class ConfirmationDecision:
    """A human's answer to a ``ConfirmationRequest``."""

    approved: bool
    """Run the call (True) or refuse it (False)."""
    arguments: Mapping[str, Any] | None = None
    """Edited arguments to run instead of the requested ones; None keeps them."""
    message: str | None = None
    """Why it was denied; the model sees it in the ``denied`` error."""
    approver: str | None = None
    """Who decided."""


ConfirmationCallback = Callable[
    [ConfirmationRequest],
    Awaitable[ConfirmationDecision | bool | None] | ConfirmationDecision | bool | None,
]
"""Asks a human; sync or async; a bool is shorthand for ``ConfirmationDecision(approved=b)``;
None: nobody could be asked after all (the call answers ``confirmation_required`` and
stays pending, to be decided elsewhere)."""
