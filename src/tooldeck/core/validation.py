"""Field-level argument errors, the same for Pydantic models and raw JSON Schemas.

A model reads ``Invalid arguments for get_positions: symbol: Input should be a valid
string (got 5). Arguments: symbol (string, required), account (string).`` and can
fix its call; clients read ``details["errors"]``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from tooldeck.core.meta_schema import known_valid
from tooldeck.core.patterns import bounded_keywords, within
from tooldeck.exceptions import InvalidArgumentsError, RegistrationError

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = [
    "FieldError",
    "compile_schema",
    "describe_arguments",
    "from_json_schema",
    "from_pydantic",
    "invalid_arguments",
    "message_for",
    "parse_arguments",
]


@dataclass(frozen=True, slots=True)
class FieldError:
    """One problem with one argument."""

    field: str
    """Dotted path of the argument (``filters.0.symbol``), ``(arguments)`` for the whole."""
    message: str
    """What is wrong and what was expected."""
    type: str
    """Machine-readable kind (Pydantic error type or JSON Schema keyword)."""

    def as_dict(self) -> dict[str, str]:
        """JSON-able form for ``ToolError.details``."""
        return {"field": self.field, "message": self.message, "type": self.type}


def _path(loc: Iterable[Any]) -> str:
    return ".".join(str(p) for p in loc) or "(arguments)"


def _short(value: Any) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def from_pydantic(exc: ValidationError) -> list[FieldError]:
    """Field errors of a Pydantic ``ValidationError``."""
    errors = []
    for err in exc.errors(include_url=False):
        kind = err["type"]
        if kind == "json_invalid":
            msg = f"arguments are not valid JSON ({err.get('ctx', {}).get('error', err['msg'])})"
            errors.append(FieldError("(arguments)", msg, kind))
            continue
        if kind == "extra_forbidden":
            errors.append(FieldError(_path(err["loc"]), "unexpected argument", kind))
            continue
        msg = err["msg"]
        if kind != "missing":
            msg += f" (got {_short(err.get('input'))})"
        errors.append(FieldError(_path(err["loc"]), msg, kind))
    return errors


def compile_schema(schema: dict[str, Any]) -> Validator:
    """A validator for ``schema`` (its own ``$schema`` draft, else 2020-12).

    Raises:
        RegistrationError: ``schema`` is not a valid JSON Schema; the message says where.
    """
    import jsonschema  # on first use: ``import tooldeck`` stays light

    if isinstance(schema, dict) and not isinstance(schema.get("$schema", ""), str):
        raise RegistrationError(  # jsonschema's draft lookup would fail on it with a TypeError
            f"invalid JSON Schema at $schema: expected a meta-schema URI, got {schema['$schema']!r}"
        )
    validator_cls = jsonschema.validators.validator_for(schema, jsonschema.Draft202012Validator)
    if not (validator_cls is jsonschema.Draft202012Validator and known_valid(schema)):
        try:  # else the meta-schema's rules were checked in µs (meta_schema.py)
            validator_cls.check_schema(schema)
        except jsonschema.SchemaError as exc:
            where = "/".join(str(p) for p in exc.path) or "(root)"
            raise RegistrationError(f"invalid JSON Schema at {where}: {exc.message}") from None
    validator: Validator = _bounded(validator_cls)(schema)
    return validator


@lru_cache(maxsize=16)
def _bounded(validator_cls: type[Any]) -> Any:
    """``validator_cls`` with its regular expressions time-bounded (``core.patterns``)."""
    import jsonschema

    return jsonschema.validators.extend(validator_cls, bounded_keywords())  # type: ignore[no-untyped-call]


PATTERNS_S = 1.0
"""Seconds all of one validation's ``pattern`` matches may take together (``core.patterns``)."""


def from_json_schema(validator: Validator, instance: Any) -> list[FieldError]:
    """Field errors of ``instance`` against a compiled ``validator``.

    Its pattern matches take ``PATTERNS_S`` at most together; one out of time is an
    error at its field ("could not be checked").
    """
    errors = []
    with within(PATTERNS_S):
        found = sorted(validator.iter_errors(instance), key=lambda e: [str(p) for p in e.path])
    for err in found:
        field = _path(err.absolute_path)
        if err.validator == "required" and isinstance(err.instance, dict):
            required = err.validator_value if isinstance(err.validator_value, list) else []
            missing = [r for r in required if r not in err.instance]
            field = _path([*err.absolute_path, *missing[:1]])
            errors.append(FieldError(field, "Field required", "missing"))
        elif err.validator == "additionalProperties" and isinstance(err.instance, dict):
            allowed = (
                set(err.schema.get("properties", {})) if isinstance(err.schema, dict) else set()
            )
            for extra in sorted(set(err.instance) - allowed):
                errors.append(
                    FieldError(
                        _path([*err.absolute_path, extra]), "unexpected argument", "extra_forbidden"
                    )
                )
        else:
            errors.append(FieldError(field, err.message, str(err.validator)))
    return errors


def describe_arguments(schema: dict[str, Any]) -> str:
    """One line listing the arguments of an object schema: ``a (string, required), b``."""
    props = schema.get("properties") or {}
    required = set(schema.get("required", ()))
    parts = []
    for name, prop in props.items():
        kind = prop.get("type") if isinstance(prop, dict) else None
        if kind is None and isinstance(prop, dict) and isinstance(prop.get("anyOf"), list):
            kind = [b.get("type") for b in prop["anyOf"] if isinstance(b, dict) and b.get("type")]
        if isinstance(kind, list):
            kind = "|".join(k for k in kind if k != "null") or None
        if isinstance(prop, dict) and "enum" in prop:
            kind = "one of " + "/".join(str(v) for v in prop["enum"])
        bits = [b for b in (kind, "required" if name in required else None) if b]
        parts.append(f"{name} ({', '.join(bits)})" if bits else name)
    return ", ".join(parts) if parts else "none"


def message_for(tool_name: str, errors: Sequence[FieldError], schema: dict[str, Any]) -> str:
    """The text a model reads for invalid arguments: each error, then the arguments that exist."""
    listed = "; ".join(f"{e.field}: {e.message}" for e in errors[:10])
    if len(errors) > 10:
        listed += f"; and {len(errors) - 10} more"
    return f"Invalid arguments for {tool_name}: {listed}. Arguments: {describe_arguments(schema)}."


def invalid_arguments(
    tool_name: str, errors: Sequence[FieldError], schema: dict[str, Any]
) -> InvalidArgumentsError:
    """The ``InvalidArgumentsError`` for ``errors``.

    Its message is ``message_for``'s text; ``details["errors"]`` lists each field.
    """
    return InvalidArgumentsError(
        message_for(tool_name, errors, schema),
        details={"errors": [e.as_dict() for e in errors]},
    )


def parse_arguments(arguments: Any) -> dict[str, Any]:
    """The arguments of a call as a dict: the one place raw arguments are parsed.

    ``None`` is ``{}``; a mapping is copied; ``str`` or ``bytes`` is parsed as JSON and
    must hold an object.

    Raises:
        InvalidArgumentsError: anything else, or JSON that is malformed, nested beyond
            the parser's depth, not UTF-8 or not an object; the message says which.
    """
    if arguments is None:
        return {}
    if isinstance(arguments, Mapping):
        return dict(arguments)
    if not isinstance(arguments, str | bytes):
        raise InvalidArgumentsError(
            f"arguments must be a JSON object, got {type(arguments).__name__}"
        )
    try:
        parsed = json.loads(arguments or "{}")
    except RecursionError:
        raise InvalidArgumentsError("arguments are nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        raise InvalidArgumentsError(f"arguments are not valid JSON ({exc})") from None
    if not isinstance(parsed, dict):
        raise InvalidArgumentsError(f"arguments must be a JSON object, got {type(parsed).__name__}")
    return parsed
