"""Whether an answer is of the kind its question asks for (``off_question``)."""

from __future__ import annotations

import re

from tooldeck.agent.grounding.evidence import _Evidence
from tooldeck.agent.grounding.findings import Finding
from tooldeck.agent.grounding.matching import _vocabulary
from tooldeck.agent.grounding.patterns import _COUNTS

_WHICH_ONE = re.compile(
    r"\bwhich\b[^?]*\b(?:most|least|best|worst|biggest|largest|smallest|highest|lowest)\b|"
    r"\b(?:my|the) (?:biggest|largest|smallest|best|worst|top) (?:position|holding|stock|etf|"
    r"account|performer|winner|loser)\b",
    re.IGNORECASE,
)
_TOP = re.compile(
    r"\b(?:top|bottom|first|last)\s+(\d+|" + "|".join(_COUNTS) + r")\b"
    r"(?!\s+(?:days?|weeks?|months?|years?)\b)|"
    r"\b(\d+|" + "|".join(_COUNTS) + r")\s+(?:biggest|largest|smallest|best|worst)\b",
    re.IGNORECASE,
)
_HOW_MUCH = re.compile(
    r"\bhow (?:much|many)\b|\bworth\b|\bprice\b|\btrading at\b|\bbalance\b", re.IGNORECASE
)
_ROW = re.compile(r"^\s*(?:\|(?!\s*-)(?![^|]*\|\s*-).*\||[-*]\s|\d+[.)]\s)", re.MULTILINE)


def _relevance(question: str, markdown: str, evidence: _Evidence, numbers: int) -> list[Finding]:
    """What the answer misses of the question's kind (a winner, N rows, a figure)."""
    if (
        markdown.rstrip().endswith("?")
        or markdown.startswith("I could not")
        or ("can't answer that from" in markdown)
    ):
        return []  # a clarifying question or the graceful answer: nothing to hold to
    found: list[Finding] = []
    _, pattern = _vocabulary(frozenset(evidence.labels.items()), frozenset(evidence.ids))
    first = re.split(r"(?<=[.!?:])\s|\n", markdown.strip(), maxsplit=1)[0]
    if _WHICH_ONE.search(question) and not (pattern and pattern.search(first)):
        found.append(
            Finding(
                kind="off_question",
                text=first[:80],
                message="The question asks which one; name the winner in the first sentence "
                "(an account or a symbol of the data).",
            )
        )
    top = _TOP.search(question)
    if top:
        word = (top.group(1) or top.group(2)).lower()
        wanted = int(word) if word.isdigit() else _COUNTS[word]
        rows = [
            line
            for line in _ROW.findall(markdown)
            if not re.match(r"^\s*\|[^|]*(?:symbol|account|date)\b", line, re.IGNORECASE)
        ]
        if len(rows) > wanted:
            found.append(
                Finding(
                    kind="off_question",
                    text=f"{len(rows)} rows",
                    message=f"The question asks for {wanted}; the answer lists {len(rows)}.",
                )
            )
    if _HOW_MUCH.search(question) and numbers == 0:
        found.append(
            Finding(
                kind="off_question",
                text=first[:80],
                message="The question asks how much; the answer states no figure.",
            )
        )
    return found
