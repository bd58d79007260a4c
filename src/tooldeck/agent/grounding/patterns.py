"""The patterns the grounding validator reads an answer with: numbers, dates, words."""

from __future__ import annotations

import re
from collections.abc import Iterator

_DATE = re.compile(
    r"\b(\d{4}-\d{2}-\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"
)
_STAMP_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ](\d{2}:\d{2})")
"""The time of day of a timestamp in the data (what a stated time must be one of)."""
_TIME = re.compile(
    r"(?<![\d:.,])([01]?\d|2[0-3]):([0-5]\d)(?![\d:])"
    r"(?:\s?(?P<ampm>[ap]\.?m\.?)(?![a-z]))?"
    r"(?:\s?(?P<zone>UTC|GMT|Z|ET|EST|EDT|CT|CST|CDT|MT|MST|MDT|PT|PST|PDT|CET|CEST|BST)\b)?",
    re.IGNORECASE,
)
"""A time of day in an answer ("at 9:30", "09:30", "2:30 PM ET")."""
_ZONES = {"UTC": (0,), "GMT": (0,), "Z": (0,), "ET": (-5, -4), "EST": (-5,), "EDT": (-4,),
          "CT": (-6, -5), "CST": (-6,), "CDT": (-5,), "MT": (-7, -6), "MST": (-7,),
          "MDT": (-6,), "PT": (-8, -7), "PST": (-8,), "PDT": (-7,), "CET": (1,),
          "CEST": (2,), "BST": (1,)}  # fmt: skip
"""Hours from UTC of the zones a time may be written in (both, where DST is ambiguous)."""


def _utc_times(match: re.Match[str]) -> set[str]:
    """The ``HH:MM`` (UTC) a written time may mean: 12-hour clock and zone applied."""
    hour, minute = int(match.group(1)), int(match.group(2))
    ampm = (match.group("ampm") or "").lower().replace(".", "")
    if ampm == "pm" and hour < 12:
        hour += 12
    elif ampm == "am" and hour == 12:
        hour = 0
    zone = (match.group("zone") or "").upper()
    offsets = _ZONES.get(zone, (0,))
    return {f"{(hour - off) % 24:02d}:{minute:02d}" for off in offsets}


_MONTHS = {m: i for i, names in enumerate(
    [("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"), ("may",),
     ("jun", "june"), ("jul", "july"), ("aug", "august"), ("sep", "sept", "september"),
     ("oct", "october"), ("nov", "november"), ("dec", "december")], start=1)
    for m in names}  # fmt: skip
_MONTH_NAMES = "|".join(sorted(_MONTHS, key=len, reverse=True))
_WRITTEN_DATE = re.compile(
    r"\b(?:(?P<m>\d{1,2})/(?P<d>\d{1,2})/(?P<y>\d{4})|"
    r"(?P<month>" + _MONTH_NAMES + r")\.? (?P<day>\d{1,2})(?:st|nd|rd|th)?(?:,? (?P<year>\d{4}))?|"
    r"(?P<alone>" + _MONTH_NAMES + r")\.?,? (?P<of>\d{4}))\b",
    re.IGNORECASE,
)
"""A date written the US way or with the month's name: 11/19/2026, November 19, 2026,
December 2026 (a month: some day of it must be in the data)."""


def _written_days(match: re.Match[str], years: set[int]) -> set[str]:
    """The ISO days a written date may be (each year of the data, when none is written).

    A month alone gives ``YYYY-MM-``: any day of it.
    """
    if match.group("alone"):
        return {f"{int(match.group('of')):04d}-{_MONTHS[match.group('alone').lower()]:02d}-"}
    if match.group("m"):
        month, day, found = int(match.group("m")), int(match.group("d")), [int(match.group("y"))]
    else:
        month, day = _MONTHS[match.group("month").lower()], int(match.group("day"))
        found = [int(match.group("year"))] if match.group("year") else sorted(years)
    return {f"{y:04d}-{month:02d}-{day:02d}" for y in found}


_CITATION = re.compile(
    r"\[(?:source_id:\s*)?([A-Za-z][\w.-]*(?::[\w.@-]+)+)(?:\s*\|[^\]\n]{0,80})?\]"
)
"""A citation: ``[tool:quotes:v1]``, or as a result prints its source
(``[source_id: tool:quotes:v1 | as_of: 2026-11-20]``), which models copy."""
_QUOTE = re.compile(r"“([^”\n]{12,400})”|\"([^\"“”\n]{12,400})\"")
"""A quotation: typographic quotes (straight ones inside are the text's own, as in code
``scope="module"``), or straight quotes around text without typographic ones (so a
straight quote in a heading before a typographic quotation does not open it)."""
_SOURCE_ID = re.compile(r"\b[A-Za-z][\w-]*(?::[\w.-]+)*:v\d+\b")
_NUMBER = re.compile(
    r"(?<![\w.,$€£¥])(?P<sign>[-+−])?(?P<cur>(?:US|CA|C|AU|A|NZ|HK|S)?[$€£¥]|(?:USD|EUR|GBP|CAD|AUD|CHF|JPY) ?)?"
    r"(?P<int>\d{1,3}(?:,\d{3})+|\d+)"
    r"(?P<frac>\.\d+)?(?P<unit> ?(?:%|percent\b|bps\b|basis points?\b|k\b|K\b|M\b|B\b|bn\b|"
    r"million\b|billion\b|thousand\b))?"
    r"(?P<after> ?(?:dollars?\b|euros?\b|(?:USD|EUR|GBP|CAD|AUD|CHF|JPY)\b|shares?\b|units?\b))?"
    r"(?![\w%])"
)
_LIST_MARKER = re.compile(r"^\s*\d+[.)]\s", re.MULTILINE)
_SCALE = {"k": 1e3, "K": 1e3, "thousand": 1e3, "M": 1e6, "million": 1e6, "B": 1e9, "bn": 1e9,
          "billion": 1e9, "bps": 0.01, "basis point": 0.01, "basis points": 0.01}  # fmt: skip
_CURRENCIES = {"$": "$", "us$": "USD", "ca$": "CAD", "c$": "CAD", "au$": "AUD", "a$": "AUD",
               "nz$": "NZD", "hk$": "HKD", "s$": "SGD", "€": "EUR", "£": "GBP", "¥": "JPY", "usd": "USD",
               "eur": "EUR", "gbp": "GBP", "cad": "CAD", "aud": "AUD", "chf": "CHF",
               "jpy": "JPY", "dollar": "$", "dollars": "$", "euro": "EUR", "euros": "EUR"}  # fmt: skip
"""How a currency is written → its code ("$" is any dollar: USD, CAD, AUD...)."""
_SEGMENT = re.compile(r"\n|;|(?<=[.!?])\s+(?=[A-Z*_(\[])")
_UP = re.compile(
    r"\b(?:up|rose|risen|rising|gained|gains?|increased?|higher|grew|grown|profits?|ahead|"
    r"climbed|advanced|added|rallied|jumped|surged|earned|made|in the green)\b",
    re.IGNORECASE,
)
_DOWN = re.compile(
    r"\b(?:down|fell|fallen|falling|dropped|drops?|lost|loss(?:es)?|declined?|decreased?|"
    r"lower|behind|slipped|sank|tumbled|slid|in the red)\b",
    re.IGNORECASE,
)
_AFTER_UP = re.compile(r"^\s*(?:higher|more|above|up)\s+(?:than|today|since|from|on)\b",
                       re.IGNORECASE)  # fmt: skip
_AFTER_DOWN = re.compile(r"^\s*(?:lower|less|below|under|down)\s+(?:than|today|since|from|on|what)\b",
                         re.IGNORECASE)  # fmt: skip
"""A direction said after the number: "$2.51 lower than yesterday"."""
_RANK = (
    (1, re.compile(r"\b(?:biggest|largest|most(?! recent)|highest|greatest|best|top(?! \d| "
                   r"(?:two|three|four|five|ten)\b)|led|leading|leader)\b", re.IGNORECASE)),
    (-1, re.compile(r"\b(?:smallest|least|lowest|worst|weakest|bottom)\b", re.IGNORECASE)),
)  # fmt: skip
"""Words that rank the figure after them first (+1: the largest) or last (-1)."""
_PER_UNIT = re.compile(r"^\s*(?:per|a|an|/)\s*(?:share|unit)\b|^\s*each\b", re.IGNORECASE)
"""Words after an amount that make it per share ("$280.10 a share", "each")."""
_EXCLUDING = re.compile(r"\b(?:excluding|except|without|other than|besides|apart from|"
                        r"not counting|leaving out|but (?:the|my|your)|outside)\b", re.IGNORECASE)  # fmt: skip
"""Words that leave a subject out of a total ("excluding the joint account")."""
_TOTAL = re.compile(
    r"\b(?:total|overall|combined|altogether|in all|(?:across|in) (?:all|all of)? ?your accounts|"
    r"(?:across|in|for) all (?:of )?(?:your |my )?accounts|portfolio|net worth|everything|"
    r"all (?:your|my) accounts|summed|whole)\b",
    re.IGNORECASE,
)
_ABOUT = re.compile(r"\b(?:about|around|roughly|approximately|nearly|almost|some|~)\s*$",
                    re.IGNORECASE)  # fmt: skip
"""Words before a number that make it a rounded one ("about $9,600" for 9,593.64)."""
_FOREIGN = re.compile(
    r"\b(?:open(?:ed|ing|s)?|dividends?|yield|52-week|market cap\w*|p/e|day(?:'s)? (?:high|low)|"
    r"earnings|eps|volume|bid|ask|target|paid|cash|expense ratios?|fees?|commissions?)\b",
    re.IGNORECASE,
)
"""Words naming a field a record may not have ("dividend", "opened at", "paid", "cash"):
a number they name must be a field whose name or terms say that word."""
_PERIODS = (
    ("ytd", r"\bytd\b|year[- ]to[- ]date|this year|so far (?:this year|in \d{4})"),
    ("1y", r"past year|last (?:12|twelve) months|over the last year|\bone[- ]year|\b1 ?y\b|"
           r"past 12 months|last year|\b1 year\b|\b12 months\b"),
    ("1m", r"this month|past month|last month|\b30 days|\bone[- ]month|\b1 month\b"),
    ("1w", r"this week|past week|last week|\b7 days|\bone[- ]week|\b1 week\b"),
    ("1d", r"\btoday\b|since yesterday|\b24 hours"),
    ("3m", r"three[- ]months?|3 months|\bquarter"),
    ("all", r"all[- ]time|since (?:you|i|we) opened|since inception|\bever\b"),
)  # fmt: skip
"""How a sentence names the period a return is over → the data's timeframe (lower case)."""
_LEXICON: tuple[tuple[tuple[str, re.Pattern[str]], ...], ...] = tuple(
    tuple((value, re.compile(pattern, re.IGNORECASE)) for value, pattern in group)
    for group in (
        (("buy", r"\b(?:buy|bought|purchas\w*)\b"), ("sell", r"\b(?:sell|sold|sale|sales)\b")),
        (("pending", r"\b(?:pending|in progress|not yet|processing)\b"),
         ("completed", r"\b(?:complete[ds]?|cleared|arrived|went through|settled|landed)\b"),
         ("failed", r"\b(?:failed|rejected|bounced|returned)\b")),
        (("deposit", r"\b(?:deposit\w*|put in|added|into)\b"),
         ("withdrawal", r"\b(?:withdr[ae]w\w*|took out|taken out)\b")),
        (("ach", r"\bach\b"), ("wire", r"\bwire[ds]?\b")),
    )
)  # fmt: skip
"""Words for the values of categorical fields (side, status, type, method): a sentence
naming one must agree with the record its number comes from."""
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


_ABOUT_REACH = 32
"""The most characters ``_ABOUT`` can match ("approximately" and its spaces)."""


def _rounded(text: str, at: int) -> bool:
    """Whether an "about" word ends right before ``at`` (a rounded figure).

    Read in the last ``_ABOUT_REACH`` characters only: searching the whole text before
    each number made a long answer's check quadratic. The word boundary still sees the
    character before the cut ("roundabout $5" is not rounded).
    """
    return _ABOUT.search(text, max(0, at - _ABOUT_REACH), at) is not None


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
        tolerance = 0.5 * 10.0**-digits * scale
        if not frac and _rounded(text, m.start()):  # "about $9,600": to the hundred
            whole = m.group("int").replace(",", "")
            zeros = len(whole) - len(whole.rstrip("0"))
            tolerance = max(tolerance, 0.5 * 10.0**zeros * scale)
        yield value, tolerance + 1e-9, m


_PUNCTUATION = re.compile(r"[,;:()|]")


def _around(before: str, after: str, last: bool) -> str:
    """The words that describe a number, on both sides up to punctuation.

    Before it: the words since the last punctuation ("the previous close of $9"), or
    the label a colon gives it ("Cash: $12.10"); a colon further back ends a total's
    words ("$128,963.20 in total: Individual $64,926.05": Individual's is no total).
    After it: the words until the next punctuation ("$12.10 cash, ..."), when there is
    punctuation before the next number (or no next number); otherwise they lead to the
    next number ("42 shares at an average cost of $150.25").
    """
    parts = _PUNCTUATION.split(before)
    lead = parts[-1]
    if len(parts) > 1 and not lead.strip(" *_") and before.rstrip(" *_").endswith(":"):
        lead = parts[-2]  # "Cash: $22,910.85": the label the number follows is its own
    trail = _PUNCTUATION.split(after, maxsplit=1)
    return lead + " " + (trail[0] if len(trail) > 1 or last else "")


_COUNTS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
           "eight": 8, "nine": 9, "ten": 10}  # fmt: skip


_OF_WHOLE = re.compile(
    r"\bof (?:your|my|the|all)\b[^.;]{0,20}\b(?:portfolio|total|money|accounts|everything|"
    r"holdings|net worth|balance)\b", re.IGNORECASE,
)  # fmt: skip
"""A share said of everything ("a third of your portfolio"): of the data's grand total."""
