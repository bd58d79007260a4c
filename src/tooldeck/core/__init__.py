"""Core: the envelope, the context, definitions and the tool base classes.

Imports nothing above it (ARCHITECTURE.md, "Layers").
"""

from tooldeck.core.composite import ActionStrategy, CompositeTool
from tooldeck.core.context import (
    EMPTY_CONTEXT,
    ServiceContainer,
    ToolContext,
    ToolEvent,
    new_request_id,
    principal_of,
)
from tooldeck.core.credentials import CallerSecret, CredentialInfo, CredentialStore, caller_secret
from tooldeck.core.definition import ToolAnnotations, ToolDefinition
from tooldeck.core.function_tool import FunctionTool, tool
from tooldeck.core.intents import Intent, IntentOutcome, IntentRouter, IntentStep
from tooldeck.core.json_schema_tool import JsonSchemaTool
from tooldeck.core.pack import ConsolePage, Pack, PackEnvironment, PackParts, PackRoutes
from tooldeck.core.progress import EventRelay
from tooldeck.core.result import (
    ArgumentsEdit,
    Artifact,
    ErrorType,
    ResultMetadata,
    ToolError,
    ToolResult,
)
from tooldeck.core.tool import Arguments, BaseTool, Tool, ToolExecutor, ToolViews

__all__ = [
    "EMPTY_CONTEXT",
    "ActionStrategy",
    "Arguments",
    "ArgumentsEdit",
    "Artifact",
    "BaseTool",
    "CallerSecret",
    "CompositeTool",
    "ConsolePage",
    "CredentialInfo",
    "CredentialStore",
    "ErrorType",
    "EventRelay",
    "FunctionTool",
    "Intent",
    "IntentOutcome",
    "IntentRouter",
    "IntentStep",
    "JsonSchemaTool",
    "Pack",
    "PackEnvironment",
    "PackParts",
    "PackRoutes",
    "ResultMetadata",
    "ServiceContainer",
    "Tool",
    "ToolAnnotations",
    "ToolContext",
    "ToolDefinition",
    "ToolError",
    "ToolEvent",
    "ToolExecutor",
    "ToolResult",
    "ToolViews",
    "caller_secret",
    "new_request_id",
    "principal_of",
    "tool",
]
