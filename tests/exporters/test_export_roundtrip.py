"""What an exported schema lets a model send, tooldeck accepts, and it means what it says.

Calls are generated (Hypothesis, with ``calls_for`` below: ``hypothesis-jsonschema``
0.23 does not run on Hypothesis 6.170) from each tool's *exported*
schema (OpenAI strict, Anthropic, Gemini), for every tool of the default runtime, a
few schemas with the keywords strict mode rejects, and 600 real-world function schemas
from the Berkeley Function Calling Leaderboard (``tests/data/function_schemas.json``,
rebuilt by ``tests/data/build_function_corpus.py``). Each call goes through the tool's
own validation, the path every entry point takes:

- it must be accepted, unless it breaks a constraint the export could only state in
  words (``At most 16 characters.``, ``Used by actions: write``);
- after tooldeck's argument step, the original schema must hold for it (a ``null``
  means "not given", pairs are the map), but for those same worded constraints.

``TOOLDECK_ROUNDTRIP_EXAMPLES`` (default 8) sets the examples per group of schemas; the
default run is derandomized (the same calls every time, so CI is repeatable), and
``TOOLDECK_ROUNDTRIP_RANDOM=1`` explores new ones.
"""

from __future__ import annotations

import json
import math
import os
from datetime import UTC
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tooldeck.config import load_settings
from tooldeck.core import BaseTool, JsonSchemaTool, Tool
from tooldeck.core.definition import ToolDefinition
from tooldeck.exceptions import InvalidArgumentsError
from tooldeck.exporters import export
from tooldeck.runtime import build_runtime

CORPUS = json.loads((Path(__file__).parents[1] / "data" / "function_schemas.json").read_text())
EXAMPLES = int(os.environ.get("TOOLDECK_ROUNDTRIP_EXAMPLES", "8"))
GROUP = 25
RANDOM = os.environ.get("TOOLDECK_ROUNDTRIP_RANDOM") == "1"

WORDED = {
    "minLength", "maxLength", "uniqueItems", "format", "minProperties", "maxProperties",
    "not", "if", "then", "else", "dependentRequired", "dependencies", "propertyNames",
    "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
}  # fmt: skip
"""Constraints the strict or Gemini export drops and states in the description."""

EDGE_SCHEMAS: list[dict[str, Any]] = [
    {  # keywords strict mode rejects, and a non-standard one
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
            "name": {"type": "string", "minLength": 2, "maxLength": 8, "optional": True},
            "site": {"type": "string", "format": "uri"},
            "headers": {"type": "object", "patternProperties": {"^x-": {"type": "string"}}},
        },
        "required": ["name"],
    },
    {  # free-form maps, typed and untyped, nested in an array
        "type": "object",
        "properties": {
            "context": {"type": "object"},
            "values": {"type": "object", "additionalProperties": {"type": "number"}},
            "rows": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"meta": {"type": "object", "additionalProperties": True}},
                },
            },
        },
    },
    {  # enums of numbers (Gemini takes texts only), an object declaring no properties
        "type": "object",
        "properties": {
            "level": {"type": "integer", "enum": [1, 2, 3]},
            "ratio": {"enum": [0.5, 1.5, None]},
            "options": {"type": "object", "properties": {}},
        },
        "required": ["level"],
    },
    {"type": "object", "required": ["q"]},  # required with no properties
    {"type": "object"},  # no arguments declared at all
    {  # nullable and defaulted
        "type": "object",
        "properties": {
            "base": {"type": "integer", "minimum": 2, "maximum": 36},
            "unit": {"type": "string"},
            "note": {"type": ["string", "null"], "default": None},
            "mode": {"enum": ["a", "b"], "default": "a"},
        },
        "required": ["base"],
    },
]


def echo(arguments: dict[str, Any]) -> dict[str, Any]:
    return arguments


def corpus_tools() -> list[Tool]:
    schemas = [(c["name"], c["description"], c["parameters"]) for c in CORPUS]
    schemas += [(f"edge_{i}", "Edge case.", s) for i, s in enumerate(EDGE_SCHEMAS)]
    return [
        JsonSchemaTool(
            name=f"t{i}_{name}"[:64],
            description=description,
            input_schema=schema,
            function=echo,
            pass_dict=True,
        )
        for i, (name, description, schema) in enumerate(schemas)
    ]


def runtime_tools() -> list[Tool]:
    runtime = build_runtime(load_settings())
    try:
        names = runtime.registry.names
        return [t for n in names if (t := runtime.registry.get(n)) is not None]
    finally:
        runtime.close()


TOOLS = runtime_tools() + corpus_tools()


def from_gemini(node: Any) -> Any:
    """A Gemini schema as JSON Schema, to generate from (``nullable`` is a null branch)."""
    if isinstance(node, list):
        return [from_gemini(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {
        k: {n: from_gemini(s) for n, s in v.items()} if k == "properties" else from_gemini(v)
        for k, v in node.items()
        if k != "nullable"
    }
    if node.get("type") == "object":
        out.setdefault("properties", {})
        out["additionalProperties"] = False
    return {"anyOf": [out, {"type": "null"}]} if node.get("nullable") else out


def exported(definition: ToolDefinition, fmt: str) -> dict[str, Any]:
    (item,) = export([definition], fmt)
    if fmt == "openai":
        return item["function"]["parameters"]  # type: ignore[no-any-return]
    if fmt == "anthropic":
        return item["input_schema"]  # type: ignore[no-any-return]
    return from_gemini(item.get("parameters", {"type": "object", "properties": {}}))  # type: ignore[no-any-return]


def original_for(tool: Tool, arguments: dict[str, Any]) -> dict[str, Any]:
    """The schema the arguments must meet: a composite tool's chosen action's variant."""
    schema = tool.definition.input_schema
    for variant in schema.get("oneOf", ()):
        if variant["properties"]["action"].get("const") == arguments.get("action"):
            return variant  # type: ignore[no-any-return]
    return schema


def _kinds(error: jsonschema.ValidationError) -> set[str]:
    """The keywords an error comes down to; for a union, those of its closest branch."""
    if error.validator not in ("anyOf", "oneOf") or not error.context:
        return {str(error.validator)}
    branches: dict[Any, set[str]] = {}
    for sub in error.context:
        branches.setdefault(sub.schema_path[0], set()).update(_kinds(sub))
    return min(branches.values(), key=lambda kinds: (not kinds <= WORDED, len(kinds)))


def complaints(tool: Tool, call: dict[str, Any]) -> tuple[set[str], set[str]]:
    """What the original schema says of ``call`` once normalized: (worded, other) kinds.

    For a composite tool, a field of another action, a field only some actions require
    ("Used by actions: write; required for write") and an action's own bounds on a
    field that several actions share (the merged field has the first action's) are
    worded too.
    """
    assert isinstance(tool, BaseTool)
    normalized, unexpected = tool.argument_shape.normalize(call)
    schema = original_for(tool, normalized)
    validator = jsonschema.validators.validator_for(schema, jsonschema.Draft202012Validator)
    kinds = set().union(*(_kinds(e) for e in validator(schema).iter_errors(normalized)))
    kinds |= {"unexpected"} if unexpected else set()
    composite = {"required", "unexpected", "minItems", "maxItems", "minimum", "maximum"}
    worded = WORDED | (composite if "oneOf" in tool.definition.input_schema else set())
    return kinds & worded, kinds - worded


def accepted(tool: Tool, call: dict[str, Any]) -> bool:
    assert isinstance(tool, BaseTool)
    try:
        tool.validate_input(json.dumps(call))
    except (InvalidArgumentsError, ValueError):  # pydantic's ValidationError is a ValueError
        return False
    return True


_SCALAR = st.one_of(st.text(max_size=12), st.integers(-1000, 1000), st.booleans())
_FORMATS: dict[str, st.SearchStrategy[str]] = {
    "date": st.dates().map(lambda d: d.isoformat()),
    "date-time": st.datetimes(timezones=st.just(UTC)).map(lambda d: d.isoformat()),
    "time": st.times().map(lambda t: t.isoformat()),
    "email": st.emails(),
    "uuid": st.uuids().map(str),
    "ipv4": st.ip_addresses(v=4).map(str),
    "ipv6": st.ip_addresses(v=6).map(str),
}


def calls_for(schema: Any) -> st.SearchStrategy[Any]:
    """Values of a JSON Schema, for the subset the three exports produce.

    Strings are short (at most 12 characters unless ``minLength`` asks for more), arrays
    at most 3 items, free maps at most 3 keys: enough to reach every branch.
    """
    if not isinstance(schema, dict) or schema is True:
        return _SCALAR
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "anyOf" in schema or "oneOf" in schema:
        return st.one_of(*(calls_for(b) for b in schema.get("anyOf") or schema["oneOf"]))
    if isinstance(schema.get("allOf"), list) and schema["allOf"]:
        return calls_for(
            {**schema["allOf"][0], **{k: v for k, v in schema.items() if k != "allOf"}}
        )
    kind = schema.get("type")
    if isinstance(kind, list):
        return st.one_of(*(calls_for({**schema, "type": k}) for k in kind))
    if kind == "null":
        return st.none()
    if kind == "boolean":
        return st.booleans()
    if kind in ("integer", "number"):
        low, high = schema.get("minimum"), schema.get("maximum")
        if "exclusiveMinimum" in schema:
            low = schema["exclusiveMinimum"] + (1 if kind == "integer" else 1e-6)
        if "exclusiveMaximum" in schema:
            high = schema["exclusiveMaximum"] - (1 if kind == "integer" else 1e-6)
        ints = st.integers(
            None if low is None else math.ceil(low), None if high is None else math.floor(high)
        )
        if kind == "integer":
            return ints
        return ints | st.floats(low, high, allow_nan=False, allow_infinity=False)
    if kind == "string":
        if isinstance(schema.get("pattern"), str):
            return st.from_regex(schema["pattern"], fullmatch=True)
        if schema.get("format") in _FORMATS:
            return _FORMATS[schema["format"]]
        low = schema.get("minLength", 0)
        return st.text(min_size=low, max_size=max(low, min(schema.get("maxLength", 12), 12)))
    if kind == "array":
        low = schema.get("minItems", 0)
        return st.lists(
            calls_for(schema.get("items", True)),
            min_size=low,
            max_size=max(low, min(schema.get("maxItems", 3), 3)),
            unique_by=(lambda v: json.dumps(v, sort_keys=True))
            if schema.get("uniqueItems")
            else None,
        )
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        required = set(schema.get("required", ()))
        fixed = st.fixed_dictionaries(
            {n: calls_for(p) for n, p in props.items() if n in required},
            optional={n: calls_for(p) for n, p in props.items() if n not in required},
        )
        for name in required - set(props):
            fixed = st.tuples(fixed, _SCALAR).map(lambda t, n=name: {**t[0], n: t[1]})
        extra = schema.get("additionalProperties", not props)
        patterns = dict(schema.get("patternProperties") or {})
        names = schema.get("propertyNames")
        if isinstance(names, dict) and "pattern" in names:
            patterns = {names["pattern"]: extra if isinstance(extra, dict) else True}
        if extra is False and not patterns:
            return fixed
        keys = (
            st.one_of(*(st.from_regex(p, fullmatch=True) for p in patterns))
            if patterns
            else st.text(max_size=8)
        )
        values = calls_for(next(iter(patterns.values())) if patterns else extra)
        more = st.dictionaries(keys.filter(lambda k: k not in props), values, max_size=3)
        return st.tuples(fixed, more).map(lambda t: {**t[1], **t[0]})
    return _SCALAR


def group_strategy(tools: list[Tool], fmt: str) -> st.SearchStrategy[list[dict[str, Any]]]:
    return st.tuples(*(calls_for(exported(t.definition, fmt)) for t in tools)).map(list)


EDGES = {f"t{len(CORPUS) + i}_edge_{i}" for i in range(len(EDGE_SCHEMAS))}
COMPOSITES = {t.definition.name for t in TOOLS if "oneOf" in t.definition.input_schema}
GROUPS = [TOOLS[i : i + GROUP] for i in range(0, len(TOOLS), GROUP)]


def test_the_corpus_is_large_and_real() -> None:
    assert len(CORPUS) >= 300
    assert len(TOOLS) > len(CORPUS) + 20  # and every tool of the default runtime


def test_google_genai_accepts_every_gemini_declaration() -> None:
    from google.genai import types

    declarations = export([t.definition for t in TOOLS], "gemini")
    refused = {}
    for declaration in declarations:
        try:
            types.FunctionDeclaration.model_validate(declaration)
        except ValueError as exc:
            refused[declaration["name"]] = str(exc).splitlines()[1]
    assert not refused


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "gemini"])
@pytest.mark.parametrize("group", range(len(GROUPS)))
def test_every_call_an_exported_schema_allows_is_accepted(fmt: str, group: int) -> None:
    tools = GROUPS[group]
    accepted_calls = dict.fromkeys((t.definition.name for t in tools), 0)

    @settings(
        max_examples=EXAMPLES,
        derandomize=not RANDOM,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(group_strategy(tools, fmt))
    def run(calls: list[dict[str, Any]]) -> None:
        for tool, call in zip(tools, calls, strict=True):
            worded, other = complaints(tool, call)
            name = tool.definition.name
            assert not other, f"{fmt} call of {name} means something else: {call!r} ({other})"
            ok = accepted(tool, call)
            assert ok or worded, f"{fmt} call of {name} rejected: {call!r}"
            accepted_calls[name] += ok

    run()
    # the worded constraints are the exception: every tool had calls accepted (but
    # composite tools, whose actions each require their own fields, and the edge
    # schemas, which are there to be mostly worded constraints)
    never = [n for n, count in accepted_calls.items() if count == 0]
    assert not [n for n in never if n not in COMPOSITES and n not in EDGES], never
