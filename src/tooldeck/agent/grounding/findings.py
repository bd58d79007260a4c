"""What the grounding validator reports: findings, the verdict, the report."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from tooldeck.agent.grounding.patterns import _CITATION

_Subjects = tuple[tuple[str, str], ...]
"""(type, id) pairs, e.g. (("account", "individual"), ("symbol", "AAPL"))."""


class Finding(BaseModel):
    """One thing the validator could not back with data."""

    kind: Literal[
        "unknown_citation",
        "untraced_number",
        "untraced_date",
        "untraced_quote",
        "off_question",
        "claim_mismatch",
        "unbound_figure",
        "unverifiable_number",
        "ambiguous_figure",
        "example_data",
        "no_answer",
    ]
    """``unknown_citation``: cites a source no tool result of the run has;
    ``untraced_number``: no cited value agrees with the number (value, kind, subject,
    total, sign); ``untraced_date``: in none of the cited results; ``untraced_quote``: a
    quotation (four words or more in quotation marks) in none of them; ``off_question``: the
    answer is not of the kind the question asks for (no winner named for "which account
    has the most", more rows than "top 3", no figure for "how much"); ``claim_mismatch``:
    a bound figure (``core.claims``) is not what the field it is bound to holds, or its
    source is not cited; ``unbound_figure``: a number in an answer whose writer binds
    every figure, with no claim for it; ``unverifiable_number``: a number equal only to
    fields of no known kind (no ``x-kind``, none inferable from the name), which any
    number could be said to match: it must be bound with a claim; ``ambiguous_figure``: a
    number two or more records back whose sentence does not say which (two symbols, or
    one symbol in two accounts), the candidates named; ``example_data``: figures of example
    data (a result with ``example_data: true``) stated without saying so; ``no_answer``:
    the answer states nothing (empty, or the question said back)."""
    text: str
    """The citation, number or date as the answer wrote it."""
    message: str
    """What is wrong (what it was compared with, why it failed), in words a model can
    act on."""


Verdict = Literal["grounded", "quoted", "repaired", "ungrounded"]
QUOTATION_WORDS = 8
"""A quotation this long or longer is a passage the answer rests on (a document's title
or a section's name is shorter)."""


class Grounding(BaseModel):
    """The validator's verdict on an answer, as returned in the response and the trace."""

    verdict: Verdict
    """``grounded``: passed as written; ``quoted``: passed as written, and it rests on
    quotations of documents (``GroundingReport.quotations``): each stands verbatim in the
    block it cites, but whether the passage answers the question is not verified (words
    are not meaning: on questions written by others, half the passages that answer miss
    most of the question's words, and passages that do not answer share them; issue 54);
    ``repaired``: passed after one repair (a model re-asked with the findings);
    ``ungrounded``: failed, so the answer was replaced by the graceful "could not verify"
    answer."""
    findings: list[Finding] = Field(default_factory=list)
    """What failed (of the last attempt when ``repaired``; of the replaced answer when
    ``ungrounded``)."""
    numbers_checked: int = 0
    """Figures checked in the final answer: its claims, and the numbers and dates no claim
    covers."""
    citations_checked: int = 0
    """Citations checked in the final answer."""


@dataclass(frozen=True, slots=True)
class GroundingReport:
    """The validator's findings for one answer."""

    findings: list[Finding] = field(default_factory=list)
    numbers_checked: int = 0
    citations_checked: int = 0
    quotations: int = 0
    """Traced quotations of ``QUOTATION_WORDS`` words or more (a passage, not a title)."""

    @property
    def ok(self) -> bool:
        """True when nothing was found wrong."""
        return not self.findings

    def verdict(self, verdict: Verdict) -> Grounding:
        """This report as a ``Grounding`` with ``verdict``.

        ``grounded`` becomes ``quoted`` when the answer rests on quotations.
        """
        return Grounding(
            verdict="quoted" if verdict == "grounded" and self.quotations else verdict,
            findings=self.findings,
            numbers_checked=self.numbers_checked,
            citations_checked=self.citations_checked,
        )


def find_citations(text: str) -> list[str]:
    """Source ids cited in ``text`` as ``[tool:positions:v1]``, in order, without repeats."""
    return list(dict.fromkeys(_CITATION.findall(text)))
