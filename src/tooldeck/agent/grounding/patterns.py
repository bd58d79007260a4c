"""The patterns the grounding validator reads an answer with: numbers, dates, words."""

from __future__ import annotations

import re
from collections.abc import Iterator

_DATE = re.compile(
    r"\b(\d{4}-\d{2}-\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"
)
_STAMP_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ](\d{2}:\d{2})")
"""The time of day of a timestamp in the data (what a stated time must be one of)."""
_TIME = re.compile(r"(?<![\d:.,])([01]?\d|2[0-3]):([0-5]\d)(?![\d:])")
"""A time of day in an answer ("at 9:30", "09:30")."""
_CITATION = re.compile(r"\[([A-Za-z][\w.-]*(?::[\w.@-]+)+)\]")
_QUOTE = re.compile(r"[“\"]([^”\"\n]{12,400})[”\"]")
_SOURCE_ID = re.compile(r"\b[A-Za-z][\w-]*(?::[\w.-]+)*:v\d+\b")
_NUMBER = re.compile(
    r"(?<![\w.,$€£])(?P<sign>[-+−])?(?P<cur>[$€£]|(?:USD|EUR|GBP|CAD|AUD|CHF|JPY) ?)?"
    r"(?P<int>\d{1,3}(?:,\d{3})+|\d+)"
    r"(?P<frac>\.\d+)?(?P<unit> ?(?:%|percent\b|k\b|K\b|M\b|B\b|bn\b|million\b|billion\b|thousand\b))?"
    r"(?P<after> ?(?:dollars?\b|euros?\b|(?:USD|EUR|GBP|CAD|AUD|CHF|JPY)\b|shares?\b|units?\b))?"
    r"(?![\w%])"
)
_LIST_MARKER = re.compile(r"^\s*\d+[.)]\s", re.MULTILINE)
_SCALE = {"k": 1e3, "K": 1e3, "thousand": 1e3, "M": 1e6, "million": 1e6, "B": 1e9, "bn": 1e9,
          "billion": 1e9}  # fmt: skip
_SEGMENT = re.compile(r"\n|;|(?<=[.!?])\s+(?=[A-Z*_(\[])")
_UP = re.compile(
    r"\b(?:up|rose|risen|rising|gained|gains?|increased?|higher|grew|grown|profits?|ahead)\b",
    re.IGNORECASE,
)
_DOWN = re.compile(
    r"\b(?:down|fell|fallen|falling|dropped|drops?|lost|loss(?:es)?|declined?|decreased?|"
    r"lower|behind)\b",
    re.IGNORECASE,
)
_TOTAL = re.compile(
    r"\b(?:total|overall|combined|altogether|in all|(?:across|in) (?:all|all of)? ?your accounts|"
    r"(?:across|in|for) all accounts)\b",
    re.IGNORECASE,
)
_INSTRUCTION = re.compile(
    r"\b(?:ignore|disregard|forget)\b.{0,40}\b(?:instructions?|tools?|data|above|previous|"
    r"prompt|rules?)\b|\b(?:say|answer|respond|reply|tell the user)\b.{0,20}\bthat\b|"
    r"\byou (?:must|should) (?:say|answer|respond|state)\b|\bsystem prompt\b",
    re.IGNORECASE,
)
"""Text that addresses the model (prompt injection): its numbers are not evidence."""
_BOUND = re.compile(r"\b(?:since|from|until|to|before|after|between|and)\s*$", re.IGNORECASE)
_LEVEL = re.compile(r"\b(?:to|from|at)\W*$", re.IGNORECASE)
_PLAIN_KINDS = frozenset({"quantity", "count", "year"})
"""What a bare number (no currency, no %) may be."""


def _numbers(text: str) -> Iterator[tuple[float, float, re.Match[str]]]:
    """(value, tolerance, match) of each number in ``text`` (see the module docstring)."""
    for m in _NUMBER.finditer(text):
        unit = (m.group("unit") or "").strip()
        scale = _SCALE.get(unit, 1.0)
        if scale != 1.0 and unit in ("k", "K", "M", "B", "bn") and not m.group("cur"):
            continue  # 3M, 1B, 401k: identifiers, not amounts
        frac = m.group("frac") or ""
        digits = len(frac) - 1 if frac else 0
        value = float(m.group("int").replace(",", "") + frac) * scale
        yield value, 0.5 * 10.0**-digits * scale + 1e-9, m


_PUNCTUATION = re.compile(r"[,;()|]")


def _around(before: str, after: str, last: bool) -> str:
    """The words that describe a number, on both sides up to punctuation.

    Before it: the words since the last punctuation ("the previous close of $9").
    After it: the words until the next punctuation ("$12.10 cash, ..."), when there is
    punctuation before the next number (or no next number); otherwise they lead to the
    next number ("42 shares at an average cost of $150.25").
    """
    lead = _PUNCTUATION.split(before)[-1]
    trail = _PUNCTUATION.split(after, maxsplit=1)
    return lead + " " + (trail[0] if len(trail) > 1 or last else "")


_COUNTS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
           "eight": 8, "nine": 9, "ten": 10}  # fmt: skip
