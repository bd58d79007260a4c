"""MCP wire shapes: ``Tool`` objects (tools/list) and ``CallToolResult`` (tools/call)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tooldeck.core.definition import ToolDefinition
from tooldeck.core.result import ToolResult

__all__ = ["to_mcp", "to_mcp_result"]


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


def to_mcp_result(result: ToolResult) -> dict[str, Any]:
    """A ``CallToolResult`` (wire JSON, camelCase) for ``result``.

    Semantics:
        ``content`` is one text block: the tool's ``output``, else ``to_llm()``'s text
        (which also renders errors). ``structuredContent`` is ``data`` when it is a JSON
        object (MCP requires an object), and only on success, so it matches the
        tool's ``outputSchema``. ``isError`` is set for errors. ``_meta`` carries the
        provenance and call metadata: ``source_id``, ``as_of``, ``error_type``,
        ``request_id``, ``duration_ms``, ``tool_name``, ``provider``, and the
        ``error`` details (e.g. what a ``confirmation_required`` needs), when set.
        Image artifacts with ``data:`` URIs become image blocks; others resource links.
    """
    text = result.output if result.output is not None and result.success else result.to_llm()
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    for artifact in result.artifacts:
        if (
            artifact.kind == "image"
            and artifact.uri.startswith("data:")
            and ";base64," in artifact.uri
        ):
            head, _, data = artifact.uri.partition(";base64,")
            content.append({"type": "image", "data": data, "mimeType": head[5:] or "image/png"})
        else:
            link: dict[str, Any] = {
                "type": "resource_link",
                "uri": artifact.uri,
                "name": artifact.name or artifact.uri.rsplit("/", 1)[-1],
            }
            if artifact.mime_type:
                link["mimeType"] = artifact.mime_type
            content.append(link)
    meta = result.metadata
    extra: dict[str, Any] = {
        "source_id": result.source_id,
        "as_of": result.as_of,
        "request_id": meta.request_id,
        "duration_ms": meta.duration_ms,
        "tool_name": meta.tool_name,
        "provider": meta.provider,
    }
    if result.error is not None:
        extra["error_type"] = result.error.type.value
        extra["error"] = result.error.model_dump(mode="json")
    wire: dict[str, Any] = {
        "content": content,
        "isError": result.error is not None,
        "_meta": {k: v for k, v in extra.items() if v is not None},
    }
    if result.success and isinstance(result.data, dict):
        wire["structuredContent"] = result.data
    return wire
