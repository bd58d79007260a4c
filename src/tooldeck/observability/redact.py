"""Redaction of secrets wherever text is persisted or exported (audit log, spans, runs).

One function, ``redact``, for every place: a value under a key that names a secret is
replaced whole; a credential inside any string is replaced where it stands, so
``"curl -H 'Authorization: Bearer abc…'"`` keeps its shape and loses its token.

The credential patterns are ours (OpenAI ``sk-``, bearer and basic auth, ``key=value``
and ``--password …`` in free text) plus the denylists of detect-secrets' regex
plugins (AWS, GitHub, GitLab, Slack, Stripe, JWT, private keys, npm, PyPI, SendGrid,
Twilio, Azure, Discord, Telegram, Mailchimp, Square, Artifactory …), a pattern set
its maintainers keep current. Without detect-secrets installed, ours alone apply.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import re
from typing import Any

__all__ = ["REDACTED", "might_contain_secret", "redact", "redact_text"]

REDACTED = "***"

_KEY = (
    r"pass(word|wd|phrase)?|pwd|secret|token|api[-_]?key|auth(orization)?|credential|"
    r"private[-_]?key|cookie|session[-_]?(key|id)|access[-_]?key|client[-_]?secret|"
    r"signature|dsn"
)
_SECRET_KEY = re.compile(
    # the name as a word of the key: db_password, apiKey, X-Auth-Token; not author
    rf"(?:^|[-_.\s]|(?<=[a-z])(?=[A-Z]))(?i:{_KEY})(?:[-_.\s]|$|(?=[A-Z]))"
)
_ANY_KEY = re.compile(_KEY, re.IGNORECASE)  # the pre-check's: anywhere, even in "author"
_NAMED = (
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)",
    # a secret named in free text: password=…, api_key: …, --password …
    rf"(?<![A-Za-z0-9])(?i:{_KEY})\s*[=:]\s*(?i:(?:bearer|basic|token)\s+)?['\"]?[^\s'\",;&]{{3,}}",
    r"(?i:--(?:password|passwd|token|api-key|secret)[= ]\S+)",
    # said in a sentence: "my password is hunter2" (a value with a digit or a symbol,
    # or 12 characters: "the token is expired" stays)
    rf"(?<![A-Za-z0-9])(?i:{_KEY})\s+(?i:is|was)\s+['\"]?"
    r"(?:(?=[^\s'\",;&]*[0-9!#$%*+/=?@^_~-])[^\s'\",;&]{3,}|[^\s'\",;&]{12,})",
    r"(?i:\bsk-[a-z0-9_-]{16,})",
    r"\bgh[pousr]_[A-Za-z0-9]{20,}",
    r"\bxox[abpr]-[A-Za-z0-9-]{10,}",
    r"\bAKIA[0-9A-Z]{16}\b",
    r"\b(?:Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{8,}",
    r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*",
    r"://[^/\s:@]+:[^/\s@]+@",  # credentials in a URL
)


@functools.cache
def _patterns() -> tuple[str, ...]:
    """Our patterns and detect-secrets' denylists (without it installed: ours)."""
    patterns = list(_NAMED)
    with contextlib.suppress(ImportError):
        patterns += _detect_secrets_patterns()
    return tuple(patterns)


@functools.cache
def _credentials() -> re.Pattern[str]:
    """Every credential pattern as one alternation."""
    return re.compile("|".join(f"(?:{p})" for p in _patterns()))


_RUN = re.compile(r"[A-Za-z0-9_+/=-]{16}")
_ARTIFACTORY = re.compile(r"AP[\dA-F]")
"""Without the pattern's ``\\b``: a gate may pass more than it must, and a leading
``\\b`` stops ``re`` from searching for the literal ``AP`` first (700 → 110 ns over a
51-character text holding ``AAPL``)."""
_SCHEME = re.compile(r"\b(?:Bearer|Basic|Token)\s")
_KEY_STEMS = re.compile(
    "pass|pwd|secret|token|api|auth|credential|private|cookie|session|access|client|signature|dsn"
)
"""Every branch of ``_ANY_KEY`` starts with one of these; searched in the lower-cased
text (420 ns over 51 characters, against 550 for a loop of ``in`` tests and 3.9 µs for
``_ANY_KEY`` itself, which is case-insensitive)."""


def _gate(text: str, lower: str) -> bool:
    """What every credential pattern needs, whichever matches.

    A run of 16 token characters, or one of the literals of the short tokens
    (``xoxb-1-2``, ``AKC…``, ``AP…``, a bearer token of 8, a JWT, a URL's credentials, a
    private key). Patterns that need a secret's key name (``password=…``) are caught
    by ``_ANY_KEY`` first. Checked against the pattern set it was written for
    (``_GATED``): another set (a new detect-secrets) is not gated.
    """
    return (
        _RUN.search(text) is not None
        or "://" in text
        or "BEGIN" in text
        or "PuTTY" in text
        or "eyJ" in text
        or "AKC" in text
        or "xox" in lower
        or ("AP" in text and _ARTIFACTORY.search(text) is not None)
        or (
            ("Bearer" in text or "Basic" in text or "Token" in text)
            and _SCHEME.search(text) is not None
        )
    )


_GATED = "9a81503d621f0f9bbce1a7c21ac0360a38face967c4fafaa2570658bb36933a6"
"""SHA-256 of the sorted patterns ``_gate`` was checked against (detect-secrets 1.5.0)."""
_GATED_VERSION = "1.5.0"
"""The detect-secrets release whose patterns hash to ``_GATED``."""


@functools.cache
def _gate_applies() -> bool:
    """Whether the installed pattern set is the one ``_gate`` was checked against.

    Told by detect-secrets' version first: importing its plugins to hash their
    patterns costs ~0.1 s, which a one-call process (``tooldeck call``) would pay for
    its first record even when nothing in it looks like a secret.
    """
    from importlib.metadata import PackageNotFoundError, version

    try:
        if version("detect-secrets") == _GATED_VERSION:
            return True
    except PackageNotFoundError:
        return True  # ours alone, which the gate covers
    digest = hashlib.sha256("\n".join(sorted(set(_patterns()))).encode()).hexdigest()
    return digest == _GATED or set(_patterns()) == set(_NAMED)


def _detect_secrets_patterns() -> list[str]:
    import importlib
    import pkgutil

    import detect_secrets.plugins as plugins
    from detect_secrets.plugins.base import RegexBasedDetector

    found: list[str] = []
    for module in pkgutil.iter_modules(plugins.__path__):
        if module.name in ("ip_public", "keyword", "high_entropy_strings"):
            continue  # addresses are not secrets; keywords and entropy are too noisy
        loaded = importlib.import_module(f"{plugins.__name__}.{module.name}")
        for item in vars(loaded).values():
            if (
                isinstance(item, type)
                and issubclass(item, RegexBasedDetector)
                and item is not RegexBasedDetector
            ):
                found += [_inline_flags(p) for p in item.denylist]  # type: ignore[attr-defined]
    return found


def _inline_flags(pattern: re.Pattern[str]) -> str:
    """``pattern``'s text, its case-insensitivity carried inline, groups uncaptured."""
    text = re.sub(r"\((?!\?)", "(?:", pattern.pattern)
    text = re.sub(r"\(\?P<\w+>", "(?:", text)
    return f"(?i:{text})" if pattern.flags & re.IGNORECASE else text


def might_contain_secret(text: str) -> bool:
    """Whether ``text`` (e.g. serialised arguments) has a secret-looking key or value.

    A cheap pre-check: False means ``redact`` would change nothing, so the text can
    be stored as it is; True means parse and ``redact`` (false positives only cost time).
    Text with no key name, no run of 16 token characters and none of ``_gate``'s
    literals is answered without the full pattern set (about 1.2 µs for a 51-character
    JSON text instead of 14-65 µs: ``benchmarks/overhead.py``).
    """
    lower = text.lower()
    if _KEY_STEMS.search(lower) is not None and _ANY_KEY.search(text) is not None:
        return True
    if _gate_applies() and not _gate(text, lower):
        return False
    return _credentials().search(text) is not None


def redact_text(text: str) -> str:
    """``text`` with each credential in it replaced by ``***``, the rest kept."""
    return _credentials().sub(REDACTED, text)


def redact(value: Any, _depth: int = 0) -> Any:
    """A copy of ``value`` with secrets replaced by ``***``.

    Semantics:
        A mapping entry whose key names a secret (password, pwd, token, api_key, auth,
        cookie, client_secret …, in any case and as part of a longer key such as
        ``db_password``) is redacted whatever its value, unless it has none (None or
        ``""`` are kept: "no key set" is not a secret); a credential inside any string
        (an ``sk-…`` key, a GitHub or Slack token, an AWS key, a bearer token, a JWT, a
        private key, ``password=…`` in a command line) is replaced where it stands.
        Nesting deeper than 20 levels is cut.
    """
    if _depth > 20:
        return REDACTED
    if isinstance(value, dict):
        return {
            k: REDACTED
            if isinstance(k, str) and _SECRET_KEY.search(k) and v not in (None, "")
            else redact(v, _depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(v, _depth + 1) for v in value]
    if isinstance(value, str):
        return redact_text(value)
    return value
