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
_NONE_SAID = re.compile(r"\b(?:no|none|nothing|not any|zero)\b", re.IGNORECASE)
"""An answer whose figure is nought ("No withdrawals from 2025-01-01 to 2025-12-31")."""
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
_ALL_ASKED = re.compile(
    r"\b(?:whole|entire|total) portfolio\b|\bacross (?:everything|all|both|my accounts)\b|"
    r"\ball (?:of )?my accounts\b|\bin total\b|\btotal\b|\bcombined?\b|\baltogether\b|"
    r"\beverything\b|\ball together\b",
    re.IGNORECASE,
)
"""A question asking for one figure over all accounts."""
_TOTAL_SAID = re.compile(
    r"\btotal|\ball (?:\w+ )?accounts\b|\baltogether\b|\bcombined\b|\bin all\b|\boverall\b|"
    r"\btogether\b|\bacross\b|\bsum\b|\bportfolio\b",
    re.IGNORECASE,
)
_OVER_TIME = re.compile(
    r"\b(?:did|do|doing|done) (?:the )?(?:best|worst|well|badly|better|worse)\b|"
    r"\bhow (?:did|has|have|is|are|was)\b[^?.]{0,40}\bdo(?:ing|ne)?\b|"
    r"\b(?:perform\w*|returns?|made|make|earn\w*|gain\w*|lost|lose|losing|grow|grew)\b",
    re.IGNORECASE,
)
"""A question about how something did over a period (not a balance at a day)."""
_ANY_PERIOD = re.compile(
    r"\b(?:day|today|yesterday|week|month|year|ytd|quarter|since|from|over|ever|all[- ]time|"
    r"january|february|march|april|may|june|july|august|september|october|november|december|"
    r"jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec|1D|1W|1M|3M|1Y|ALL|\d{4}-\d\d-\d\d|"
    r"\d{1,2}/\d{1,2})\b",
    re.IGNORECASE,
)
_AS_OF = re.compile(r"\bas of\s+\S+", re.IGNORECASE)
_SPAN_ASKED = re.compile(r"\b(?:last|past|over|in the last|previous)\s+(\d{1,3})\s+"
                         r"(days?|weeks?|months?|years?)\b", re.IGNORECASE)  # fmt: skip
_TIMEFRAME_SPANS = frozenset({(1, "day"), (7, "day"), (1, "week"), (30, "day"), (1, "month"),
                              (3, "month"), (12, "month"), (1, "year")})  # fmt: skip
"""The spans the data's timeframes are (1D, 1W, 1M, 3M, 1Y) as a question says them."""
_NO_SUCH = re.compile(r"\b(?:no|not|doesn't|does not|don't|isn't|only)\b", re.IGNORECASE)
_MEASURES = tuple(
    (what, re.compile(asked, re.IGNORECASE), re.compile(said, re.IGNORECASE))
    for what, asked, said in (
        ("what is unsettled", r"\bunsettled\b|\bnot (?:yet )?settled\b",
         r"\bunsettled\b|\bnot (?:yet )?settled\b|\bpending\b|\bsettling\b"),
        ("what was paid (the cost)", r"\bwhat did (?:i|we) pay\b|\bcost basis\b|\bpaid\b",
         r"\bcost|\bpaid\b|\bbasis\b|\bspent\b|\bat \$|\bfor \$"),
        ("dividends", r"\bdividends?\b", r"\bdividends?\b"),
        ("fees", r"\bfees?\b|\bcommissions?\b", r"\bfees?\b|\bcommissions?\b|\bexpense ratio"),
        ("a gain or loss",
         r"\bgain(?:s|ed)?\b|\bprofit\b|\bp/?l\b|\bearn\w*|\blos[st]\b|\blosing\b|\bup or down\b|"
         r"\bhow much\b[^?.]{0,30}\bma(?:de|ke)\b|\bma(?:de|ke)\b (?:on|from|me|any|money)\b",
         r"gain|profit|\bp/?l\b|\bmade\b|\bearn|\blos[st]\b|\blosing\b|\breturn|\bup\b|"
         r"\bdown\b|\bflat\b|(?<![\w.])[+\u2212-]\s?\$|(?<![\w.])[+\u2212-]\d|\bno (?:gain|loss)"),
    )
)  # fmt: skip
"""What a question asks to be measured, and the words an answer that states it uses."""
_CLASSES = re.compile(r"\b(stocks?|etfs?|bonds?|cash)\b", re.IGNORECASE)
_ALLOCATION = re.compile(
    r"\ballocation\b|\bby asset class\b|\b(?:stocks?|etfs?|bonds?) (?:vs\.?|versus|and) "
    r"(?:stocks?|etfs?|bonds?|cash)\b",
    re.IGNORECASE,
)
_ROW = re.compile(r"^\s*(?:\|(?!\s*-)(?![^|]*\|\s*-).*\||[-*]\s|\d+[.)]\s)", re.MULTILINE)


def _relevance(question: str, markdown: str, evidence: _Evidence, numbers: int) -> list[Finding]:
    """What the answer misses of the question's kind.

    ``numbers``: the figures the answer states (dates and times not counted). A winner
    named first for "which ... most"; no more rows than "top 3"; a figure for
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
    found += _frame(question, markdown, first, names, pattern, numbers, asked)
    if _HOW_MUCH.search(question) and numbers == 0 and not _NONE_SAID.search(first):
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


def _frame(
    question: str, markdown: str, first: str, names: dict[str, tuple[str, str]],
    pattern: re.Pattern[str] | None, numbers: int, asked: set[tuple[str, str]],
) -> list[Finding]:  # fmt: skip
    """What the question's frame asks that the answer does not state (issue 54, item 2).

    ``asked``: the subjects the question names (the answer's are read only when needed).

    - **subject**: the question names a symbol (or an account) and the answer names
      others of that kind, but none of those (it answers about something else);
    - **aggregation**: "in total", "across everything", "my whole portfolio" and the
      answer gives two or more accounts' figures with no total;
    - **period**: the question asks how something did over a period ("this month") and
      the answer's figures name no period at all (a balance for a performance);
    - **span**: the question asks about a span of time no timeframe is ("the last 6
      months") and the answer states figures without saying the data has none;
    - **measure**: the question asks for what is unsettled, what was paid, dividends,
      fees, a gain or loss, or an allocation over asset classes, and the answer never
      says it.

    Checked only where the answer states a figure (``numbers``), except the measure,
    which an answer without figures misses too ("No MSFT buys" for "my gain on MSFT").
    """
    found: list[Finding] = []

    def off(message: str) -> None:
        found.append(Finding(kind="off_question", text=first[:80], message=message))

    whole = numbers and _ALL_ASKED.search(question)
    said = (
        {names[m.group().lower()] for m in pattern.finditer(markdown)}
        if pattern and (asked or whole) else set()
    )  # fmt: skip
    for kind in ("symbol", "account"):
        wanted, other = ({s for s in group if s[0] == kind} for group in (asked, said))
        if wanted and other and not wanted & other:  # a terse "$146.75" names nothing
            named = ", ".join(sorted(ident for _, ident in wanted))
            instead = ", ".join(sorted(ident for _, ident in other))
            off(f"The question asks about {named}; the answer is about {instead}.")
    accounts = {s for s in said if s[0] == "account"}
    if whole and len(accounts) >= 2 and not _TOTAL_SAID.search(markdown):
        off("The question asks for one figure over all accounts; the answer gives each "
            "account's without their total.")  # fmt: skip
    period = next((code for code, rule in _PERIOD_RULES if rule.search(question)), None)
    undated = _AS_OF.sub(" ", markdown)  # "Data as of 2026-11-20" dates the data, not a period
    if numbers and period and _OVER_TIME.search(question) and not _ANY_PERIOD.search(undated):
        off(
            f"The question asks how it did over {period.upper()}; the answer's figures are "
            "for no period. Say plainly when the data has no figure for the period asked."
        )
    span = _SPAN_ASKED.search(question)
    if numbers and span and not _NO_SUCH.search(markdown):
        size, unit = int(span.group(1)), span.group(2).lower().rstrip("s")
        if (size, unit) not in _TIMEFRAME_SPANS:  # "the last 6 months": no such timeframe
            off(f"The question asks about {size} {unit}s; the data has figures for 1 day, 1 "
                "week, 1 month, 3 months, the year to date, 1 year and all time only: say "
                "that it has none for the period asked.")  # fmt: skip
    for what, asks, says in _MEASURES:
        if asks.search(question) and not says.search(markdown):
            off(f"The question asks for {what}; the answer does not state it.")
    if _ALLOCATION.search(question) and len({m.lower().rstrip("s") for m in
                                             _CLASSES.findall(markdown)}) < 2:  # fmt: skip
        off(
            "The question asks how the money is split over asset classes; the answer does "
            "not give the classes' figures."
        )
    return found
