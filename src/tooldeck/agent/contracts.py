"""The chat API's frozen shapes (seed 003 contract freeze, seed 004 answer contract).

``docs/contracts.md`` documents each field; ``tests/agent/test_contracts.py`` freezes
the OpenAPI document and the event types, so changing one is a deliberate act.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tooldeck.agent.grounding import Grounding
from tooldeck.core.claims import Claim
from tooldeck.core.intents import ClarifyingQuestion

__all__ = [
    "EVENT_TYPES",
    "FINAL_STATES",
    "TRANSITIONS",
    "ChatAnswer",
    "ChatRequest",
    "ChatRun",
    "ConfirmRequest",
    "EventType",
    "PendingConfirmation",
    "RunEvent",
    "RunState",
    "ToolCallRecord",
]

RunState = Literal["queued", "running", "waiting_input", "completed", "failed", "cancelled"]
"""A run's state (seed 003): ``queued → running → waiting_input → completed / failed /
cancelled``; ``waiting_input → running`` once the input arrives."""

TRANSITIONS: dict[str, frozenset[str]] = {
    "queued": frozenset({"running", "failed", "cancelled"}),
    "running": frozenset({"waiting_input", "completed", "failed", "cancelled"}),
    "waiting_input": frozenset({"running", "failed", "cancelled"}),
    "completed": frozenset(),
    "failed": frozenset(),
    "cancelled": frozenset(),
}
"""Legal transitions; anything else is refused (HTTP 409)."""

FINAL_STATES = frozenset({"completed", "failed", "cancelled"})
"""States a run never leaves."""

EventType = Literal[
    "run.created",
    "run.started",
    "tool_call.started",
    "tool_call.progress",
    "tool_call.completed",
    "message.delta",
    "run.waiting_input",
    "run.completed",
    "run.failed",
    "run.cancelled",
]
"""Server-Sent Event types; none may be removed (seed 003)."""

EVENT_TYPES: tuple[str, ...] = EventType.__args__  # type: ignore[attr-defined]
"""Every event type, in the order a run can emit them."""


class ChatRequest(BaseModel):
    """Body of ``POST /api/chat`` and ``POST /api/chat/stream``."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=4000)
    """The user's question."""
    profile: str | None = None
    """Profile whose tools the run may use; None: every tool."""
    account: str | None = None
    """Account to answer about (seed 004 ``request.account``); wins over the question."""
    params: dict[str, Any] = Field(default_factory=dict)
    """Parameters that win over those read from the question, e.g. the answer to a
    clarifying question: ``{"timeframe": "YTD"}``. Intent router only."""
    session_id: str | None = None
    """Conversation id, recorded with every tool call."""


class ToolCallRecord(BaseModel):
    """One tool call a run made."""

    id: str
    """Call id (the model's ``tool_call_id``, or generated); the audit's request_id."""
    name: str
    """Tool name."""
    arguments: Any
    """Arguments as sent (a JSON object, or the model's raw text when not JSON)."""
    status: Literal["success", "error"]
    source_id: str | None = None
    """Provenance of the result (``tool:<domain>:v<N>``)."""
    as_of: str | None = None
    """Freshness of the result's data."""
    error_type: str | None = None
    """``ToolError.type`` when ``status`` is ``error``."""
    error_message: str | None = None
    duration_ms: float
    """Wall time of the call through the provider stack, ms."""


class ChatAnswer(BaseModel):
    """The answer (seed 004 ``LLMResponse`` plus the calls and the grounding verdict)."""

    answer_markdown: str
    """The answer, Markdown."""
    citations: list[str]
    """Source ids the answer rests on; each is the source_id of a tool result of the run."""
    confidence: float = Field(ge=0, le=1)
    """0–1; 0 for the graceful "could not answer" answer."""
    needs_clarification: bool
    """True when the user should answer ``clarifying_question`` first."""
    clarifying_question: ClarifyingQuestion | None = None
    """What to ask, with options (``type`` radio | checkbox | text)."""
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    """Every tool call of the run, in the order they started."""
    grounding: Grounding
    """The validator's verdict."""
    claims: list[Claim] = Field(default_factory=list)
    """Figures bound to the fields they state: each a span of ``answer_markdown``, the
    cited ``source_id`` and a JSON pointer into its data (or a derived ``op`` over
    pointers). The validator checked each there (``core.claims``)."""
    intent: str | None = None
    """The routed intent (intent router only)."""
    params: dict[str, Any] = Field(default_factory=dict)
    """The routed parameters (intent router only)."""
    mode: Literal["router", "model"]
    """Who answered: the deterministic intent router or a model."""
    model: str | None = None
    """The model, in ``model`` mode."""


class PendingConfirmation(BaseModel):
    """The tool call a ``waiting_input`` run waits on."""

    approval_id: str
    tool: str
    arguments: dict[str, Any]
    arguments_hash: str
    """What an approval is bound to (``core.confirmation.arguments_hash``)."""
    description: str
    """The tool's description, for the approver."""
    expires_at: float
    """Unix time (s); with no decision by then the call is denied."""


class ChatRun(BaseModel):
    """A run: ``POST /api/chat``'s response, ``GET /api/runs/{id}``."""

    run_id: str
    state: RunState
    question: str
    profile: str | None = None
    user: str | None = None
    created_at: str
    """ISO 8601, UTC."""
    updated_at: str
    """ISO 8601, UTC."""
    answer: ChatAnswer | None = None
    """Set once ``completed``."""
    pending: PendingConfirmation | None = None
    """Set while ``waiting_input``."""
    error: str | None = None
    """Why the run ``failed`` or was ``cancelled``."""
    last_seq: int = 0
    """Sequence number of the run's latest event."""


class ConfirmRequest(BaseModel):
    """Body of ``POST /api/runs/{id}/confirm``."""

    model_config = ConfigDict(extra="forbid")

    approve: bool
    """Run the pending call (true) or deny it (false)."""
    message: str | None = None
    """Why it was denied; the model or the answer shows it."""
    arguments: dict[str, Any] | None = None
    """Edited arguments to run instead; None keeps them."""


class RunEvent(BaseModel):
    """One Server-Sent Event of a run; its SSE ``id`` is ``<run_id>:<seq>``."""

    run_id: str
    seq: int = Field(ge=1)
    """1, 2, 3, ... per run, without gaps."""
    type: EventType
    timestamp: str
    """ISO 8601, UTC, milliseconds."""
    data: dict[str, Any] = Field(default_factory=dict)
    """Type-specific payload (docs/contracts.md)."""
