"""tooldeck: the tool layer for LLM agents.

Define a tool once, with typed input and output; run every call safely; export it to
every model format; record every call with its provenance::

    from tooldeck import ToolRegistry, tool

    @tool(source_id="tool:greeting:v1")
    def greet(name: str) -> dict:
        \"\"\"Greet someone.

Args:
            name: Who to greet.
        \"\"\"
        return {"greeting": f"Hello, {name}!"}

    registry = ToolRegistry([greet])
    result = registry.execute_sync("greet", '{"name": "Ada"}')
    openai_tools = registry.export("openai")
"""

from tooldeck.core import (
    ActionStrategy,
    BaseTool,
    CompositeTool,
    FunctionTool,
    JsonSchemaTool,
    ToolContext,
    ToolDefinition,
    ToolError,
    ToolResult,
    tool,
)
from tooldeck.exceptions import ToolDeckError, ToolFailure
from tooldeck.providers import PolicyConfig, ToolRegistry, ToolsProvider

__all__ = [
    "ActionStrategy",
    "BaseTool",
    "CompositeTool",
    "FunctionTool",
    "JsonSchemaTool",
    "PolicyConfig",
    "ToolContext",
    "ToolDeckError",
    "ToolDefinition",
    "ToolError",
    "ToolFailure",
    "ToolRegistry",
    "ToolResult",
    "ToolsProvider",
    "tool",
]

__version__ = "0.1.0"
