"""MCP ``Tool`` objects (tools/list): ``name``, ``inputSchema``, ``outputSchema``, ``annotations``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tooldeck.core.definition import ToolDefinition

__all__ = ["to_mcp"]


def to_mcp(definitions: Iterable[ToolDefinition]) -> list[dict[str, Any]]:
    """MCP tool listings; names and schemas are exact (MCP allows dots and unions).

    ``outputSchema`` is included only for object schemas, as MCP requires; annotation
    hints (``readOnlyHint``, ``destructiveHint``, ``idempotentHint``, ``openWorldHint``)
    only when stated.
    """
    tools = []
    for d in definitions:
        item: dict[str, Any] = {
            "name": d.name,
            "description": d.description,
            "inputSchema": d.input_schema,
        }
        if d.annotations.title:
            item["title"] = d.annotations.title
        if d.output_schema and d.output_schema.get("type") == "object":
            item["outputSchema"] = d.output_schema
        hints = {
            "title": d.annotations.title,
            "readOnlyHint": d.annotations.read_only,
            "destructiveHint": d.annotations.destructive,
            "idempotentHint": d.annotations.idempotent,
            "openWorldHint": d.annotations.open_world,
        }
        hints = {k: v for k, v in hints.items() if v is not None}
        if hints:
            item["annotations"] = hints
        tools.append(item)
    return tools
