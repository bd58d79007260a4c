"""Whether an answer is of the kind its question asks for (``off_question``)."""

from __future__ import annotations

import re

from tooldeck.agent.grounding.evidence import _Evidence
from tooldeck.agent.grounding.findings import Finding
from tooldeck.agent.grounding.matching import _vocabulary
from tooldeck.agent.grounding.patterns import _COUNTS, _PERIODS, _numbers

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
_SHARE_OF = re.compile(
    r"\b(?:what|which) (?:share|percent(?:age)?|fraction|portion|part)\b|\bas a percent|"
    r"\bpercentage of\b|\bhow much of my (?:portfolio|holdings|money)\b",
    re.IGNORECASE,
)
_PERCENTAGE = re.compile(r"\d(?:[\d,]*)(?:\.\d+)?\s?(?:%|percent\b)", re.IGNORECASE)
_COMPARE = re.compile(
    r"\b(?:more|less|bigger|larger|smaller) than\b|\bcompare\b|\bvs\.?\b|\bversus\b|"
    r"\bdifference between\b",
    re.IGNORECASE,
)
_COST = re.compile(
    r"\b(?:cost|costs|price of|how much (?:is|are|would|will|for)|afford|buy(?:ing)?|"
    r"purchas(?:e|ing))\b",
    re.IGNORECASE,
)
_QUANTITY_BEFORE = re.compile(
    r"(?<![\d.,])(\d[\d,]*(?:\.\d+)?)\s+(?:more\s+)?(?:(?:shares?|units?)\s+(?:of\s+)?)?$",
    re.IGNORECASE,
)
""""25 shares of " (or "30 ") right before a symbol the question names."""
_PERIOD_RULES = tuple((code, re.compile(rule, re.IGNORECASE)) for code, rule in _PERIODS)
_SINCE_BOUGHT = re.compile(
    r"\b(?:losing money|lost money|making money|in the (?:green|red)|(?:made|make|earned|lost|"
    r"gained?) on\b|since (?:i|we) (?:bought|purchased|got)|since purchase|profit|unrealized|"
    r"(?:up|down) (?:or (?:up|down) )?(?:overall|since)|how much have i (?:made|lost|gained))",
    re.IGNORECASE,
)
"""A question about a holding since it was bought (its gain or loss, not a day's move)."""
_SINCE_SAID = re.compile(
    r"\b(?:since (?:you|i) (?:bought|purchased)|unrealized|cost|paid|bought at|basis|"
    r"overall|in total|all told|gain|loss|profit|p/l)\b",
    re.IGNORECASE,
)
"""Words of an answer that state the gain or loss since purchase."""
_ROW = re.compile(r"^\s*(?:\|(?!\s*-)(?![^|]*\|\s*-).*\||[-*]\s|\d+[.)]\s)", re.MULTILINE)


def _relevance(question: str, markdown: str, evidence: _Evidence, numbers: int) -> list[Finding]:
    """What the answer misses of the question's kind.

    A winner named first for "which ... most"; no more rows than "top 3"; a figure for
    "how much"; a percentage for "what share of my portfolio"; every account or symbol a
    comparison names; figures for the period asked ("this year"), or a plain word that the
    data has none, not figures for another period; N × the price for "what would N shares
    of X cost"; for a holding's gain since it was bought ("am I losing money on X?"), not
    only today's move.
    """
    if (
        markdown.rstrip().endswith("?")
        or markdown.startswith("I could not")
        or ("can't answer that from" in markdown)
    ):
        return []  # a clarifying question or the graceful answer: nothing to hold to
    found: list[Finding] = []
    names, pattern = _vocabulary(frozenset(evidence.labels.items()), frozenset(evidence.ids))
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
    day = dict(_PERIOD_RULES)["1d"]
    if (
        _SINCE_BOUGHT.search(question)
        and not any(rule.search(question) for _, rule in _PERIOD_RULES)
        and day.search(markdown)
        and not _SINCE_SAID.search(markdown)
    ):
        found.append(
            Finding(
                kind="off_question",
                text=first[:80],
                message="The question asks how the holding did since it was bought; the answer "
                "gives today's move: state the gain or loss against its cost.",
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
    if _SHARE_OF.search(question) and not _PERCENTAGE.search(markdown):
        found.append(
            Finding(
                kind="off_question",
                text=first[:80],
                message="The question asks what share of the whole it is; the answer states "
                "no percentage.",
            )
        )
    asked = {names[m.group().lower()] for m in pattern.finditer(question)} if pattern else set()
    if _COMPARE.search(question) and len(asked) >= 2:
        said = {names[m.group().lower()] for m in pattern.finditer(markdown)} if pattern else set()
        missing = sorted(ident for _, ident in asked - said)
        if missing:
            found.append(
                Finding(
                    kind="off_question",
                    text=first[:80],
                    message=f"The question compares {len(asked)} of them; the answer does not "
                    f"name {', '.join(missing)}.",
                )
            )
    found += _wrong_winner(markdown, names, pattern, evidence)
    found += _cost_of_shares(question, markdown, names, pattern, evidence)
    period = next((code for code, rule in _PERIOD_RULES if rule.search(question)), None)
    if period and numbers:
        spoken = {code for code, rule in _PERIOD_RULES if rule.search(markdown)}
        if spoken and period not in spoken:
            found.append(
                Finding(
                    kind="off_question",
                    text=first[:80],
                    message=f"The question asks about {period.upper()}; the answer's figures are "
                    f"for {', '.join(sorted(c.upper() for c in spoken))}. Say plainly when the "
                    "data has no figure for the period asked.",
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


def _cost_of_shares(
    question: str, markdown: str, names: dict[str, tuple[str, str]],
    pattern: re.Pattern[str] | None, evidence: _Evidence,
) -> list[Finding]:  # fmt: skip
    """The finding when "what would N shares of X cost" gets no figure equal to N × X's price.

    Held only when the question states N right before a symbol and the cited data has that
    symbol's ``price``; the answer's figure may be written to any precision ("about $10,800"
    to the hundred, as ``_numbers`` reads it).
    """
    if pattern is None or not _COST.search(question):
        return []
    for mention in pattern.finditer(question):
        subject = names[mention.group().lower()]
        quantity = _QUANTITY_BEFORE.search(question[: mention.start()])
        if subject[0] != "symbol" or quantity is None:
            continue
        prices = {f.value for f in evidence.facts if f.name == "price" and subject in f.subjects}
        if len(prices) != 1:
            return []  # no price, or several: nothing to hold the answer to
        price, n = prices.pop(), float(quantity.group(1).replace(",", ""))
        cost = n * price
        if any(
            abs(value - cost) <= tolerance + 0.005 for value, tolerance, _ in _numbers(markdown)
        ):
            return []
        return [
            Finding(
                kind="off_question",
                text=markdown.strip()[:80],
                message=f"The question asks the cost of {n:g} shares of {subject[1]}; the "
                f"answer states no figure equal to {n:g} × its price ${price:,.2f} = "
                f"${cost:,.2f}.",
            )
        ]
    return []


_MORE_THAN = re.compile(
    r"\b(?:is|are|has|holds?)\b[^.;\n]{0,30}?\b(?:worth more|more|bigger|larger|higher)\b"
    r"[^.;\n]{0,20}?\bthan\b",
    re.IGNORECASE,
)
_COMPARED = ("total_value", "value", "market_value", "balance", "total_cash")
"""The fields "A is worth more than B" is held to, in this order (the first both have)."""


def _wrong_winner(
    markdown: str, names: dict[str, tuple[str, str]], pattern: re.Pattern[str] | None,
    evidence: _Evidence,
) -> list[Finding]:  # fmt: skip
    """The finding when an answer says A is worth more than B and B's value is larger."""
    if pattern is None:
        return []
    for sentence in re.split(r"(?<=[.!?])\s+|\n", markdown):
        said = _MORE_THAN.search(sentence)
        if said is None:
            continue
        before = [names[m.group().lower()] for m in pattern.finditer(sentence[: said.start()])]
        after = [names[m.group().lower()] for m in pattern.finditer(sentence[said.end() :])]
        if not before or not after or before[-1][0] != after[0][0]:
            continue
        bigger, smaller = before[-1], after[0]
        for field in _COMPARED:
            values = {
                subject: f.value
                for f in evidence.facts
                if f.name == field and not f.total
                for subject in (bigger, smaller)
                if subject in f.subjects
            }
            if len(values) == 2:
                if values[bigger] < values[smaller]:
                    return [
                        Finding(
                            kind="off_question",
                            text=sentence[:80],
                            message=f"The answer says {bigger[1]} is more than {smaller[1]}, "
                            f"but its {field} is {values[bigger]:g} against {values[smaller]:g}.",
                        )
                    ]
                break
    return []
