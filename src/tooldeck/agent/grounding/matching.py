"""The numbers of an answer without a claim, each matched against the evidence."""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from tooldeck.agent.grounding.evidence import _Evidence, _Fact
from tooldeck.agent.grounding.patterns import (
    _AFTER_DOWN,
    _AFTER_UP,
    _BOUND,
    _CITATION,
    _CURRENCIES,
    _DOWN,
    _EXCLUDING,
    _FOREIGN,
    _LEVEL,
    _LEXICON,
    _PER_UNIT,
    _PERIODS,
    _PLAIN_KINDS,
    _RANK,
    _SEGMENT,
    _TOTAL,
    _UP,
    _WRITTEN_DATE,
    _around,
    _numbers,
    _written_days,
)

# -- claims: the numbers of the answer -------------------------------------------------

_PERIOD_RULES = tuple((code, re.compile(rule, re.IGNORECASE)) for code, rule in _PERIODS)
_PERIOD_CODES = frozenset(code for code, _ in _PERIODS)
_CODES = frozenset(c for c in _CURRENCIES.values() if c != "$")


@dataclass(frozen=True, slots=True)
class _Claim:
    text: str
    value: float
    tolerance: float
    kinds: frozenset[str]
    sign: int
    """+1 or −1 when a direction or an explicit sign is stated; 0: magnitude only."""
    subjects: dict[str, str]
    """The subject named last before the number in its sentence, by type."""
    total: bool
    worded: bool
    """The sign comes from a word ("up", "lost"): the claim is about a change."""
    named: frozenset[str]
    """Fields the words around the number name ("previous close", "cash"); empty: any."""
    start: int = 0
    """Where the number starts in the answer."""
    sentence: str = ""
    """Its sentence (or table row), lower case: where its categorical words are read."""
    cites: frozenset[str] = frozenset()
    """The sources its own sentence cites; empty: the answer's citations are pooled."""
    currency: str | None = None
    """The currency it is written in (``USD``, ``EUR``; ``$``: some dollar), if any."""
    period: str | None = None
    """The period named in its part of the sentence, else its sentence's (``ytd``,
    ``1y``...), if any (``_own_period``)."""
    foreign: str | None = None
    """A field its words name that a record may not have ("dividend", "opened")."""
    per_unit: bool = False
    """Said per share ("$280.10 a share", "each"): never a quantity times a price."""
    rank: int = 0
    """+1 when its sentence calls it the largest ("biggest", "most", "led"), -1 the
    smallest ("worst", "least"): the first amount after such a word."""
    excluding: bool = False
    """Its sentence leaves something out ("excluding the joint account")."""
    own_total: bool = False
    """Its own words call it a total ("$128,963.20 in total", "your $X total"): the
    accounts its sentence lists are the total's parts, not its subject."""


@lru_cache(maxsize=64)
def _vocabulary(
    labels: frozenset[tuple[str, tuple[str, str]]], ids: frozenset[tuple[str, str]]
) -> tuple[dict[str, tuple[str, str]], re.Pattern[str] | None]:
    """How subjects are written (lower case → (type, id)), and a pattern finding them.

    Ids ("AAPL", "roth_ira" as "roth ira"), display names ("Apple Inc."), and a display
    name's first word when no other starts with it ("Apple").
    """
    names: dict[str, tuple[str, str]] = {label.lower(): s for label, s in labels}
    for kind, ident in ids:
        names.setdefault(ident.lower(), (kind, ident))
        if "_" in ident:  # roth_ira is written "Roth IRA"
            names.setdefault(ident.replace("_", " ").lower(), (kind, ident))
    firsts = [label.split()[0].strip(".,").lower() for label, _ in labels if label.split()]
    for label, subject in labels:
        first = label.split()[0].strip(".,").lower() if label.split() else ""
        if len(first) >= 4 and firsts.count(first) == 1:
            names.setdefault(first, subject)
    return names, _mention_pattern(frozenset(names))


@lru_cache(maxsize=128)
def _mention_pattern(names: frozenset[str], inflected: bool = False) -> re.Pattern[str] | None:
    """Any of ``names`` as a whole word, the name as group 1.

    With ``inflected``, with -s, -d or -ed too: "changed" names ``change``.
    """
    if not names:
        return None
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    tail = r"(?:s|d|ed)?" if inflected else ""
    return re.compile(rf"(?<![\w$])({alternatives}){tail}(?!\w)", re.IGNORECASE)


_IN_NEXT = re.compile(
    r"\s*(?:shares?\s+)?(?:in|at|into|from)\s+(?:the\s+|your\s+|my\s+)?", re.IGNORECASE
)
"""Between a number and the subject it belongs to: "18 in Joint", "$5,000 into the Roth"."""


def _claims(text: str, blank: str, evidence: _Evidence, markdown: str = "") -> Iterator[_Claim]:
    """The numbers of ``blank`` (``text`` with dates blanked), each with its context.

    Subjects are found in ``text`` (a date may name a record: a trade's day): for each
    type, the one named in the number's clause (from the number before it to the number
    after it: before it, else after it: "42 of your shares sit in Joint Brokerage"), else
    the last one named before the clause; with "respectively", the k-th number is the
    k-th named. A sentence's own citations are read in ``markdown`` (same positions).
    """
    names, pattern = _vocabulary(frozenset(evidence.labels.items()), frozenset(evidence.ids))
    terms = _mention_pattern(frozenset(evidence.terms), inflected=True)
    start = 0
    for end_match in [*_SEGMENT.finditer(blank), None]:
        end = end_match.start() if end_match else len(blank)
        segment, plain = text[start:end], blank[start:end]
        offset, start = start, (end_match.end() if end_match else end)
        sentence = segment.lower()
        cites = frozenset(_CITATION.findall(markdown[offset:end])) if markdown else frozenset()
        period = next((code for code, rule in _PERIOD_RULES if rule.search(sentence)), None)
        respectively = "respectively" in sentence
        excluding = bool(_EXCLUDING.search(sentence))
        ranks = sorted((m.start(), d) for d, rule in _RANK for m in rule.finditer(segment))
        ranked_from = -1  # an amount after a rank word takes it; the next amount does not
        said_total = _TOTAL.search(plain)  # a total word before a number makes it a total
        first_total = said_total.end() if said_total else -1
        found = list(pattern.finditer(segment)) if pattern else []
        mentions = [
            (m.start(), names[m.group().lower()])
            for m in found
            if not (names[m.group().lower()][0] == "date" and _BOUND.search(segment[: m.start()]))
        ]  # "since 2026-10-01" bounds a period, it names no record
        written = markdown[offset:end] if markdown else segment  # text has them blanked
        for m in _WRITTEN_DATE.finditer(written):  # "on Nov 19": the record of that day
            days = [
                d for d in _written_days(m, evidence.years or {0}) if ("date", d) in evidence.ids
            ]
            if len(days) == 1 and not _BOUND.search(written[: m.start()]):
                mentions.append((m.start(), ("date", days[0])))
        mentions.sort()
        spans = [(m.start(), m.end()) for m in found]
        numbers = [  # "S&P 500" in "Vanguard S&P 500 ETF" names a fund, it states nothing;
            n
            for n in _numbers(plain)  # "over 3 months" names a period
            if not any(a <= n[2].start() < b for a, b in spans)
            and not (n[2].group().strip().isdigit() and _SPAN_OF_TIME.match(plain, n[2].end()))
        ]
        said_sign, said_worded = 0, False
        said_subjects: dict[str, str] = {}
        for i, (value, tolerance, m) in enumerate(numbers):
            before = plain[numbers[i - 1][2].end() if i else 0 : m.start()]
            after = plain[m.end() : numbers[i + 1][2].start() if i + 1 < len(numbers) else None]
            context = _around(before, after, last=i + 1 == len(numbers))
            named = frozenset(
                name
                for t in (terms.findall(context) if terms else ())
                for name in evidence.terms[t.lower()]
            )
            if m.group("cur") or m.group("unit"):  # "$129k ... accounts": no list's length
                named = frozenset(n for n in named if not n.startswith("number of "))
            foreign = _FOREIGN.search(context)
            unit = (m.group("unit") or "").strip()
            word = (m.group("after") or "").strip().lower()
            written = (m.group("cur") or "").strip().lower() or word.rstrip("s")
            currency = _CURRENCIES.get(written) or _CURRENCIES.get(word)
            if m.group("cur") or currency:
                kinds = frozenset({"money"})
            elif unit in ("%", "percent", "bps", "basis point", "basis points"):
                kinds = frozenset({"percent"})
            elif word.startswith(("share", "unit")):
                kinds = frozenset({"quantity"})
            else:
                kinds = _PLAIN_KINDS
            sign, worded = 0, False
            if m.group("sign"):
                sign = 1 if m.group("sign") == "+" else -1
            elif _LEVEL.search(before):
                sign = 0  # "fell to $220": a level, not a change
            elif _DOWN.search(before[-40:]):
                sign, worded = -1, True
            elif _UP.search(before[-40:]):
                sign, worded = 1, True
            elif _AFTER_DOWN.search(after):  # "$2.51 lower than yesterday"
                sign, worded = -1, True
            elif _AFTER_UP.search(after):
                sign, worded = 1, True
            elif i and re.fullmatch(r"\s*\(\s*", before):  # "down $0.01 (0.01%)": the same change
                sign, worded = said_sign, said_worded
            said_sign, said_worded = sign, worded
            # its clause: from the number before it to the number after it
            opened = numbers[i - 1][2].end() if i else 0
            closed = numbers[i + 1][2].start() if i + 1 < len(numbers) else len(segment)
            subjects: dict[str, str] = {}
            for at, (kind, ident) in mentions:  # named before, its own clause's last
                if at < m.start():
                    subjects[kind] = ident
            own = {k for at, (k, _) in mentions if opened <= at < m.start()}
            for at, (kind, ident) in mentions:  # named after it, in its clause: the first
                if m.start() < at < closed and kind not in own:
                    subjects[kind] = ident
                    own.add(kind)
            for at, (kind, ident) in mentions:  # right after it: "15 VOO shares" is VOO's
                if 0 < at - m.end() <= 2 and not segment[m.end() : at].strip():
                    subjects[kind] = ident
                elif 0 < at - m.end() <= 20 and _IN_NEXT.fullmatch(segment[m.end() : at]):
                    subjects[kind] = ident  # "42 in Individual and 18 in Joint": 18 is Joint's
            if i and _SAME_AGAIN.fullmatch(before):  # "+3.4% (+$2,085.58)": the same record's
                subjects = dict(said_subjects)
            said_subjects = subjects
            if respectively:  # "A and B trade at $x and $y respectively"
                for kind in {k for _, (k, _) in mentions}:
                    order = [ident for _, (k, ident) in mentions if k == kind]
                    if len(order) == len(numbers):
                        subjects[kind] = order[i]
            total = bool(0 <= first_total <= m.start() or _TOTAL.search(context))
            rank = 0
            if kinds & {"money", "percent"}:
                last = bisect.bisect_left(ranks, (m.start(),)) - 1  # the rank word before it
                rank = ranks[last][1] if last >= 0 and ranks[last][0] > ranked_from else 0
                ranked_from = m.start()
            said = m.group(0)
            at = offset + m.start() + len(said) - len(said.lstrip())
            yield _Claim(
                said.strip(), value, tolerance, kinds, sign, subjects, total, worded, named, at,
                sentence, cites, currency, (_own_period(segment, m.start(), m.end()) or period) if period else None,
                foreign.group().lower() if foreign else None,
                bool(_PER_UNIT.search(after)), rank, excluding, bool(_TOTAL.search(context)),
            )  # fmt: skip


_SPAN_OF_TIME = re.compile(r"\s*(?:days?|weeks?|months?|years?)\b", re.IGNORECASE)
"""After a bare whole number, a span of time: "over 3 months" names a period, no figure."""
_SAME_AGAIN = re.compile(r"\s*\(\s*")
"""Between a figure and its other form in parentheses: "+3.4% (+$2,085.58)"."""
_PART = re.compile(r",\s|;|\band\b")
_PART_REACH = 200


def _own_period(segment: str, start: int, end: int) -> str | None:
    """The period named in the number's own part of its sentence, or None.

    "+5.2% ($1,505.55) over 3 months, and +15.8% ($3,200.72) over 1 year": each figure's
    is the one after it up to the next comma or "and", else the one before it from the
    last of them: not the sentence's first. Each side is read within ``_PART_REACH``
    characters of the number (a sentence of thousands of figures stays linear).
    """
    after = _PART.split(segment[end : end + _PART_REACH], maxsplit=1)[0]
    before = _PART.split(segment[max(0, start - _PART_REACH) : start])[-1]
    for part in (after, before):
        code = next((code for code, rule in _PERIOD_RULES if rule.search(part)), None)
        if code is not None:
            return code
    return None


def _agrees(claim: _Claim, fact: _Fact, *, check: str = "all") -> bool:
    """Whether ``fact`` backs ``claim`` (``check`` stops after one aspect, for messages)."""
    if abs(abs(fact.value) - claim.value) > claim.tolerance:
        return False
    if check == "value":
        return True
    if fact.kind is not None and fact.kind not in claim.kinds:
        return False
    if fact.scaled and "percent" not in claim.kinds:
        return False
    if check == "kind":
        return True
    if claim.named and fact.name not in claim.named and not (claim.per_unit and not fact.product):
        return False  # "cost $48.30 each" names the cost, and says it per share
    if fact.kind == "count" and fact.terms and fact.name not in claim.named:
        return False  # "5" is a list's length only when said so: "5 positions"
    if fact.named and fact.name not in claim.named:
        return False  # "up 4.06% to $141.02": a previous close only where it is said
    if claim.per_unit and fact.product:
        return False  # "$3,361.20 per share": a position's cost is not a share's
    if fact.excluding and not claim.excluding:
        return False  # all accounts but one, said as all of them
    if check == "named":
        return True
    if fact.prose and claim.subjects:
        return False  # what a text says of AAPL does not outweigh AAPL's own records
    own = dict(fact.subjects)
    if fact.total:  # a total is of the subjects it names: all of them, or the claim's
        grand = claim.own_total and not own and not fact.excluding  # "$X in total: A $y..."
        if not grand and any(own.get(kind) != ident for kind, ident in claim.subjects.items()):
            return False
    elif any(own.get(kind, ident) != ident for kind, ident in claim.subjects.items()):
        return False
    elif "date" in claim.subjects and "date" not in own:
        return False  # "bought 10 QQQ on Oct 28": the figure is of that day's record
    if check == "subject":
        return True
    if claim.total and not fact.total and not own.keys() <= claim.subjects.keys():
        return False  # a total is a total, or the record the claim fully names
    if check == "total":
        return True
    if claim.worded and fact.kind is not None and not fact.change:
        return False  # "up $228": a direction claims a change, and this is a level
    if claim.sign and fact.value and math.copysign(1, fact.value) != claim.sign:
        return False
    if check == "direction":
        return True
    return _says_the_record(claim, fact)


@lru_cache(maxsize=256)
def _lexicon_said(sentence: str) -> tuple[frozenset[str], ...]:
    """Each ``_LEXICON`` group's values the sentence's words say ("bought": buy).

    Read once per sentence, not once per record a figure of it is compared with: a
    27 KB sentence of 1,000 figures was searched 16,000 times (5.7 s of 6).
    """
    return tuple(
        frozenset(value for value, rule in group if rule.search(sentence)) for group in _LEXICON
    )


def _says_the_record(claim: _Claim, fact: _Fact) -> bool:
    """Whether the sentence's other words agree with the record the number comes from.

    Its own citations name the fact's source(s); its words for a side, a status, a type
    or a method (``_LEXICON``) are the record's; the period it names is the record's
    timeframe (a change of no timeframe, a quote's, is the day's); the currency it is
    written in is the record's (or the cited data's); and it names no field the record
    lacks ("dividend", "opened").
    """
    if claim.cites and fact.sources and not fact.sources <= claim.cites:
        return False
    for group, said in zip(_LEXICON, _lexicon_said(claim.sentence), strict=True):
        have = {value for value, _ in group} & fact.values
        if have and said and not said & have:
            return False
    periods = _PERIOD_CODES & fact.values
    if claim.period and periods and claim.period not in periods:
        return False
    if claim.period not in (None, "1d") and fact.change and not periods and not fact.total:
        return False  # "up 4.1% over 3 months": a quote's change is the day's
    if claim.currency and claim.currency != "$":
        held = {v.upper() for v in fact.values if v.upper() in _CODES}
        if claim.currency not in (held or {"USD"}):
            return False
    if not claim.foreign:
        return True
    word = claim.foreign.split()[0]
    return word in fact.name or any(word in term for term in fact.terms)


def _why(claim: _Claim, evidence: _Evidence, sources: str) -> str:
    """Why no fact backs ``claim``: the closest miss, named."""
    near = evidence.near(claim.value, claim.tolerance)
    stated = "/".join(sorted(claim.kinds)) if claim.kinds != _PLAIN_KINDS else "a plain number"
    for check, reason in (
        ("total", "it is stated as a change {direction}, but it is {fact}"),
        ("subject", "the sentence calls it a total, but {fact} is not a total"),
        ("named", "the sentence states it for {subject}, but it is {fact}"),
        ("kind", "the words around it name {named}, but it is {fact}"),
        ("value", "it is stated as {stated}, but the equal value is {fact}"),
    ):
        hits = [f for f in near if _agrees(claim, f, check=check)]
        if hits:
            direction = "up" if claim.sign > 0 else "down"
            subject = ", ".join(claim.subjects.values()) or "no subject"
            return (
                f"The number {claim.text} does not hold: "
                + reason.format(
                    direction=direction,
                    fact=hits[0].describe(),
                    subject=subject,
                    stated=stated,
                    named=" or ".join(sorted(n.replace("_", " ") for n in claim.named)),
                )
                + f" (in {sources})."
            )
    same = [f for f in evidence.facts if f.kind in claim.kinds and _agrees_subject(claim, f)]
    closest = min(same, key=lambda f: abs(abs(f.value) - claim.value), default=None)
    hint = f"; the closest {stated} value is {closest.describe()}" if closest else ""
    return (
        f"The number {claim.text} is in none of the cited results ({sources}), nor "
        f"derived from them{hint}."
    )


def _agrees_subject(claim: _Claim, fact: _Fact) -> bool:
    own = dict(fact.subjects)
    return all(own.get(kind, ident) == ident for kind, ident in claim.subjects.items())


def _misread(claim: _Claim, fact: _Fact) -> str | None:
    """Why the sentence around a bound figure does not state ``fact``; None when it does.

    The figure's value is already checked at its pointer; this checks the words: its
    kind ($, %), the field the words name, the subject the sentence names, a total, a
    direction (issue 29: a claim holds only when every word of its sentence agrees).
    """
    if _agrees(claim, fact):
        return None
    stated = "/".join(sorted(claim.kinds)) if claim.kinds != _PLAIN_KINDS else "a plain number"
    subject = ", ".join(claim.subjects.values()) or "no subject"
    for check, reason in (
        ("kind", f"it is stated as {stated}"),
        ("named", "the words around it name "
         + " or ".join(sorted(n.replace("_", " ") for n in claim.named))),
        ("subject", f"the sentence states it for {subject}"),
        ("total", "the sentence calls it a total"),
    ):  # fmt: skip
        if not _agrees(claim, fact, check=check):
            return f"{reason}, but its field is {fact.describe()}"
    return f"it is stated as a change {'up' if claim.sign > 0 else 'down'}, but it is {fact.describe()}"
