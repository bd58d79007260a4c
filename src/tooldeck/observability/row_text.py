"""A call's arguments and data as a row keeps them: redacted, bounded JSON text.

Arguments and data past ``MAX_STORED_CHARS`` are kept as their size, hash and head; a
value JSON cannot encode becomes a marker with its size, never a dropped row.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any

from tooldeck.core.tool import Arguments
from tooldeck.observability.redact import might_contain_secret, redact, redact_text

__all__ = [
    "MAX_STORED_CHARS",
    "arguments_json",
    "bounded",
    "call_texts",
    "compact_encoder",
    "dumps",
    "utf8_safe",
]

MAX_STORED_CHARS = 64_000
"""Arguments or data longer than this (JSON characters) are stored as a marker with
their size, SHA-256 and first 2,000 characters, so a 100 MB body costs 2 KB."""


def compact_encoder(*, ascii_only: bool) -> Callable[[Any], str]:
    """A function giving compact JSON text (``,`` and ``:``; ``str`` of what JSON lacks).

    Built once: ``json.dumps`` with options makes a new encoder per call, and
    ``JSONEncoder.encode`` makes a new C encoder per call (0.6 of its 1.2 µs for a
    two-key dict). No check for cycles: a value that holds itself fails as deep
    nesting does, with ``RecursionError``. ``ascii_only`` escapes everything past
    ASCII, lone surrogates included.

    Raises (from the returned function):
        RecursionError: nesting past the interpreter's limit (or a cycle).
        ValueError: from ``default`` or a value's own ``__str__``.
    """
    escape = json.encoder.encode_basestring_ascii if ascii_only else json.encoder.encode_basestring
    make = getattr(json.encoder, "c_make_encoder", None)  # not in typeshed
    if make is None:  # an interpreter without the C accelerator
        return json.JSONEncoder(
            ensure_ascii=ascii_only, separators=(",", ":"), default=str, check_circular=False
        ).encode
    chunks = make(None, str, escape, None, ":", ",", False, False, True)
    join = "".join
    return lambda value: join(chunks(value, 0))


_encode = compact_encoder(ascii_only=False)


def dumps(value: Any) -> str:
    """JSON text of ``value``; a value JSON cannot encode becomes a marker, never a drop."""
    try:
        return _encode(value)
    except (RecursionError, ValueError) as exc:
        return _encode({"_unrecorded": f"{type(exc).__name__}: {exc}"[:200]})


def call_texts(arguments: Arguments, data: Any, check_syntax: bool) -> tuple[str, str | None]:
    """Redacted JSON texts of a call's arguments and data (None: no data), bounded.

    The common case, arguments and data with nothing secret-looking in either, takes one
    pre-check over both, joined by a newline (every credential pattern treats it as a
    boundary, as the start or end of a text); anything else is redacted field by field.
    """
    if type(arguments) is bytes and len(arguments) <= MAX_STORED_CHARS:
        arguments = arguments.decode("utf-8", errors="replace")  # a REST or MCP body
    text = None
    if not check_syntax:
        if type(arguments) is str:  # a str subclass takes the slow path, correctly
            text = arguments
        elif isinstance(arguments, Mapping):
            text = dumps(dict(arguments))
    if text is not None:
        args = text.strip() or "{}"
        data_text = None if data is None else dumps(data)
        joined = args if data_text is None else f"{args}\n{data_text}"
        if len(joined) <= MAX_STORED_CHARS and not might_contain_secret(joined):
            return args, data_text
    return arguments_json(arguments, check_syntax), None if data is None else _data_json(data)


def arguments_json(arguments: Arguments, check_syntax: bool) -> str:
    """Redacted JSON text of a call's arguments, bounded (see ``bounded``)."""
    if isinstance(arguments, str | bytes) and len(arguments) > MAX_STORED_CHARS:
        text = arguments if isinstance(arguments, str) else arguments.decode("utf-8", "replace")
        return bounded(text)  # not parsed nor scanned whole: only its head is kept
    return bounded(_redacted_arguments(arguments, check_syntax))


def _redacted_arguments(arguments: Arguments, check_syntax: bool) -> str:
    """Redacted JSON text of a call's arguments, parsing only when needed.

    JSON text with nothing secret-looking in it is stored as received (it parsed when
    the call validated it; ``check_syntax`` re-checks for failed calls). Invalid JSON
    is kept as ``{"_raw": "<first 10,000 characters>"}``.
    """
    if isinstance(arguments, bytes):
        arguments = arguments.decode("utf-8", errors="replace")
    if isinstance(arguments, str):
        text = arguments.strip() or "{}"
        secret = might_contain_secret(text)
        if not secret and not check_syntax:
            return text
        try:
            parsed: Any = json.loads(text)
        except (ValueError, RecursionError):
            return dumps(redact({"_raw": text[:10_000]}))
        if not secret:
            return text
    else:
        parsed = dict(arguments) if isinstance(arguments, Mapping) else arguments
        text = dumps(parsed)
        if not might_contain_secret(text):
            return text
    return dumps(redact(parsed))


def _data_json(data: Any) -> str:
    """JSON text of a result's data, redacted when something in it looks secret."""
    text = dumps(data)
    if len(text) > MAX_STORED_CHARS:
        return bounded(text)
    return dumps(redact(data)) if might_contain_secret(text) else text


def bounded(text: str) -> str:
    """``text``, or past ``MAX_STORED_CHARS`` a marker with its size, hash and (redacted) head."""
    if len(text) <= MAX_STORED_CHARS:
        return text
    raw = text.encode("utf-8", "surrogatepass")
    return dumps(
        {
            "_truncated": True,
            "size_bytes": len(raw),
            "sha256": hashlib.sha256(raw).hexdigest(),
            "head": redact_text(text[:2000]),
        }
    )


def utf8_safe(text: str) -> str:
    """``text`` with what UTF-8 cannot carry (lone surrogates) written as escapes."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text
