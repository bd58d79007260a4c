"""Gemini function declarations (the OpenAPI-3 subset Gemini's ``Schema`` accepts)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from tooldeck.core.definition import ToolDefinition
from tooldeck.core.names import safe_tool_name
from tooldeck.core.schema import (
    ANY_VALUE,
    flatten_root_union,
    inline_refs,
    maps_as_pairs,
    required_as_properties,
)
from tooldeck.exporters._common import exported

__all__ = ["gemini_schema", "to_gemini"]

_KEEP = {
    "type", "format", "description", "nullable", "enum", "properties", "required", "items",
    "minItems", "maxItems", "minimum", "maximum", "minLength", "maxLength", "pattern",
    "anyOf", "minProperties", "maxProperties",
}  # fmt: skip


def gemini_schema(schema: Any) -> Any:
    """Convert a JSON Schema to Gemini's subset.

    ``["T", "null"]`` types and ``anyOf`` with a null branch become ``nullable``;
    ``const`` becomes a one-value ``enum``, and an enum of numbers or booleans an enum of
    their texts (``_text_enum``); a node with no type is ``ANY_VALUE``;
    ``exclusiveMinimum``/``exclusiveMaximum`` are said in the description;
    keywords Gemini rejects (``additionalProperties``, ``default``, ``$schema``,
    ``title``, ...) are dropped, and so is an optional property that is an object with
    no properties (Gemini refuses those). Refs must be inlined and maps given as pairs
    (``core.schema.maps_as_pairs``) first.
    """
    if isinstance(schema, list):
        return [gemini_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    node = dict(schema)
    if not any(k in node for k in ("type", "anyOf", "oneOf", "enum", "const")):
        node = {**ANY_VALUE, **node}
    if "const" in node:
        node["enum"] = [node.pop("const")]
    kind = node.get("type")
    if isinstance(kind, list):
        rest = [k for k in kind if k != "null"]
        if len(rest) < len(kind):
            node["nullable"] = True
        node["type"] = rest[0] if len(rest) == 1 else "string"
    branches = node.get("anyOf") or node.pop("oneOf", None)
    if isinstance(branches, list):
        real = [b for b in branches if b.get("type") != "null"]
        if len(real) < len(branches):
            node["nullable"] = True
        if len(real) == 1:
            node.pop("anyOf", None)
            node = {**real[0], **{k: v for k, v in node.items() if k != "anyOf"}}
        else:
            node["anyOf"] = real
    enum = node.get("enum")
    if isinstance(enum, list) and not all(isinstance(v, str) for v in enum):
        node = _text_enum(node, enum)
    elif enum is not None and "type" not in node:
        node["type"] = "string"
    node = required_as_properties(node)
    words = [
        f"{text} {node[key]}."
        for key, text in (("exclusiveMinimum", "Greater than"), ("exclusiveMaximum", "Less than"))
        if key in node
    ]
    if words:
        node["description"] = " ".join([node.get("description", ""), *words]).strip()
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key not in _KEEP:
            continue
        if key == "properties":
            required = set(node.get("required", ()))
            out[key] = {
                n: gemini_schema(s)
                for n, s in value.items()
                if n in required or not _empty_object(s)
            }
        elif key in ("items", "anyOf"):
            out[key] = gemini_schema(value)
        else:
            out[key] = value
    return out


def _text_enum(node: dict[str, Any], values: list[Any]) -> dict[str, Any]:
    """An enum of numbers or booleans as an enum of their JSON texts (``1`` → ``"1"``).

    Gemini's ``Schema.enum`` holds strings only (google-genai rejects ``[1, 2, 3]``).
    The model sends the text, and ``core.arguments`` turns a text that names exactly
    one member back into that member before validation. A ``null`` member becomes
    ``nullable``; bounds and formats of the number are dropped (they are in the values).
    """
    out = {k: v for k, v in node.items() if k not in ("minimum", "maximum", "format")}
    if None in values:
        out["nullable"] = True
    out["type"] = "string"
    out["enum"] = [v if isinstance(v, str) else json.dumps(v) for v in values if v is not None]
    return out


def _empty_object(schema: Any) -> bool:
    return (
        isinstance(schema, dict) and schema.get("type") == "object" and not schema.get("properties")
    )


def to_gemini(definitions: Iterable[ToolDefinition]) -> list[dict[str, Any]]:
    """Gemini ``function_declarations``; pass as ``tools=[{"function_declarations": ...}]``.

    Raises:
        RegistrationError: a ``$ref`` in a tool's schema does not resolve (a recursive
            schema is cut one level down: Gemini has no ``$ref``).
    """
    return exported(definitions, "gemini", _declaration)


def _declaration(d: ToolDefinition) -> dict[str, Any]:
    inlined = inline_refs(d.input_schema, cut_recursion=True)
    params = gemini_schema(maps_as_pairs(flatten_root_union(inlined)))
    declaration: dict[str, Any] = {"name": safe_tool_name(d.name), "description": d.description}
    if params.get("properties"):
        declaration["parameters"] = params
    return declaration
