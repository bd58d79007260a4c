"""Exporters: ``ToolDefinition`` / ``ToolResult`` → wire formats (OpenAI, Anthropic, Gemini, MCP)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tooldeck.core.definition import ToolDefinition
from tooldeck.core.tool_search import ToolIndex
from tooldeck.exporters.anthropic import to_anthropic
from tooldeck.exporters.gemini import to_gemini
from tooldeck.exporters.mcp import to_mcp
from tooldeck.exporters.openai import (
    run_tool_calls,
    to_openai_chat,
    to_openai_responses,
    tool_message,
)

__all__ = [
    "FORMATS",
    "export",
    "run_tool_calls",
    "to_anthropic",
    "to_gemini",
    "to_mcp",
    "to_openai_chat",
    "to_openai_responses",
    "tool_message",
]

FORMATS = ("openai", "openai-responses", "anthropic", "gemini", "mcp")
"""Format names ``export`` accepts."""


def export(
    definitions: Iterable[ToolDefinition],
    format: str,
    *,
    strict: bool = True,
    query: str | None = None,
    limit: int = 10,
) -> list[dict[str, Any]]:
    """Export ``definitions`` in ``format`` (one of ``FORMATS``).

    Args:
        definitions: The tools.
        format: ``openai`` (chat completions), ``openai-responses``, ``anthropic``,
            ``gemini`` or ``mcp``.
        strict: OpenAI strict mode (OpenAI formats only).
        query: Only the tools that match this text best (``core.tool_search``), best
            first: a large registry's tools for one task.
        limit: Most tools exported with ``query``.

    Raises:
        ValueError: unknown format; the message lists the formats.
    """
    if query is not None:
        definitions = ToolIndex.of(definitions).search(query, limit)
    if format == "openai":
        return to_openai_chat(definitions, strict=strict)
    if format == "openai-responses":
        return to_openai_responses(definitions, strict=strict)
    if format == "anthropic":
        return to_anthropic(definitions)
    if format == "gemini":
        return to_gemini(definitions)
    if format == "mcp":
        return to_mcp(definitions)
    raise ValueError(f"unknown format {format!r}; formats: {', '.join(FORMATS)}")
