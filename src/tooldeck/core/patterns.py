"""JSON Schema ``pattern`` and ``patternProperties``, matched with a time bound.

A schema written elsewhere (an OpenAPI document, an upstream MCP server's tool) may
carry a pattern that backtracks for minutes on a crafted value (``^(a+)+$`` against
``"a" * 40 + "!"``): ``re`` cannot be stopped, and on the event loop it stops the
server. Here every match goes through the ``regex`` module with a timeout, and with
``concurrent=True`` (the GIL is released while it matches):

- one match may take ``MATCH_S`` (0.1 s); a validation's matches together take at most
  its budget (``within(seconds)``, 1 s by default in ``validation.from_json_schema``);
- a match that runs out of time is a validation error naming the pattern ("could not be
  matched in time"), never a hang; a pattern ``regex`` cannot compile is one too.

Callers that may meet such a pattern on a server's event loop validate in a worker
thread (``asyncio.to_thread``) when ``has_patterns(schema)``: the loop keeps serving
while the bounded match runs. Patterns are Python regular expressions, as ``jsonschema``
reads them (JSON Schema specifies ECMA-262; the common subset is the same).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from contextvars import ContextVar
from functools import lru_cache
from typing import Any

__all__ = ["MATCH_S", "PatternTimeout", "bounded_keywords", "has_patterns", "search", "within"]

MATCH_S = 0.1
"""Seconds one match may take."""
_deadline: ContextVar[float | None] = ContextVar("tooldeck_pattern_deadline", default=None)


class PatternTimeout(Exception):
    """A pattern did not finish matching within its time (or the validation's budget)."""


@contextlib.contextmanager
def within(seconds: float) -> Iterator[None]:
    """Bound every match made inside the block, together, to ``seconds``."""
    outer = _deadline.get()
    deadline = time.monotonic() + seconds
    token = _deadline.set(deadline if outer is None else min(outer, deadline))
    try:
        yield
    finally:
        _deadline.reset(token)


@lru_cache(maxsize=1024)
def _compiled(pattern: str) -> Any:
    import regex  # on first use: ``import tooldeck`` stays light

    return regex.compile(pattern)


def search(pattern: str, text: str) -> bool:
    """Whether ``pattern`` matches somewhere in ``text`` (``re.search``'s meaning).

    Raises:
        PatternTimeout: the match took longer than ``MATCH_S``, or than what is left of
            the enclosing ``within`` budget.
        ValueError: ``pattern`` is not a regular expression ``regex`` compiles.
    """
    try:
        compiled = _compiled(pattern)
    except Exception as exc:  # regex.error
        raise ValueError(f"{pattern!r} is not a regular expression: {exc}") from None
    timeout = MATCH_S
    deadline = _deadline.get()
    if deadline is not None:
        timeout = min(timeout, deadline - time.monotonic())
        if timeout <= 0:
            raise PatternTimeout(f"no time was left to match {pattern!r}")
    try:
        return compiled.search(text, timeout=timeout, concurrent=True) is not None
    except TimeoutError:
        raise PatternTimeout(f"{pattern!r} could not be matched in time") from None


def has_patterns(schema: Any) -> bool:
    """Whether ``schema`` holds a ``pattern`` or ``patternProperties`` keyword anywhere."""
    return any(
        isinstance(node.get("pattern"), str) or isinstance(node.get("patternProperties"), dict)
        for node in _objects(schema)
    )


def _objects(schema: Any) -> Iterator[dict[str, Any]]:
    """Every JSON object in ``schema``, nested ones included."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            yield node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def bounded_keywords() -> dict[str, Any]:
    """``jsonschema`` keyword functions whose regular expressions are time-bounded.

    For ``jsonschema.validators.extend``: ``pattern``, ``patternProperties`` and
    ``additionalProperties`` match with ``search``; ``unevaluatedProperties`` first
    matches every ``patternProperties`` pattern of the schema against the instance's
    keys with ``search`` (so the library's own matching of those pairs cannot hang),
    then is the library's. A match out of time, or a pattern that does not compile,
    is a ``ValidationError`` at that keyword.
    """
    from jsonschema import _keywords
    from jsonschema.exceptions import ValidationError

    def found(pattern: str, text: str) -> bool | ValidationError:
        try:
            return search(pattern, text)
        except (PatternTimeout, ValueError) as exc:
            return ValidationError(f"{text[:80]!r} could not be checked: {exc}")

    def pattern(validator: Any, patrn: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if not validator.is_type(instance, "string"):
            return
        matched = found(patrn, instance)
        if isinstance(matched, ValidationError):
            yield matched
        elif not matched:
            yield ValidationError(f"{instance!r} does not match {patrn!r}")

    def pattern_properties(
        validator: Any, patterns: Any, instance: Any, schema: Any
    ) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        for patrn, subschema in patterns.items():
            for key, value in instance.items():
                matched = found(patrn, key)
                if isinstance(matched, ValidationError):
                    yield matched
                    return
                if matched:
                    yield from validator.descend(value, subschema, path=key, schema_path=patrn)

    def additional_properties(
        validator: Any, extra: Any, instance: Any, schema: Any
    ) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        declared = schema.get("properties", {})
        patterns = list(schema.get("patternProperties", {}))
        extras = []
        for key in instance:
            if key in declared:
                continue
            for patrn in patterns:
                matched = found(patrn, key)
                if isinstance(matched, ValidationError):
                    yield matched
                    return
                if matched:
                    break
            else:
                extras.append(key)
        if validator.is_type(extra, "object"):
            for key in extras:
                yield from validator.descend(instance[key], extra, path=key)
        elif not extra and extras:
            listed = ", ".join(repr(k) for k in sorted(extras, key=str))
            yield ValidationError(f"Additional properties are not allowed ({listed} unexpected)")

    def unevaluated_properties(
        validator: Any, value: Any, instance: Any, schema: Any
    ) -> Iterator[Any]:
        if validator.is_type(instance, "object"):
            for patrn in _pattern_keys(schema):
                for key in instance:
                    matched = found(patrn, key)
                    if isinstance(matched, ValidationError):
                        yield matched
                        return
        library: Any = _keywords.unevaluatedProperties  # a generator function, untyped
        yield from library(validator, value, instance, schema)

    return {
        "pattern": pattern,
        "patternProperties": pattern_properties,
        "additionalProperties": additional_properties,
        "unevaluatedProperties": unevaluated_properties,
    }


def _pattern_keys(schema: Any) -> list[str]:
    """Every ``patternProperties`` pattern anywhere in ``schema``."""
    return [
        key
        for node in _objects(schema)
        if isinstance(node.get("patternProperties"), dict)
        for key in node["patternProperties"]
        if isinstance(key, str)
    ]
