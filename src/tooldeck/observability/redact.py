"""Redaction of secret-looking values before arguments are written to the audit log."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["REDACTED", "might_contain_secret", "redact"]

REDACTED = "***"

_KEY = (
    r"pass(word|wd|phrase)?|secret|token|api[-_]?key|authorization|credential|private[-_]?key|"
    r"cookie|session[-_]?key|access[-_]?key"
)
_VALUE = (
    r"sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|xox[abpr]-[A-Za-z0-9-]{10,}|"
    r"AKIA[0-9A-Z]{16}|Bearer\s+\S{8,}|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\."
)
_SECRET_KEY = re.compile(_KEY, re.IGNORECASE)
_SECRET_VALUE = re.compile(rf"^({_VALUE})")
_ANYWHERE = re.compile(rf"{_KEY}|{_VALUE}", re.IGNORECASE)


def might_contain_secret(text: str) -> bool:
    """Whether ``text`` (e.g. serialised arguments) has a secret-looking key or value.

    A cheap pre-check: False means ``redact`` would change nothing, so the text can
    be stored as it is; True means parse and ``redact`` (false positives only cost time).
    """
    return _ANYWHERE.search(text) is not None


def redact(value: Any, _depth: int = 0) -> Any:
    """A copy of ``value`` with secret-looking entries replaced by ``***``.

    Semantics:
        A mapping entry whose key names a secret (password, token, api_key, ...) is
        redacted whatever its value; any string that looks like a credential (an
        ``sk-...`` key, a GitHub or Slack token, an AWS key id, a bearer token, a JWT)
        is redacted wherever it stands. Nesting deeper than 20 levels is cut.
    """
    if _depth > 20:
        return REDACTED
    if isinstance(value, dict):
        return {
            k: REDACTED if isinstance(k, str) and _SECRET_KEY.search(k) else redact(v, _depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(v, _depth + 1) for v in value]
    if isinstance(value, str) and _SECRET_VALUE.match(value):
        return REDACTED
    return value
