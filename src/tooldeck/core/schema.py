"""JSON Schema helpers shared by tools and exporters.

- ``model_schema``: the input/output schema of a Pydantic model, without noise titles.
- ``inline_refs``: replace local ``$ref`` with their definitions (Gemini has no ``$ref``).
- ``flatten_root_union``: turn a root ``oneOf``/``anyOf`` of objects (a composite tool's
  actions) into one object, since model APIs require an object at the root.
- ``to_strict``: OpenAI strict mode (all properties required, optional ones nullable,
  ``additionalProperties: false``); the ``openai`` package's own strict conversion
  leaves its output unchanged (tests/core/test_schema.py).
"""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

from tooldeck.exceptions import RegistrationError

__all__ = ["flatten_root_union", "inline_refs", "model_schema", "strip_titles", "to_strict"]

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


def _resolve(root: Schema, ref: str) -> Schema:
    if not ref.startswith("#/"):
        raise RegistrationError(f"only local $ref are supported, got {ref!r}")
    node: Any = root
    for part in ref[2:].split("/"):
        if not isinstance(node, dict) or part not in node:
            raise RegistrationError(f"$ref {ref!r} does not resolve in the schema")
        node = node[part]
    return node  # type: ignore[no-any-return]


def inline_refs(schema: Schema) -> Schema:
    """Replace every local ``$ref`` by its target and drop ``$defs``.

    Raises:
        RegistrationError: the schema is recursive (a model that contains itself),
            which cannot be inlined, or a ``$ref`` does not resolve.
    """

    def walk(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [walk(n, seen) for n in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            if ref in seen:
                raise RegistrationError(
                    f"recursive schema ({' -> '.join((*seen, ref))}) cannot be inlined "
                    "for this format; give the tool a non-recursive input_schema"
                )
            target = walk(_resolve(schema, ref), (*seen, ref))
            siblings = {k: walk(v, seen) for k, v in node.items() if k != "$ref"}
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
    outer = {k: prop[k] for k in ("description",) if k in prop}
    inner = {k: v for k, v in prop.items() if k not in outer}
    return {**outer, "anyOf": [inner, {"type": "null"}]}


def to_strict(schema: Schema) -> Schema:
    """OpenAI strict-mode form of ``schema`` (structured outputs' supported subset).

    Semantics:
        Refs are inlined, ``oneOf`` becomes ``anyOf`` and ``discriminator`` goes. In every
        object: ``additionalProperties: false`` and every property required; a
        property that was optional becomes nullable, and its default moves into its
        description ("Default: 10."), since strict mode has no ``default``. A model then
        sends ``null`` for "use the default"; ``BaseTool`` drops such nulls before
        validation.
    """

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(n) for n in node]
        if not isinstance(node, dict):
            return node
        out: Schema = {}
        for key, value in node.items():
            if key in ("discriminator", "default"):
                continue
            if key == "oneOf":
                key = "anyOf"
            if key == "properties" and isinstance(value, dict):
                out[key] = {n: walk(s) for n, s in value.items()}
            else:
                out[key] = walk(value)
        if "properties" in out or out.get("type") == "object":
            props: Schema = out.setdefault("properties", {})
            originally_required = set(node.get("required", ()))
            for name, prop in list(props.items()):
                if name in originally_required:
                    continue
                original = node.get("properties", {}).get(name, {})
                default = original.get("default")
                if default is not None:
                    text = f"Default: {json.dumps(default)}."
                    prop = {**prop, "description": f"{prop.get('description', '')} {text}".strip()}
                props[name] = _nullable(prop)
            out["required"] = list(props)
            out["additionalProperties"] = False
        all_of = out.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1:
            out.pop("allOf")
            out = {**all_of[0], **out}
        return out

    return walk(inline_refs(schema))  # type: ignore[no-any-return]
