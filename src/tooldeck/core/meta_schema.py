"""A fast check that a JSON Schema is valid against the 2020-12 meta-schema.

``jsonschema``'s ``check_schema`` walks the 2020-12 meta-schema's seven vocabularies
through ``$dynamicRef`` lookups: about 1 ms for a four-property tool schema, which is
10 s to register 10,000 tools from an OpenAPI document or a server's listing.
``known_valid`` states the same rules as plain code (each keyword of the meta-schema
and the type its value must have) and answers in microseconds.

It only ever says "valid" for a schema the meta-schema accepts: anything it is not
sure of (a URI it would need a URI parser to judge, ``$vocabulary``, a schema nested
deeper than Python's recursion allows) is "not known", and the caller runs the full
check, which also words the error (``validation.compile_schema``). The equivalence is
tested against ``jsonschema`` on real schemas and their mutations
(``tests/core/test_meta_schema.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

__all__ = ["known_valid"]

_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
_ANCHOR = re.compile(r"[A-Za-z_][-A-Za-z0-9._]*")
# A URI reference any URI checker accepts: a relative path and/or a JSON pointer
# fragment in plain characters (``#/$defs/Address``, ``other.json#/items``).
_PLAIN_URI_REFERENCE = re.compile(r"[A-Za-z0-9_.~/-]*(#[A-Za-z0-9_.~/$-]*)?")


@lru_cache(maxsize=4096)
def _compiles(pattern: str) -> bool:
    """Whether ``pattern`` is a regex, as ``jsonschema``'s ``regex`` format checks it."""
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return False
    return True


def _is_integer(value: Any) -> bool:
    # JSON Schema's integer (as jsonschema types it): 1 and 1.0, not True.
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _string(value: Any) -> bool:
    return isinstance(value, str)


def _boolean(value: Any) -> bool:
    return isinstance(value, bool)


def _count(value: Any) -> bool:
    return _is_integer(value) and value >= 0


def _array(value: Any) -> bool:
    return isinstance(value, list)


def _string_set(value: Any) -> bool:
    return (
        isinstance(value, list)
        and all(isinstance(v, str) for v in value)
        and len(set(value)) == len(value)
    )


def _type(value: Any) -> bool:
    if isinstance(value, str):
        return value in _TYPES
    return bool(value) and _string_set(value) and all(v in _TYPES for v in value)


def _uri_reference(value: Any) -> bool:
    return isinstance(value, str) and _PLAIN_URI_REFERENCE.fullmatch(value) is not None


def _anchor(value: Any) -> bool:
    return isinstance(value, str) and _ANCHOR.fullmatch(value) is not None


def _schema_map(value: Any) -> bool:
    return isinstance(value, dict) and all(known_valid(v) for v in value.values())


def _schema_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(known_valid(v) for v in value)


def _pattern_map(value: Any) -> bool:
    return _schema_map(value) and all(_compiles(k) for k in value)


_RULES: dict[str, Callable[[Any], bool]] = {
    # core
    "$id": lambda v: _uri_reference(v) and v.find("#") in (-1, len(v) - 1),
    "$schema": lambda v: v == "https://json-schema.org/draft/2020-12/schema",
    "$ref": _uri_reference,
    "$dynamicRef": _uri_reference,
    "$recursiveRef": _uri_reference,
    "$anchor": _anchor,
    "$dynamicAnchor": _anchor,
    "$recursiveAnchor": _anchor,
    "$vocabulary": lambda v: False,  # its keys are URIs: left to the full check
    "$comment": _string,
    "$defs": _schema_map,
    "definitions": _schema_map,
    "dependencies": lambda v: (
        isinstance(v, dict) and all(_string_set(d) or known_valid(d) for d in v.values())
    ),
    # applicator, unevaluated, content
    "prefixItems": _schema_list,
    "allOf": _schema_list,
    "anyOf": _schema_list,
    "oneOf": _schema_list,
    "properties": _schema_map,
    "patternProperties": _pattern_map,
    "dependentSchemas": _schema_map,
    **dict.fromkeys(
        (
            "items",
            "contains",
            "additionalProperties",
            "propertyNames",
            "if",
            "then",
            "else",
            "not",
            "unevaluatedItems",
            "unevaluatedProperties",
            "contentSchema",
        ),
        lambda v: known_valid(v),
    ),
    # validation
    "type": _type,
    "enum": _array,
    "multipleOf": lambda v: _is_number(v) and v > 0,
    **dict.fromkeys(("maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"), _is_number),
    **dict.fromkeys(
        (
            "maxLength",
            "minLength",
            "maxItems",
            "minItems",
            "maxContains",
            "minContains",
            "maxProperties",
            "minProperties",
        ),
        _count,
    ),
    "pattern": lambda v: isinstance(v, str) and _compiles(v),
    "uniqueItems": _boolean,
    "required": _string_set,
    "dependentRequired": lambda v: isinstance(v, dict) and all(map(_string_set, v.values())),
    # meta-data, format-annotation, content
    **dict.fromkeys(
        ("title", "description", "format", "contentEncoding", "contentMediaType"), _string
    ),
    **dict.fromkeys(("deprecated", "readOnly", "writeOnly"), _boolean),
    "examples": _array,
}
"""Each keyword of the 2020-12 meta-schema and what its value must be.

``const`` and ``default`` take any value, and keywords the meta-schema does not name
are allowed with any value, as in the meta-schema itself.
"""


def known_valid(schema: Any) -> bool:
    """True when ``schema`` is certainly valid against the 2020-12 meta-schema.

    False means "not known": invalid, or outside what this check decides. Never raises.
    """
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, dict):
        return False
    rules = _RULES
    try:
        for keyword, value in schema.items():
            rule = rules.get(keyword)
            if rule is not None and not rule(value):
                return False
    except RecursionError:
        return False
    return True
