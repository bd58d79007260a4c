"""The JSON Schema of a function's parameters, written directly for the common types.

``@tool`` used to build a Pydantic model for every function and ask it for its JSON
Schema: about 1.2 ms a tool, half of it the schema generator and a quarter the model
(``benchmarks/exporters.py``: 10,000 tools took 19 s to register; 1.8 s now). For a
signature made only of the types below, ``signature_schema`` writes the schema Pydantic would
write, key for key and in the same order (``strip_titles`` of
``create_model(...).model_json_schema()``, keys sorted as Pydantic sorts them), in
tens of microseconds; the tool builds its request model at its first call. Anything
else answers None and the tool takes Pydantic's path, so an unusual type costs time,
never a different schema. ``tests/core/test_signature_schema.py`` holds the two equal
on a grid of signatures and on the annotated functions of installed libraries.

Recognised: ``str``, ``int``, ``float``, ``bool``, ``None``, ``Any`` (or no
annotation), ``Literal`` of strings or of integers, ``list[X]``, ``dict[str, X]``,
``X | None``, and Pydantic models (their own schema, cached per class, under
``$defs``); defaults of the parameter's own scalar type, or None where None fits.
"""

from __future__ import annotations

import inspect
import math
import re
import types
import typing
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, RootModel
from pydantic.fields import FieldInfo

from tooldeck.core.schema import model_schema

__all__ = ["REQUIRED", "Parameter", "signature_schema"]

REQUIRED: Any = inspect.Parameter.empty
"""The default of a parameter that has none."""

Parameter = tuple[str, Any, Any, "str | None"]
"""One parameter: name, annotation, default (``REQUIRED`` if none), description."""

_SCALARS: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_DEF_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class _Unsupported(Exception):
    """A type or default this module does not write; Pydantic's path takes the tool."""


def signature_schema(parameters: Sequence[Parameter]) -> dict[str, Any] | None:
    """The arguments' JSON Schema, as Pydantic writes it; None for what it does not know.

    Args:
        parameters: The function's parameters in order (the context parameter left
            out). A default that is a ``FieldInfo`` (``x: int = Field(...)``) is not
            recognised.

    Returns:
        ``{"$defs"?, "additionalProperties": false, "properties", "required"?,
        "type": "object"}``, or None when a type or default is not recognised.
    """
    defs: dict[str, Any] = {}
    properties: dict[str, Any] = {}
    required: list[str] = []
    try:
        for name, annotation, default, description in parameters:
            prop = _type_schema(annotation, defs)
            if default is REQUIRED:
                required.append(name)
            elif isinstance(default, FieldInfo):
                raise _Unsupported  # constraints, examples, aliases: Pydantic's to write
            else:
                _check_default(annotation, default)
                prop["default"] = default
            if description is not None:
                prop["description"] = description
            properties[name] = prop
    except _Unsupported:
        return None
    schema: dict[str, Any] = {"additionalProperties": False, "properties": _sorted(properties)}
    if required:
        schema["required"] = required
    schema["type"] = "object"
    if defs:  # each definition is Pydantic's own, already in its order
        schema = {"$defs": {name: defs[name] for name in sorted(defs)}, **schema}
    return schema


def _type_schema(annotation: Any, defs: dict[str, Any]) -> dict[str, Any]:
    kind = _SCALARS.get(annotation)
    if kind is not None:
        return {"type": kind}
    if annotation is Any:
        return {}
    if annotation is None or annotation is type(None):
        return {"type": "null"}
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return {"$ref": f"#/$defs/{_model_def(annotation, defs)}"}
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Literal:
        return _literal_schema(args)
    if origin is list and len(args) <= 1:
        return {"items": _type_schema(args[0], defs) if args else {}, "type": "array"}
    if annotation is list:
        return {"items": {}, "type": "array"}
    if annotation is dict or (origin is dict and len(args) == 2 and args[0] is str):
        values = _type_schema(args[1], defs) if args else {}
        return {"additionalProperties": values or True, "type": "object"}
    if origin in (typing.Union, types.UnionType) and len(args) == 2 and type(None) in args:
        inner = args[0] if args[1] is type(None) else args[1]
        return {"anyOf": [_type_schema(inner, defs), {"type": "null"}]}
    raise _Unsupported


def _literal_schema(values: tuple[Any, ...]) -> dict[str, Any]:
    kinds = {type(value) for value in values}
    if len(kinds) != 1 or not kinds <= {str, int}:
        raise _Unsupported  # bools, mixed kinds, enums: Pydantic's own rules
    kind = _SCALARS[kinds.pop()]
    if len(values) == 1:
        return {"const": values[0], "type": kind}
    return {"enum": list(values), "type": kind}


def _model_def(model: type[BaseModel], defs: dict[str, Any]) -> str:
    """Put ``model``'s schema (and its own ``$defs``) in ``defs``; its name there."""
    name = model.__name__
    generic = model.__pydantic_generic_metadata__
    if issubclass(model, RootModel) or generic["origin"] or generic["parameters"]:
        raise _Unsupported
    if not _DEF_NAME.fullmatch(name):
        raise _Unsupported
    own = model_schema(model)  # Pydantic's, cached per class; raises for odd fields
    if "$ref" in own:  # a recursive model: Pydantic writes it differently at the root
        raise _Unsupported
    for def_name, definition in {**own.pop("$defs", {}), name: own}.items():
        if defs.setdefault(def_name, definition) != definition:
            raise _Unsupported  # two models of one name: Pydantic renames them
    return name


def _check_default(annotation: Any, default: Any) -> None:
    """Raise ``_Unsupported`` unless Pydantic writes ``default`` unchanged for this type."""
    if default is None:
        if annotation is Any or annotation is None or annotation is type(None):
            return
        if typing.get_origin(annotation) in (typing.Union, types.UnionType):
            return  # only ``X | None`` gets this far (``_type_schema`` ran first)
        raise _Unsupported
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(annotation) if a is not type(None)]
        _check_default(inner[0], default)
        return
    if origin is Literal:
        if not any(default == v and type(default) is type(v) for v in typing.get_args(annotation)):
            raise _Unsupported
        return
    if annotation is Any:
        if type(default) not in _SCALARS:
            raise _Unsupported
    elif type(default) is not annotation or annotation not in _SCALARS:
        raise _Unsupported
    if isinstance(default, float) and not math.isfinite(default):
        raise _Unsupported


def _sorted(value: Any, parent_key: str | None = "properties") -> Any:
    """Pydantic's key order: sorted, except the keys of ``properties`` and ``default``."""
    if isinstance(value, dict):
        keys = value if parent_key in ("properties", "default") else sorted(value)
        return {key: _sorted(value[key], key) for key in keys}
    if isinstance(value, list):
        return [_sorted(item, parent_key) for item in value]
    return value
