"""JSON Schema helpers shared by tools and exporters.

- ``model_schema``: the input/output schema of a Pydantic model, without noise titles.
- ``inline_refs``: replace local ``$ref`` with their definitions (Gemini has no ``$ref``).
- ``flatten_root_union``: turn a root ``oneOf``/``anyOf`` of objects (a composite tool's
  actions) into one object, since model APIs require an object at the root.
- ``is_free_form_map`` / ``maps_as_pairs``: a map with free keys (``dict[str, T]``) as
  a list of ``{key, value}`` pairs, for formats that cannot say "any key" (OpenAI
  strict, Gemini); ``core.arguments.ArgumentShape`` turns the pairs back into the map.
- ``to_strict``: OpenAI strict mode (all properties required, optional ones nullable,
  ``additionalProperties: false``, only the keywords strict mode accepts); the
  ``openai`` package's own strict conversion leaves its output unchanged
  (tests/core/test_schema.py).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

from tooldeck.exceptions import RegistrationError

__all__ = [
    "ANY_VALUE",
    "INLINED_NODES",
    "closed_objects",
    "flatten_root_union",
    "inline_refs",
    "is_free_form_map",
    "maps_as_pairs",
    "model_schema",
    "required_as_properties",
    "resolve_ref",
    "strip_titles",
    "takes_no_arguments",
    "to_strict",
]

Schema = dict[str, Any]

# Keywords whose value is a map of name -> schema: their keys are names, not keywords.
_NAME_MAPS = ("properties", "$defs", "definitions", "patternProperties")


def strip_titles(schema: Any) -> Any:
    """Return ``schema`` without the ``title`` keywords Pydantic generates.

    Property *names* called ``title`` are kept; only the keyword goes.
    """
    if isinstance(schema, list):
        return [strip_titles(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: Schema = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in _NAME_MAPS and isinstance(value, dict):
            out[key] = {name: strip_titles(sub) for name, sub in value.items()}
        else:
            out[key] = strip_titles(value)
    return out


@lru_cache(maxsize=1024)
def _model_schema_json(model: type[BaseModel]) -> str:
    return json.dumps(strip_titles(model.model_json_schema()))


def model_schema(model: type[BaseModel]) -> Schema:
    """JSON Schema of ``model`` (Pydantic's, titles stripped); a fresh copy per call.

    Raises:
        RegistrationError: Pydantic cannot build a schema for the model (a field of an
            arbitrary type); the message names the model.
    """
    try:
        return json.loads(_model_schema_json(model))  # type: ignore[no-any-return]
    except Exception as exc:  # pydantic raises several error types here
        raise RegistrationError(
            f"cannot build a JSON Schema for {model.__name__}: {exc}. "
            "Use JSON-able field types or give the tool a hand-written input_schema."
        ) from exc


def resolve_ref(root: Schema, ref: str) -> Schema:
    """The schema a local ``$ref`` (``#/$defs/Name``) points to in ``root``.

    Raises:
        RegistrationError: the ref is not local or does not resolve.
    """
    if not ref.startswith("#/"):
        raise RegistrationError(f"only local $ref are supported, got {ref!r}")
    node: Any = root
    for part in ref[2:].split("/"):
        if not isinstance(node, dict) or part not in node:
            raise RegistrationError(f"$ref {ref!r} does not resolve in the schema")
        node = node[part]
    return node  # type: ignore[no-any-return]


INLINED_NODES = 20_000
"""Most schema objects ``inline_refs`` makes: refs used twice at each of N levels
double the schema N times (a schema's "billion laughs"; 30 levels are 2^30 objects),
and a stranger's schema (an upstream MCP server's, an OpenAPI document's) must not
stall every listing. Real schemas stay far below (the largest of Temporal's OpenAPI
operations' schemas inlines to ~2,800)."""


def inline_refs(schema: Schema, *, cut_recursion: bool = False) -> Schema:
    """Replace every local ``$ref`` by its target and drop ``$defs``.

    Args:
        schema: A JSON Schema with local refs.
        cut_recursion: For formats without refs (strict mode, Gemini): a ref to a
            schema it is already inside (``Failure.cause: Failure``) becomes a free
            object described as that shape, one level down, instead of an error. The
            model may send less structure there; tooldeck still validates the call
            against the real schema. Past ``INLINED_NODES`` objects, every further ref
            is left unexpanded the same way (any value, described as that shape).

    Raises:
        RegistrationError: the schema is recursive, or would inline to more than
            ``INLINED_NODES`` objects, and ``cut_recursion`` is false; or a ``$ref``
            does not resolve.
    """
    made = 0

    def walk(node: Any, seen: tuple[str, ...]) -> Any:
        nonlocal made
        if isinstance(node, list):
            return [walk(n, seen) for n in node]
        if not isinstance(node, dict):
            return node
        made += 1
        ref = node.get("$ref")
        if isinstance(ref, str):
            shape = ref.rsplit("/", 1)[-1]
            if made > INLINED_NODES and cut_recursion:
                return {"description": f"A {shape} (not expanded: the schema is too large)."}
            if made > INLINED_NODES:
                raise RegistrationError(
                    f"the schema inlines to more than {INLINED_NODES:,} objects (its $refs "
                    "nest and repeat); give the tool a smaller input_schema"
                )
            if ref in seen and cut_recursion:
                return {
                    "type": "object",
                    "description": f"A {shape} (the same shape as its parent; not expanded).",
                }
            if ref in seen:
                raise RegistrationError(
                    f"recursive schema ({' -> '.join((*seen, ref))}) cannot be inlined "
                    "for this format; give the tool a non-recursive input_schema"
                )
            target = walk(resolve_ref(schema, ref), (*seen, ref))
            siblings = {
                k: walk(v, seen)
                for k, v in node.items()
                if k not in ("$ref", "$defs", "definitions")
            }
            return {**target, **siblings}
        return {
            k: (
                {n: walk(s, seen) for n, s in v.items()}
                if k in _NAME_MAPS and isinstance(v, dict)
                else walk(v, seen)
            )
            for k, v in node.items()
            if k not in ("$defs", "definitions")
        }

    return walk(schema, ())  # type: ignore[no-any-return]


def flatten_root_union(schema: Schema) -> Schema:
    """Merge a root ``oneOf``/``anyOf`` of object variants into one object schema.

    Semantics:
        Model APIs (OpenAI, Anthropic, Gemini) require an object at the root. A
        composite tool's input is a union of its actions' objects, each with an
        ``action`` constant. The merged object has every property once; a property
        used by some actions only says so in its description ("Used by actions: a, b;
        required for a."); ``action`` becomes an enum; ``required`` keeps the properties
        every variant requires. Server-side validation still uses the exact union.
        Other schemas are returned unchanged. Refs must be inlined first.
    """
    variants = schema.get("oneOf") or schema.get("anyOf")
    if not isinstance(variants, list) or not all(
        isinstance(v, dict) and v.get("type") == "object" for v in variants
    ):
        return schema
    properties: dict[str, Schema] = {}
    used_by: dict[str, list[str]] = {}
    required_by: dict[str, list[str]] = {}
    consts: list[Any] = []
    for variant in variants:
        action_schema = variant.get("properties", {}).get("action", {})
        label = str(action_schema.get("const", action_schema.get("enum", ["?"])[0]))
        consts.append(action_schema.get("const", label))
        for name, prop in variant.get("properties", {}).items():
            if name == "action":
                continue
            properties.setdefault(name, copy.deepcopy(prop))
            used_by.setdefault(name, []).append(label)
            if name in variant.get("required", ()):
                required_by.setdefault(name, []).append(label)
    every = len(variants)
    for name, prop in properties.items():
        if len(used_by[name]) == every and len(required_by.get(name, ())) in (0, every):
            continue
        note = f"Used by actions: {', '.join(used_by[name])}"
        if required_by.get(name):
            note += f"; required for {', '.join(required_by[name])}"
        prop["description"] = f"{prop.get('description', '').rstrip('.')}. {note}.".lstrip(". ")
    action_descriptions = [
        f"{c}: {v.get('description', '')}".rstrip(": ")
        for c, v in zip(consts, variants, strict=True)
    ]
    merged: Schema = {
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": consts,
                "description": "The action to run. " + "; ".join(action_descriptions),
            },
            **properties,
        },
        "required": ["action"] + [n for n in properties if len(required_by.get(n, ())) == every],
        "additionalProperties": False,
    }
    if "description" in schema:
        merged["description"] = schema["description"]
    return merged


_SCALARS: list[Schema] = [{"type": "string"}, {"type": "number"}, {"type": "boolean"}]

ANY_VALUE: Schema = {"anyOf": [*_SCALARS, {"type": "array", "items": {"anyOf": _SCALARS}}]}
"""What "any value" is exported as where a format needs a type: a JSON scalar or a list
of them (strict mode and Gemini cannot say "anything")."""

_COMBINATORS = ("anyOf", "oneOf", "allOf", "$ref", "enum", "const", "not")


def is_free_form_map(schema: Any) -> bool:
    """Whether ``schema`` is an object with free keys (``dict[str, T]``, ``{"type": "object"}``).

    That is: an object with no ``properties`` (or ``properties: {}``, which declares
    none) and no ``required`` names, whose other keys are allowed
    (``additionalProperties`` absent, true or a schema, or ``patternProperties``): in
    JSON Schema an absent ``additionalProperties`` allows any key.
    """
    if not isinstance(schema, dict) or schema.get("properties") or schema.get("required"):
        return False
    if any(k in schema for k in _COMBINATORS) or schema.get("additionalProperties") is False:
        return False
    kind = schema.get("type")
    if kind == "object":
        return True
    return kind is None and ("additionalProperties" in schema or "patternProperties" in schema)


def takes_no_arguments(schema: Any) -> bool:
    """Whether a tool's input schema says, at its root, that the tool takes no arguments.

    ``{"type": "object", "properties": {}}``, as FastMCP and the MCP SDK write a function
    without parameters (6 of 105 real MCP tools; issue 55). JSON Schema reads an object
    declaring no properties as "any keys", and so does tooldeck below the root
    (``is_free_form_map``); at the root of a tool's arguments it means none.
    ``{"type": "object"}`` without ``properties`` stays a free-form map.
    """
    return (
        isinstance(schema, dict)
        and schema.get("properties") == {}
        and is_free_form_map(schema)
        and "additionalProperties" not in schema
        and "patternProperties" not in schema
    )


def _map_values(schema: Schema) -> Any:
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict) and extra:
        return extra
    patterns = schema.get("patternProperties")
    if isinstance(patterns, dict) and len(patterns) == 1:
        return next(iter(patterns.values()))
    return ANY_VALUE


def _pairs(schema: Schema) -> Schema:
    key: Schema = {"type": "string"}
    patterns = schema.get("patternProperties")
    if isinstance(patterns, dict) and len(patterns) == 1:
        key["pattern"] = next(iter(patterns))
    names = schema.get("propertyNames")
    if isinstance(names, dict) and isinstance(names.get("pattern"), str):
        key["pattern"] = names["pattern"]
    text = schema.get("description", "")
    text = f"{text.rstrip('.')}. " if text else ""
    out: Schema = {
        "type": "array",
        "description": f"{text}A map, given as a list of {{key, value}} pairs.",
        "items": {
            "type": "object",
            "properties": {"key": key, "value": _map_values(schema)},
            "required": ["key", "value"],
            "additionalProperties": False,
        },
    }
    for ours, theirs in (("minItems", "minProperties"), ("maxItems", "maxProperties")):
        if theirs in schema:
            out[ours] = schema[theirs]
    return out


def maps_as_pairs(schema: Schema) -> Schema:
    """``schema`` with every free-form map below the root as a list of ``{key, value}`` pairs.

    Semantics:
        A map's value schema is its ``additionalProperties`` (or its one
        ``patternProperties`` schema, whose pattern then constrains ``key``), else
        ``ANY_VALUE``. A root with free keys becomes an object with no properties.
        Refs must be inlined first.
    """

    def walk(node: Any, root: bool = False) -> Any:
        if isinstance(node, list):
            return [walk(n) for n in node]
        if not isinstance(node, dict):
            return node
        if is_free_form_map(node):
            if root:
                return {"type": "object", "properties": {}, **_keep(node, "description")}
            return walk(_pairs(node))
        return _each_child(node, walk)

    return walk(schema, root=True)  # type: ignore[no-any-return]


def closed_objects(schema: Any) -> Any:
    """``schema`` with its objects closed the way tooldeck enforces them.

    Every object that declares properties (at least one) and says nothing of other
    keys gets ``additionalProperties: false`` (``core.arguments`` refuses undeclared
    names), so that clients reading the schema (MCP, Anthropic) know it. An object
    with ``properties: {}`` declares none and stays open, as JSON Schema reads it, except
    at the root, where it means no arguments (``takes_no_arguments``): closed.
    """
    if takes_no_arguments(schema):
        return {**schema, "additionalProperties": False}
    return _closed(schema)


def _closed(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_closed(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = _each_child(schema, _closed)
    if (
        isinstance(out.get("properties"), dict)
        and out["properties"]
        and "additionalProperties" not in out
        and "patternProperties" not in out
    ):
        out["additionalProperties"] = False
    return out


def required_as_properties(node: Schema) -> Schema:
    """An object node whose ``required`` names all have a property (``ANY_VALUE`` if not).

    Formats whose models fill in ``properties`` only (strict mode, Gemini) would
    otherwise lose a name that is required but not described.
    """
    required = node.get("required")
    if not isinstance(required, list) or not required:
        return node
    props = dict(node.get("properties") or {})
    if all(name in props for name in required):
        return node
    for name in required:
        props.setdefault(name, dict(ANY_VALUE))
    return {**node, "type": "object", "properties": props}


def _each_child(node: Schema, fn: Callable[[Any], Any]) -> Schema:
    """``node`` with ``fn`` applied to each value; under a name map, to each named schema."""
    return {
        k: ({n: fn(s) for n, s in v.items()} if k in _NAME_MAPS and isinstance(v, dict) else fn(v))
        for k, v in node.items()
    }


def _keep(node: Schema, *keys: str) -> Schema:
    return {k: node[k] for k in keys if k in node}


def _nullable(prop: Schema) -> Schema:
    kind = prop.get("type")
    if isinstance(kind, str) and "enum" not in prop:
        return {**prop, "type": [kind, "null"]}
    if isinstance(kind, list):
        return prop if "null" in kind else {**prop, "type": [*kind, "null"]}
    branches = prop.get("anyOf")
    if isinstance(branches, list):
        if any(b.get("type") == "null" for b in branches):
            return prop
        return {**prop, "anyOf": [*branches, {"type": "null"}]}
    if isinstance(prop.get("enum"), list):
        enum = prop["enum"] if None in prop["enum"] else [*prop["enum"], None]
        typed = {"type": [kind, "null"]} if isinstance(kind, str) else {}
        return {**prop, "enum": enum, **typed}
    outer = _keep(prop, "description")
    inner = {k: v for k, v in prop.items() if k not in outer}
    return {**outer, "anyOf": [inner, {"type": "null"}]}


_STRICT_KEYWORDS = frozenset({
    "type", "description", "title", "enum", "const", "anyOf", "properties", "required",
    "additionalProperties", "items", "pattern", "format", "multipleOf", "maximum",
    "exclusiveMaximum", "minimum", "exclusiveMinimum", "minItems", "maxItems",
})  # fmt: skip
"""The keywords OpenAI's strict mode accepts (structured outputs' supported subset)."""

_STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)

_IN_WORDS = {
    "minLength": "At least {} characters.",
    "maxLength": "At most {} characters.",
    "uniqueItems": "Items must be unique.",
    "format": "Format: {}.",
    "default": "Default: {}.",
}
"""Dropped keywords whose meaning a model needs: said in the description instead."""


def _merge_all_of(node: Schema) -> Schema:
    """``allOf`` of object schemas merged into the node (properties and required united)."""
    branches = node.get("allOf")
    if not isinstance(branches, list) or not all(isinstance(b, dict) for b in branches):
        return node
    out: Schema = {k: v for k, v in node.items() if k != "allOf"}
    for branch in branches:
        for key, value in branch.items():
            if key == "properties":
                out["properties"] = {**out.get("properties", {}), **value}
            elif key == "required":
                out["required"] = [*out.get("required", ()), *value]
            else:
                out.setdefault(key, value)
    return out


def _strict_node(node: Schema) -> Schema:
    """One node in strict form, its children not yet visited."""
    node = _merge_all_of(node)
    if "oneOf" in node:
        node = {**{k: v for k, v in node.items() if k != "oneOf"}, "anyOf": node["oneOf"]}
    if isinstance(node.get("items"), list):  # draft-7 tuple form
        node = {**node, "items": {"anyOf": node["items"]}}
    if "prefixItems" in node and "items" not in node:
        node = {**node, "items": {"anyOf": node["prefixItems"]}}
    words = []
    out: Schema = {}
    for key, value in node.items():
        if key in _STRICT_KEYWORDS and (key != "format" or value in _STRICT_FORMATS):
            out[key] = value
        elif key == "minLength" and value == 1:
            words.append("Not empty.")
        elif key in _IN_WORDS and value not in (False, None):
            words.append(_IN_WORDS[key].format(json.dumps(value) if key == "default" else value))
    if not any(k in out for k in ("type", "anyOf", "enum", "const")):
        out = {**ANY_VALUE, **out}
    if words:
        out["description"] = " ".join([out.get("description", "").strip(), *words]).strip()
    return required_as_properties(out)


def to_strict(schema: Schema) -> Schema:
    """OpenAI strict-mode form of ``schema`` (structured outputs' supported subset).

    Semantics:
        Refs are inlined and free-form maps become lists of ``{key, value}`` pairs
        (``maps_as_pairs``). ``oneOf`` becomes ``anyOf``, a one-branch or object
        ``allOf`` is merged, and keywords strict mode rejects are dropped; those a
        model needs (``minLength``, ``maxLength``, ``uniqueItems``, an unsupported
        ``format``, ``default``) are said in the description ("At most 16
        characters."). A node with no type becomes ``ANY_VALUE``; names in
        ``required`` with no property get one. In every object:
        ``additionalProperties: false`` and every property required; a property
        that was optional becomes nullable. A model then sends ``null`` for "not
        given", which ``ArgumentShape`` drops before validation.

    A recursive schema is cut one level down (``inline_refs(cut_recursion=True)``).

    Raises:
        RegistrationError: a ``$ref`` does not resolve.
    """

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(n) for n in node]
        if not isinstance(node, dict):
            return node
        strict = _strict_node(node)
        originally_required = set(strict.get("required", ()))  # allOf's included
        out = _each_child(strict, walk)
        if "properties" in out or out.get("type") == "object":
            props: Schema = out.setdefault("properties", {})
            for name, prop in list(props.items()):
                if name not in originally_required:
                    props[name] = _nullable(prop)
            out["type"] = "object"
            out["required"] = list(props)
            out["additionalProperties"] = False
        return out

    return walk(maps_as_pairs(inline_refs(schema, cut_recursion=True)))  # type: ignore[no-any-return]
