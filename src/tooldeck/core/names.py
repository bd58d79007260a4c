"""Tool names: the format-safe alias, and "did you mean" suggestions."""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Iterable

__all__ = ["SAFE_NAME_PATTERN", "closest_names", "is_safe_tool_name", "safe_tool_name"]

SAFE_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""Names OpenAI function calling accepts; Anthropic and Gemini accept all of them too."""

_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]+")


def is_safe_tool_name(name: str) -> bool:
    """Whether ``name`` is accepted as-is by OpenAI, Anthropic and Gemini."""
    return SAFE_NAME_PATTERN.match(name) is not None


def safe_tool_name(name: str) -> str:
    """The stable alias under which ``name`` is exported to model formats.

    Semantics:
        A safe name is returned unchanged. Otherwise each run of other characters
        (dots, slashes, spaces) becomes ``_``; names longer than 64 characters keep
        55 and end with ``_`` and 8 hex digits of the name's SHA-1, so two long names
        do not collide. The result depends on ``name`` only, so it is the same in every
        process and the registry resolves calls under it.

    Example:
        >>> safe_tool_name("crm.search")
        'crm_search'
    """
    if is_safe_tool_name(name):
        return name
    alias = _UNSAFE.sub("_", name).strip("_") or "tool"
    if len(alias) > 64:
        digest = hashlib.sha1(name.encode()).hexdigest()[:8]
        alias = f"{alias[:55]}_{digest}"
    return alias


def closest_names(name: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """Up to ``n`` candidates closest to ``name`` (difflib ratio ≥ 0.5), best first."""
    return difflib.get_close_matches(name, list(candidates), n=n, cutoff=0.5)
