"""The chat agent: runs that answer a question with tools, grounded in their results.

Two agents share one path: ``RouterAgent`` (no model: an ``IntentPack`` routes the
question and writes the answer) and ``ModelAgent`` (a tool loop against any
OpenAI-compatible endpoint). ``RunManager`` runs either as a state machine with events;
``check_grounding`` validates every answer before anyone sees it.
"""

from tooldeck.agent.base import Agent, Draft
from tooldeck.agent.contracts import (
    EVENT_TYPES,
    ChatAnswer,
    ChatRequest,
    ChatRun,
    ConfirmRequest,
    RunEvent,
    ToolCallRecord,
)
from tooldeck.agent.grounding import Finding, Grounding, check_grounding, find_citations
from tooldeck.agent.model_agent import ModelAgent
from tooldeck.agent.router_agent import RouterAgent
from tooldeck.agent.runs import RunManager

__all__ = [
    "EVENT_TYPES",
    "Agent",
    "ChatAnswer",
    "ChatRequest",
    "ChatRun",
    "ConfirmRequest",
    "Draft",
    "Finding",
    "Grounding",
    "ModelAgent",
    "RouterAgent",
    "RunEvent",
    "RunManager",
    "ToolCallRecord",
    "check_grounding",
    "find_citations",
]
