"""An OpenAPI operation's request body: which media type tooldeck sends, and how.

JSON is preferred when an operation offers it (``application/json`` or a ``+json``
type), then a URL-encoded form, then a multipart form (issue 55: 73 operations of 54
public documents have a form body, which was dropped without a word). A form's fields
are the tool's ``body`` argument's properties; a field a multipart form declares as a
file (``file_fields``) is sent as a file part, named after the field, of the text given.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tooldeck.exceptions import InvalidArgumentsError

__all__ = ["FORM", "MULTIPART", "as_text", "body_media", "file_fields", "send_body"]

FORM = "application/x-www-form-urlencoded"
MULTIPART = "multipart/form-data"


def body_media(content: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The media type to send a body's ``content`` as, and its media object.

    JSON first, then ``FORM``, then ``MULTIPART``; None when ``content`` offers none of
    them (XML, octet streams: tooldeck cannot write those from a model's arguments).
    """
    offered = {
        str(kind).split(";")[0].strip().lower(): media
        for kind, media in content.items()
        if isinstance(media, dict)
    }
    for kind, media in offered.items():
        if kind == "application/json" or (
            kind.startswith("application/") and kind.endswith("+json")
        ):
            return kind, media
    for kind in (FORM, MULTIPART):
        if kind in offered:
            return kind, offered[kind]
    return None


def file_fields(schema: Any, defs: Mapping[str, Any]) -> frozenset[str]:
    """The fields of a form's schema that are files.

    A file is a string of ``format: binary`` or ``base64`` (OpenAPI 3.0), or with a
    ``contentMediaType`` or ``contentEncoding`` (3.1). ``defs``: the ``$defs`` a
    ``{"$ref": "#/$defs/<name>"}`` schema names.
    """
    ref = schema.get("$ref") if isinstance(schema, dict) else None
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        schema = defs.get(ref.removeprefix("#/$defs/"))
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return frozenset()
    return frozenset(
        name
        for name, prop in properties.items()
        if isinstance(prop, dict)
        and (
            prop.get("format") in ("binary", "base64")
            or "contentMediaType" in prop
            or "contentEncoding" in prop
        )
    )


def send_body(
    media_type: str, value: Any, files: frozenset[str], argument: str
) -> tuple[dict[str, Any], dict[str, str]]:
    """(``httpx`` request keywords, headers) that send ``value`` as ``media_type``.

    A form's values: a list repeats its field, an object is sent as its JSON text, a
    boolean as ``true``/``false``, None is left out.

    Raises:
        InvalidArgumentsError: a form's value is not an object (``argument`` named).
    """
    if media_type not in (FORM, MULTIPART):
        return {"content": json.dumps(value).encode()}, {"Content-Type": media_type}
    if not isinstance(value, dict):
        raise InvalidArgumentsError.for_field(argument, "a form's fields, as an object")
    fields = [
        (name, as_text(item))
        for name, given in value.items()
        for item in (given if isinstance(given, list) else [given])
        if item is not None
    ]
    if media_type == FORM:
        return {"data": _grouped(fields)}, {}
    parts = [
        (name, (name, text.encode(), "application/octet-stream") if name in files else (None, text))
        for name, text in fields
    ]
    return {"files": parts}, {}


def _grouped(fields: list[tuple[str, str]]) -> dict[str, str | list[str]]:
    out: dict[str, str | list[str]] = {}
    for name, text in fields:
        held = out.get(name)
        out[name] = text if held is None else [*([held] if isinstance(held, str) else held), text]
    return out


def as_text(value: Any) -> str:
    """A value as a form field, query or path parameter says it (JSON for containers)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    return str(value)
