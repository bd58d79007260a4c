"""MCP wire shapes: ``Tool`` objects (tools/list) and ``CallToolResult`` (tools/call)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from tooldeck.core.definition import ToolDefinition
from tooldeck.core.result import ToolResult
from tooldeck.core.schema import closed_objects, flatten_root_union, inline_refs
from tooldeck.exceptions import RegistrationError
from tooldeck.exporters._common import exported

__all__ = ["mcp_input_schema", "to_mcp", "to_mcp_result"]


def mcp_input_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The ``inputSchema`` a tool is listed with.

    Semantics:
        Objects are closed as tooldeck enforces them (``core.schema.closed_objects``).
        A root union of actions (a composite tool) also gets the merged top-level
        ``properties`` of ``core.schema.flatten_root_union`` (an
        ``action`` enum and every action's fields), so that clients which render only
        ``properties`` show the arguments; the exact ``oneOf`` stays for validation.
    """
    closed: dict[str, Any] = closed_objects(schema)
    if "properties" not in closed and isinstance(closed.get("oneOf"), list):
        try:
            flat = flatten_root_union(inline_refs(closed))
        except RegistrationError:  # a recursive union: keep it exact only
            return closed
        if "properties" in flat:
            closed = {**closed, "properties": flat["properties"], "required": ["action"]}
    return closed


def to_mcp(definitions: Iterable[ToolDefinition]) -> list[dict[str, Any]]:
    """MCP tool listings; names and schemas are exact (MCP allows dots and unions).

    ``outputSchema`` is the tool's output schema when it is an object, as MCP
    requires; a schema that can be neither an object nor null (``-> int``,
    ``-> list[str]``) is wrapped as ``{"result": ...}``, as the MCP spec suggests
    (``to_mcp_result`` wraps the value the same way); others are left out. Annotation
    hints (``readOnlyHint``, ``destructiveHint``, ``idempotentHint``, ``openWorldHint``)
    only when stated. ``inputSchema`` is ``mcp_input_schema``'s; ``_meta`` carries the
    tool's ``source_id`` when it has one, and ``requires_confirmation: true`` for a tool
    a person must approve each call of.
    """
    return exported(definitions, "mcp", _listing)


def _listing(d: ToolDefinition) -> dict[str, Any]:
    item: dict[str, Any] = {
        "name": d.name,
        "description": d.description,
        "inputSchema": mcp_input_schema(d.input_schema),
    }
    meta = {"source_id": d.source_id, "requires_confirmation": d.requires_confirmation}
    if any(meta.values()):
        item["_meta"] = {k: v for k, v in meta.items() if v}
    if d.annotations.title:
        item["title"] = d.annotations.title
    output = d.output_schema
    if output and output.get("type") == "object":
        item["outputSchema"] = output
    elif output and _scalar(output):
        item["outputSchema"] = {
            "type": "object",
            "properties": {"result": output},
            "required": ["result"],
        }
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
    return item


_SCALARS = frozenset({"string", "integer", "number", "boolean", "array"})


def _scalar(schema: dict[str, Any]) -> bool:
    """Whether every value of ``schema`` is a string, number, boolean or array (never null)."""
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    return bool(kinds) and all(k in _SCALARS for k in kinds)


def to_mcp_result(result: ToolResult) -> dict[str, Any]:
    """A ``CallToolResult`` (wire JSON, camelCase) for ``result``.

    Semantics:
        On success, ``structuredContent`` is ``data`` when it is a JSON object, and
        ``{"result": data}`` for any other value but null (MCP requires an object), so
        it matches the tool's ``outputSchema`` (``to_mcp``). The first content block is
        the object serialised, as the MCP spec asks of a tool returning structured
        content; for a wrapped value it is the tool's text as it was (``42``, not
        ``{"result": 42}``, as FastMCP does). Otherwise it is the tool's ``output``,
        else ``to_llm()``'s text (which also renders errors). ``isError`` is set for
        errors. ``_meta`` carries the provenance and call metadata: ``source_id``,
        ``as_of``, ``error_type``, ``request_id``, ``duration_ms``, ``tool_name``,
        ``provider``, and the ``error`` details (e.g. what a ``confirmation_required``
        needs), when set.
        Image artifacts with ``data:`` URIs become image blocks; others resource links.
    """
    data = result.data
    structured: dict[str, Any] | None = None
    if result.success and isinstance(data, dict):
        structured = data
        text = json.dumps(data, ensure_ascii=False, default=str)
    else:
        if result.success and data is not None:
            structured = {"result": data}
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
    if meta.edited is not None:
        extra["edited"] = meta.edited.model_dump(mode="json")
    if result.error is not None:
        extra["error_type"] = result.error.type.value
        extra["error"] = result.error.model_dump(mode="json")
    wire: dict[str, Any] = {
        "content": content,
        "isError": result.error is not None,
        "_meta": {k: v for k, v in extra.items() if v is not None},
    }
    if structured is not None:
        wire["structuredContent"] = structured
    return wire
