"""The one step every call's arguments take before validation: ``ArgumentShape``.

A tool's input schema is read once into a shape; ``shape.normalize(arguments)`` then,
for every kind of tool (Pydantic model, raw JSON Schema, composite action, MCP
upstream tool):

- drops a ``null`` sent for an argument whose schema does not allow null: OpenAI
  strict mode makes every argument required and nullable, so a model sends ``null``
  for "not given" (``core.schema.to_strict``); a required one is then reported as
  missing, which is what the model meant;
- turns a free-form map sent as ``[{"key": k, "value": v}, ...]``, which is how the
  strict and Gemini exports give a map (``core.schema.maps_as_pairs``), back into
  ``{k: v}``;
- turns the text of an enum member that is a number or a boolean (``"2"`` for
  ``Literal[1, 2, 3]``) back into the member: the Gemini export gives such enums as
  texts, the only enums Gemini takes;
- finds arguments a closed object does not declare, so that a misspelled filter is an
  error with a did-you-mean rather than silently ignored.

Nested objects, arrays of objects, ``anyOf``/``oneOf`` variants and local ``$ref``
(recursive ones too) are followed. An object is *closed* when it declares
properties (``properties: {}`` declares none: that object is a free-form map) and
does not allow others (``additionalProperties`` absent or false,
no ``patternProperties``); a tool accepts extras by saying so in its schema
(``additionalProperties: true`` or a schema; Pydantic ``extra="allow"``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from tooldeck.core.names import closest_names
from tooldeck.core.schema import is_free_form_map, resolve_ref, takes_no_arguments
from tooldeck.core.validation import (
    FieldError,
    from_json_schema,
    invalid_arguments,
    parse_arguments,
)
from tooldeck.exceptions import InvalidArgumentsError, RegistrationError

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = ["ArgumentShape", "allows_null", "check_arguments"]

Schema = dict[str, Any]


def allows_null(schema: Any) -> bool:
    """Whether ``schema`` accepts ``null`` (a null type, a null branch, or no type at all)."""
    if not isinstance(schema, dict):
        return True
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if None in (schema.get("enum") or ()) or ("const" in schema and schema["const"] is None):
        return True
    branches = schema.get("anyOf") or schema.get("oneOf") or ()
    if any(allows_null(b) for b in branches):
        return True
    constrained = ("type", "anyOf", "oneOf", "allOf", "$ref", "enum", "const", "not")
    return not any(k in schema for k in constrained)


class _Node:
    """A part of the arguments that needs work; schemas that need none compile to None."""

    def normalize(self, value: Any, path: tuple[str, ...], errors: list[FieldError]) -> Any:
        raise NotImplementedError


@dataclass(eq=False, slots=True)
class _Ref(_Node):
    """A ``$ref``, resolved once its target is compiled (so recursion terminates)."""

    target: _Node | None = None

    def normalize(self, value: Any, path: tuple[str, ...], errors: list[FieldError]) -> Any:
        return value if self.target is None else self.target.normalize(value, path, errors)


@dataclass(eq=False, slots=True)
class _Array(_Node):
    items: _Node

    def normalize(self, value: Any, path: tuple[str, ...], errors: list[FieldError]) -> Any:
        if not isinstance(value, list):
            return value
        out = [self.items.normalize(v, (*path, str(i)), errors) for i, v in enumerate(value)]
        return value if all(a is b for a, b in zip(out, value, strict=True)) else out


@dataclass(eq=False, slots=True)
class _Map(_Node):
    """A free-form map; a list of ``{key, value}`` pairs becomes the map."""

    values: _Node | None

    def normalize(self, value: Any, path: tuple[str, ...], errors: list[FieldError]) -> Any:
        if isinstance(value, list) and all(
            isinstance(p, dict) and p.keys() == {"key", "value"} and isinstance(p["key"], str)
            for p in value
        ):
            value = {p["key"]: p["value"] for p in value}
        if self.values is None or not isinstance(value, dict):
            return value
        out = {k: self.values.normalize(v, (*path, k), errors) for k, v in value.items()}
        return value if all(out[k] is v for k, v in value.items()) else out


@dataclass(eq=False, slots=True)
class _Object(_Node):
    names: frozenset[str]
    closed: bool
    droppable: frozenset[str]
    """Properties whose schema does not allow null: a null means "not given"."""
    children: dict[str, _Node]
    extras: _Node | None = None
    foreign: frozenset[str] = frozenset()
    """Names declared by sibling variants of a union: a null for one is "not given"."""

    @property
    def trivial(self) -> bool:
        return not self.children and self.extras is None

    def normalize(self, value: Any, path: tuple[str, ...], errors: list[FieldError]) -> Any:
        if not isinstance(value, dict):
            return value
        if self.trivial and value.keys() <= self.names and None not in value.values():
            return value  # the common case: nothing to do
        out: dict[str, Any] = {}
        changed = False
        for key, item in value.items():
            if item is None and (key in self.droppable or key in self.foreign):
                changed = True
                continue
            if key in self.names:
                child = self.children.get(key)
            elif self.closed:
                errors.append(_unexpected((*path, key), self.names))
                changed = True
                continue
            else:
                child = self.extras
            new = item if child is None else child.normalize(item, (*path, key), errors)
            changed = changed or new is not item
            out[key] = new
        return out if changed else value


@dataclass(eq=False, slots=True)
class _Union(_Node):
    """``anyOf``/``oneOf`` of objects.

    The variant is chosen by a constant discriminator (a composite tool's ``action``)
    or by the names the value uses.
    """

    variants: list[_Object]
    discriminator: str | None
    by_value: dict[Any, _Object] = field(default_factory=dict)

    def normalize(self, value: Any, path: tuple[str, ...], errors: list[FieldError]) -> Any:
        if not isinstance(value, dict):
            return value
        chosen: _Object | None = None
        if self.discriminator is not None:
            key = value.get(self.discriminator)
            chosen = self.by_value.get(key) if isinstance(key, str | int | bool) else None
        else:
            given = {k for k, v in value.items() if v is not None}
            chosen = next((v for v in self.variants if given <= v.names), None)
        return value if chosen is None else chosen.normalize(value, path, errors)


@dataclass(eq=False, slots=True)
class _Members(_Node):
    """An enum (or const) with members that are not strings: their JSON texts map back."""

    by_text: dict[str, Any]

    @classmethod
    def of(cls, members: list[Any]) -> _Members | None:
        """The node for ``members``; None when a text means no member (all strings)."""
        texts = {json.dumps(m): m for m in members if m is not None and not isinstance(m, str)}
        by_text = {t: m for t, m in texts.items() if t not in members}
        return cls(by_text) if by_text else None

    def normalize(self, value: Any, path: tuple[str, ...], errors: list[FieldError]) -> Any:
        return self.by_text.get(value, value) if isinstance(value, str) else value


def _unexpected(path: tuple[str, ...], names: frozenset[str]) -> FieldError:
    hint = closest_names(path[-1], sorted(names), n=1)
    message = "unexpected argument" + (f" (did you mean {hint[0]!r}?)" if hint else "")
    return FieldError(".".join(path), message, "extra_forbidden")


class _Compiler:
    def __init__(self, root: Schema) -> None:
        self.root = root
        self.refs: dict[str, _Ref] = {}

    def ref(self, ref: str) -> _Node | None:
        if ref in self.refs:
            return self.refs[ref]
        node = self.refs[ref] = _Ref()
        try:
            node.target = self.compile(resolve_ref(self.root, ref))
        except RegistrationError:  # not local, or dangling: nothing to prepare there
            node.target = None
        return node if node.target is not None else None

    def compile(self, schema: Any) -> _Node | None:
        if not isinstance(schema, dict):
            return None
        if isinstance(schema.get("$ref"), str):
            return self.ref(schema["$ref"])
        all_of = schema.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and "properties" not in schema:
            return self.compile(all_of[0])
        branches = schema.get("anyOf") or schema.get("oneOf")
        if isinstance(branches, list) and "properties" not in schema:
            return self.union([self.compile(b) for b in branches], branches)
        members = [schema["const"]] if "const" in schema else schema.get("enum")
        if isinstance(members, list):
            return _Members.of(members)
        if is_free_form_map(schema):
            return _Map(self.compile(schema.get("additionalProperties")))
        kind = schema.get("type")
        if kind == "array" or (isinstance(kind, list) and "array" in kind):
            items = self.compile(schema.get("items"))
            return _Array(items) if items is not None else None
        properties = schema.get("properties")
        if not isinstance(properties, dict):
            return None
        return self.object(schema, properties)

    def object(self, schema: Schema, properties: dict[str, Any]) -> _Object:
        extra = schema.get("additionalProperties")
        closed = (extra is None or extra is False) and "patternProperties" not in schema
        children = {}
        for name, prop in properties.items():
            node = self.compile(prop)
            if node is not None:
                children[name] = node
        return _Object(
            names=frozenset(properties),
            closed=closed,
            droppable=frozenset(n for n, p in properties.items() if not allows_null(p)),
            children=children,
            extras=self.compile(extra) if isinstance(extra, dict) else None,
        )

    def union(self, nodes: list[_Node | None], branches: list[Any]) -> _Node | None:
        real = [n for n in nodes if n is not None]
        objects = [n for n in real if isinstance(n, _Object)]
        if len(real) == 1:
            return real[0]
        if not objects or len(objects) != len(real):
            return None
        every = frozenset().union(*(o.names for o in objects))
        variants = [replace(o, foreign=every - o.names) for o in objects]
        discriminator, by_value = _discriminator(branches, variants)
        return _Union(variants, discriminator, by_value)


def _discriminator(
    branches: list[Any], variants: list[_Object]
) -> tuple[str | None, dict[Any, _Object]]:
    """The property every branch fixes to its own constant, and the variant per value."""
    if len(branches) != len(variants):
        return None, {}
    props = [b.get("properties", {}) if isinstance(b, dict) else {} for b in branches]
    for name in props[0]:
        values = []
        for p in props:
            prop = p.get(name)
            if not isinstance(prop, dict):
                break
            if "const" in prop:
                values.append(prop["const"])
            elif isinstance(prop.get("enum"), list) and len(prop["enum"]) == 1:
                values.append(prop["enum"][0])
            else:
                break
        else:
            if len(set(map(repr, values))) == len(values):
                return name, dict(zip(values, variants, strict=True))
    return None, {}


@dataclass(eq=False, slots=True)
class ArgumentShape:
    """What a tool's arguments look like, compiled once from its input schema.

    Semantics:
        See the module docstring. ``normalize`` never raises; it returns the arguments
        (the same dict when nothing changed, which is the common case and costs a set
        comparison) and the field errors for undeclared arguments, each with the
        closest declared name.
    """

    root: _Node | None

    @property
    def flat(self) -> bool:
        """Whether only top-level names need preparing (no nested objects, maps, unions)."""
        root = self.root
        return root is None or (isinstance(root, _Object) and root.trivial)

    @property
    def closed(self) -> bool:
        """Whether the top level refuses undeclared names."""
        return isinstance(self.root, _Object) and self.root.closed

    @classmethod
    def of(cls, schema: Mapping[str, Any]) -> ArgumentShape:
        """The shape of an input schema (a JSON Schema object, refs local)."""
        schema = dict(schema)
        if takes_no_arguments(schema):  # {"properties": {}} at the root: none (issue 55)
            return cls(_Object(frozenset(), True, frozenset(), {}, None))
        return cls(_Compiler(schema).compile(schema))

    def normalize(self, arguments: dict[str, Any]) -> tuple[dict[str, Any], list[FieldError]]:
        """Normalize ``arguments``; return them and the undeclared ones as errors.

        Returns:
            The arguments with strict-mode nulls dropped and maps restored, and the
            field errors (empty when there are none).
        """
        if self.root is None:
            return arguments, []
        errors: list[FieldError] = []
        out = self.root.normalize(arguments, (), errors)
        return out, errors

    def prepare(self, tool_name: str, arguments: Any) -> tuple[dict[str, Any], list[FieldError]]:
        """Parse raw ``arguments`` (a mapping, JSON text or None) and ``normalize`` them.

        Returns:
            The arguments, and the undeclared ones as field errors (the caller
            reports them together with its own validation's errors).

        Raises:
            InvalidArgumentsError: the arguments are not a JSON object.
        """
        try:
            parsed = parse_arguments(arguments)
        except InvalidArgumentsError as exc:
            raise InvalidArgumentsError(
                f"Invalid arguments for {tool_name}: {exc.message}."
            ) from None
        return self.normalize(parsed)


def check_arguments(
    tool_name: str,
    schema: dict[str, Any],
    validator: Validator,
    arguments: Any,
    shape: ArgumentShape | None = None,
) -> dict[str, Any]:
    """Prepare and validate the arguments of a tool described by a raw JSON Schema.

    ``arguments`` go through ``shape`` (``ArgumentShape.prepare``), then ``validator``.

    Returns:
        The normalized arguments as a dict.

    Raises:
        InvalidArgumentsError: invalid JSON, undeclared arguments, schema violations
            field by field (the text of ``message_for``; ``details["errors"]`` lists
            them), or arguments nested deeper than a recursive schema can be walked.
    """
    try:
        instance, errors = (shape or ArgumentShape.of(schema)).prepare(tool_name, arguments)
        errors += from_json_schema(validator, instance)
    except RecursionError:  # deep data under a recursive schema: the caller's problem
        raise InvalidArgumentsError(
            f"Invalid arguments for {tool_name}: arguments are nested too deeply."
        ) from None
    if errors:
        raise invalid_arguments(tool_name, errors, schema)
    return instance
