"""Anthropic Messages API tool format: ``{"name", "description", "input_schema"}``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tooldeck.core.definition import ToolDefinition
from tooldeck.core.names import safe_tool_name
from tooldeck.exporters._common import exported, model_facing

__all__ = ["to_anthropic"]


def to_anthropic(definitions: Iterable[ToolDefinition]) -> list[dict[str, Any]]:
    """Anthropic ``tools``: format-safe names, object input schemas (root unions flattened)."""
    return exported(definitions, "anthropic", _tool)


def _tool(d: ToolDefinition) -> dict[str, Any]:
    return {
        "name": safe_tool_name(d.name),
        "description": d.description,
        "input_schema": model_facing(d.input_schema),
    }
