"""The grounding validator: is every citation and every number of an answer backed by data?

Seed 004's responder checks that an answer's citations are the ``source_id`` of a tool
result of this run. This goes further: every number in the answer must be found in the
data of a cited result (or be a ``Figure`` derived from cited results), after rounding
to the precision the answer states it with.

Example::

    report = check_grounding("AAPL is at $228.42 [tool:quotes:v1]", ["tool:quotes:v1"], results)
    report.ok  # True when nothing was found wrong

What counts as a number: ``1,234.50``, ``$1,234.50``, ``-$12``, ``6.2%``, ``$1.2k``,
``$3.4M``, ``2 million``. Not numbers: identifiers with digits (``1Y``, ``3M`` without a
currency sign, ``401k``, ``v1``), citations, and ISO dates, which are checked as dates
(the date must appear in a cited result). A number matches a value of the data when
``|stated − value| ≤ half a unit of the stated precision`` (``6.2%`` matches 6.18 and
6.24; ``$9,594`` matches 9593.64), signs ignored ("down 0.56%" states −0.56). A bare
integer also matches the length of a list in the data ("you hold 7 positions"), and a
four-digit year the year of a cited date.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

from tooldeck.core.intents import Figure
from tooldeck.core.result import ToolResult

__all__ = ["Finding", "Grounding", "GroundingReport", "check_grounding", "find_citations"]

_DATE = re.compile(
    r"\b(\d{4}-\d{2}-\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"
)
_CITATION = re.compile(r"\[([A-Za-z][\w.-]*(?::[\w.-]+)+)\]")
_SOURCE_ID = re.compile(r"\b[A-Za-z][\w-]*(?::[\w.-]+)*:v\d+\b")
_NUMBER = re.compile(
    r"(?<![\w.,$€£])(?P<sign>[-+−])?(?P<cur>[$€£]|USD ?)?(?P<int>\d{1,3}(?:,\d{3})+|\d+)"
    r"(?P<frac>\.\d+)?(?P<unit> ?(?:%|percent\b|k\b|K\b|M\b|B\b|bn\b|million\b|billion\b|thousand\b))?"
    r"(?![\w%])"
)
_LIST_MARKER = re.compile(r"^\s*\d+[.)]\s", re.MULTILINE)
_SCALE = {"k": 1e3, "K": 1e3, "thousand": 1e3, "M": 1e6, "million": 1e6, "B": 1e9, "bn": 1e9,
          "billion": 1e9}  # fmt: skip


class Finding(BaseModel):
    """One thing the validator could not back with data."""

    kind: Literal["unknown_citation", "untraced_number", "untraced_date"]
    """``unknown_citation``: cites a source no tool result of the run has;
    ``untraced_number`` / ``untraced_date``: in none of the cited results."""
    text: str
    """The citation, number or date as the answer wrote it."""
    message: str
    """What is wrong, in words a model can act on."""


class Grounding(BaseModel):
    """The validator's verdict on an answer, as returned in the response and the trace."""

    verdict: Literal["grounded", "repaired", "ungrounded"]
    """``grounded``: passed as written; ``repaired``: passed after one repair (a model
    re-asked with the findings); ``ungrounded``: failed, so the answer was replaced by
    the graceful "could not verify" answer."""
    findings: list[Finding] = Field(default_factory=list)
    """What failed (of the last attempt when ``repaired``; of the replaced answer when
    ``ungrounded``)."""
    numbers_checked: int = 0
    """Numbers and dates checked in the final answer."""
    citations_checked: int = 0
    """Citations checked in the final answer."""


@dataclass(frozen=True, slots=True)
class GroundingReport:
    """The validator's findings for one answer."""

    findings: list[Finding] = field(default_factory=list)
    numbers_checked: int = 0
    citations_checked: int = 0

    @property
    def ok(self) -> bool:
        """True when nothing was found wrong."""
        return not self.findings

    def verdict(self, verdict: Literal["grounded", "repaired", "ungrounded"]) -> Grounding:
        """This report as a ``Grounding`` with ``verdict``."""
        return Grounding(
            verdict=verdict,
            findings=self.findings,
            numbers_checked=self.numbers_checked,
            citations_checked=self.citations_checked,
        )


def find_citations(text: str) -> list[str]:
    """Source ids cited in ``text`` as ``[tool:positions:v1]``, in order, without repeats."""
    return list(dict.fromkeys(_CITATION.findall(text)))


class _Evidence:
    """The numbers, list lengths, dates and years of the cited results' data."""

    def __init__(self, results: Iterable[ToolResult], figures: Iterable[Figure], cited: set[str]):
        values: list[float] = []
        counts: set[int] = set()
        self.dates: set[str] = set()
        for result in results:
            if not result.success or result.source_id not in cited:
                continue
            if result.as_of:
                self.dates.update(m.group(1) for m in _DATE.finditer(result.as_of))
            for item in _walk(result.data):
                if isinstance(item, list):
                    counts.add(len(item))
                elif isinstance(item, str):
                    self.dates.update(m.group(1) for m in _DATE.finditer(item))
                    values.extend(v for v, _, _ in _numbers(_DATE.sub(" ", item)))
                else:
                    values.append(float(item))
        values.extend(f.value for f in figures if set(f.source_ids) <= cited)
        self.values = sorted({abs(v) for v in values})
        self.counts = counts
        self.years = {int(d[:4]) for d in self.dates}

    def has(self, value: float, tolerance: float, *, percent: bool) -> bool:
        candidates = [abs(value)]
        if percent:
            candidates.append(abs(value) / 100)  # 6.2% stated, 0.062 in the data
        for wanted in candidates:
            i = bisect.bisect_left(self.values, wanted - tolerance)
            if i < len(self.values) and self.values[i] <= wanted + tolerance:
                return True
        return False


def _walk(value: Any) -> Iterator[Any]:
    """Every number, string and list inside ``value`` (JSON-like), depth first."""
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int | float | str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _walk(item)
    elif isinstance(value, list | tuple):
        yield list(value)
        for item in value:
            yield from _walk(item)


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


def check_grounding(
    markdown: str,
    citations: Sequence[str],
    results: Sequence[ToolResult],
    figures: Iterable[Figure] = (),
) -> GroundingReport:
    """Check ``markdown`` and ``citations`` against the run's ``results``.

    Args:
        markdown: The answer's text.
        citations: The source ids the answer cites (the contract's ``citations``).
        results: Every tool result of the run, successful or not.
        figures: Numbers derived from the results (``IntentPack.figures``).

    Returns:
        The findings: citations that are no successful result's source_id, numbers and
        dates in none of the cited results. Never raises.
    """
    known = {r.source_id for r in results if r.success and r.source_id}
    cited = list(dict.fromkeys(citations))
    findings = [
        Finding(
            kind="unknown_citation",
            text=c,
            message=f"{c} is not the source_id of any tool result of this run; "
            f"the sources are: {', '.join(sorted(known)) or 'none'}.",
        )
        for c in cited
        if c not in known
    ]
    evidence = _Evidence(results, figures, set(cited) & known)
    sources = ", ".join(c for c in cited if c in known) or "no valid source"
    text = _CITATION.sub(" ", markdown)
    text = _SOURCE_ID.sub(" ", text)
    checked = 0
    for m in _DATE.finditer(text):
        checked += 1
        if m.group(1) not in evidence.dates:
            findings.append(
                Finding(
                    kind="untraced_date",
                    text=m.group(0),
                    message=f"The date {m.group(0)} is in none of the cited results ({sources}).",
                )
            )
    text = _LIST_MARKER.sub(" ", _DATE.sub(" ", text))
    for value, tolerance, m in _numbers(text):
        checked += 1
        percent = (m.group("unit") or "").strip() in ("%", "percent")
        bare = not (m.group("cur") or m.group("unit") or m.group("frac"))
        if evidence.has(value, tolerance, percent=percent):
            continue
        if bare and (int(value) in evidence.counts or int(value) in evidence.years):
            continue
        findings.append(
            Finding(
                kind="untraced_number",
                text=m.group(0).strip(),
                message=f"The number {m.group(0).strip()} is in none of the cited results "
                f"({sources}), nor derived from them.",
            )
        )
    return GroundingReport(findings, checked, len(cited))
