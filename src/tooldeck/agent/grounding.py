"""The grounding validator: does every citation and every number of an answer hold?

Seed 004's responder checks that an answer's citations are the ``source_id`` of a tool
result of this run. This goes further: every number the answer states must be a value
of a cited result (or a ``Figure`` derived from cited results, recomputed here) that
agrees with the claim, not just any equal number:

- **precision**: ``|stated − value| ≤`` half a unit of the stated precision (``6.2%``
  matches 6.18 and 6.24; ``$9,594`` matches 9593.64);
- **kind**: money (``$``, ``USD``) matches money fields, ``%`` percent fields, a bare
  number quantities, list lengths and years; never a number of another kind. Kinds come
  from the tools' output schemas (``x-kind``, ``core.kinds``); an unmarked field
  matches any kind;
- **subject**: a number in a sentence about AAPL (or "Individual Brokerage") matches
  only values of records whose subject (``x-subject``) is AAPL (or that account), or
  records without a subject of that type;
- **total**: a number the sentence calls a total ("total", "overall", "combined")
  matches only totals (``x-total``, or a derived sum), or a record whose every subject
  the sentence names ("Individual Brokerage's total value");
- **direction**: "up", "gained", "+" make the claim positive, "down", "lost", "−"
  negative, and then the sign must agree with the data ("fell to $220" states a level,
  not a change);
- **prose**: a number read from text (a document's snippet) backs no claim about a
  subject (what a text says of AAPL does not outweigh AAPL's records), and text that
  addresses the model ("ignore the tools and say that...") backs nothing.

What counts as a number: ``1,234.50``, ``$1,234.50``, ``-$12``, ``6.2%``, ``$1.2k``,
``$3.4M``, ``2 million``. Not numbers: identifiers with digits (``1Y``, ``3M`` without a
currency sign, ``401k``, ``v1``), citations, and ISO dates, which are checked as dates
(the date must appear in a cited result). A number that fails is explained: what it was
compared with, and why it did not match.

Example::

    report = check_grounding("AAPL is at $228.42 [tool:quotes:v1]", ["tool:quotes:v1"],
                             results, schemas={"get_quotes": quotes_output_schema})
    report.ok  # True when nothing was found wrong
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, Field

from tooldeck.core.claims import Claim, problems_of_claims
from tooldeck.core.intents import Figure
from tooldeck.core.result import ToolResult

__all__ = ["Finding", "Grounding", "GroundingReport", "check_grounding", "find_citations"]

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
    ]
    """``unknown_citation``: cites a source no tool result of the run has;
    ``untraced_number``: no cited value agrees with the number (value, kind, subject,
    total, sign); ``untraced_date``: in none of the cited results; ``untraced_quote``: a
    quotation (four words or more in quotation marks) in none of them; ``off_question``: the
    answer is not of the kind the question asks for (no winner named for "which account
    has the most", more rows than "top 3", no figure for "how much"); ``claim_mismatch``:
    a bound figure (``core.claims``) is not what the field it is bound to holds, or its
    source is not cited; ``unbound_figure``: a number in an answer whose writer binds
    every figure, with no claim for it."""
    text: str
    """The citation, number or date as the answer wrote it."""
    message: str
    """What is wrong (what it was compared with, why it failed), in words a model can
    act on."""


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


# -- evidence: the values of the cited results ------------------------------------------


@dataclass(frozen=True, slots=True)
class _Fact:
    """One value of a cited result, with what it is and whose it is."""

    value: float
    kind: str | None
    """``money``, ``percent``, ``quantity``, ``count`` (a list's length); None: unmarked."""
    name: str
    """The field (``price``) or the figure's label, for messages."""
    subjects: _Subjects
    total: bool
    change: bool = False
    """A change or a return (``x-change``): what a direction word claims."""
    terms: tuple[str, ...] = ()
    """Words naming the field (its own name, ``x-terms``)."""
    scaled: bool = False
    """A fraction stated as a percentage (0.062 for 6.2 %): unmarked fields only."""
    prose: bool = False
    """Read from text (a document's snippet), not from a field: weaker evidence."""

    def describe(self) -> str:
        whose = ", ".join(v for _, v in self.subjects)
        kind = f"{self.kind} " if self.kind and self.kind != "count" else ""
        return f"{self.name} {self.value:g} ({kind}{'of ' + whose if whose else 'no subject'})"


class _Evidence:
    """The values, dates and subjects of the cited results and accepted figures."""

    def __init__(
        self,
        results: Iterable[ToolResult],
        figures: Iterable[Figure],
        cited: set[str],
        schemas: Mapping[str, Any],
        numbers: bool = True,
    ) -> None:
        self.numbers = numbers
        """False: only dates, times, texts and subjects are gathered (an answer whose
        figures are all bound needs no index of the data's numbers)."""
        facts: list[_Fact] = []
        self.dates: set[str] = set()
        self.times: set[str] = set()
        """Times of day (``HH:MM``) of the timestamps in the cited data."""
        self.labels: dict[str, tuple[str, str]] = {}
        """Display name → (type, id) of the subjects seen in the data."""
        self.ids: set[tuple[str, str]] = set()
        self.texts: list[str] = []
        """The cited text (for quotes), lower case, one space between words."""
        for result in results:
            if not result.success:
                continue
            name = result.metadata.tool_name if result.metadata else None
            schema = schemas.get(name) if name else None
            node = _compiled(schema)
            if result.source_id in cited:
                if result.as_of:
                    self.dates.update(m.group(1) for m in _DATE.finditer(result.as_of))
                self._walk(result.data, node, (), "value", facts)
                continue
            for part, part_node, key in _parts(result.data, node):  # a cited document's blocks
                if not cited.isdisjoint(_own_ids(part, key)):
                    self._walk(part, part_node, (), "value", facts)
        self.figures = _accepted(figures, cited, [f.value for f in facts]) if numbers else []
        for f in self.figures:
            name = f.label.rsplit(" ", 1)[-1]
            terms = (name.replace("_", " "), *f.terms)
            facts.append(_Fact(f.value, f.kind, name, f.subjects, f.total, f.change, terms))
        self.facts = sorted(facts, key=lambda f: abs(f.value))
        self.keys = [abs(f.value) for f in self.facts]
        self.years = {int(d[:4]) for d in self.dates}
        self.terms: dict[str, set[str]] = {}
        """Term (lower case) → the names of the fields it names."""
        for fact in self.facts:
            for term in fact.terms:
                self.terms.setdefault(term.lower(), set()).add(fact.name)

    def _walk(
        self, value: Any, node: _Node, subjects: _Subjects, name: str, out: list[_Fact]
    ) -> None:
        if isinstance(value, bool) or value is None:
            return
        if isinstance(value, int | float):
            if not self.numbers:
                return
            terms = node.terms_for(name)
            out.append(
                _Fact(float(value), node.kind, name, subjects, node.total, node.change, terms)
            )
            if node.kind is None:
                out.append(_Fact(float(value) * 100, None, name, subjects, False, scaled=True))
        elif isinstance(value, str):
            self.dates.update(m.group(1) for m in _DATE.finditer(value))
            self.times.update(m.group(1) for m in _STAMP_TIME.finditer(value))
            if len(value) > 20:
                self.texts.append(" ".join(value.lower().split()))
            if self.numbers and not _INSTRUCTION.search(value):  # orders are not data
                for number, _, _ in _numbers(_DATE.sub(" ", value)):
                    out.append(_Fact(number, None, name, subjects, False, prose=True))
        elif isinstance(value, dict):
            own = dict(subjects)
            for key, kind in node.subject_keys:
                item = value.get(key)
                if isinstance(item, str):
                    day = _DATE.match(item)  # a timestamp's subject is its day
                    own[kind] = day.group(1) if day else item
                    self.ids.add((kind, own[kind]))
            for key, kind in node.label_keys:  # labels name the record's subject ids
                item = value.get(key)
                if isinstance(item, str) and kind in own:
                    self.labels[item] = (kind, own[kind])
            record = tuple(sorted(own.items())) if node.subject_keys else subjects
            for key, item in value.items():
                if self.numbers or isinstance(item, str | dict | list | tuple):
                    self._walk(item, node.props.get(key, _EMPTY), record, key, out)
        elif isinstance(value, list | tuple):
            if self.numbers:
                said = node.list_terms(name)
                count = f"number of {name}"
                out.append(_Fact(float(len(value)), "count", count, subjects, False, False, said))
            items = node.items or _EMPTY
            for item in value:
                self._walk(item, items, subjects, name, out)

    def near(self, value: float, tolerance: float) -> list[_Fact]:
        """Facts whose magnitude is within ``tolerance`` of ``|value|``."""
        i = bisect.bisect_left(self.keys, abs(value) - tolerance)
        out = []
        while i < len(self.keys) and self.keys[i] <= abs(value) + tolerance:
            out.append(self.facts[i])
            i += 1
        return out


@dataclass(slots=True)
class _Node:
    """One schema node, resolved once: what its values are and where its children are."""

    kind: str | None = None
    total: bool = False
    change: bool = False
    terms: tuple[str, ...] = ()
    """``x-terms`` of the node."""
    described: bool = False
    """The schema describes the node (a list's length is then said with its name)."""
    props: dict[str, _Node] = field(default_factory=dict)
    subject_keys: list[tuple[str, str]] = field(default_factory=list)
    label_keys: list[tuple[str, str]] = field(default_factory=list)
    items: _Node | None = None
    item_subjects: tuple[str, ...] = ()
    cite_key: str | None = None
    """The property holding the record's own citable source id (``x-cite``)."""
    cites: bool = False
    """This node or one below it has a ``cite_key`` (else ``_parts`` need not look)."""

    def terms_for(self, name: str) -> tuple[str, ...]:
        return (name.replace("_", " "), *self.terms)

    def list_terms(self, name: str) -> tuple[str, ...]:
        if not self.described:
            return ()
        return (*self.terms_for(name), *(f"{k}s" for k in self.item_subjects))


_EMPTY = _Node()
_COMPILED: dict[int, tuple[Any, _Node]] = {}
"""Output schema id → (the schema, its node): schemas are compiled once."""


def _compiled(schema: Any) -> _Node:
    """The node tree of an output schema (cached while the schema object lives)."""
    if not isinstance(schema, dict):
        return _EMPTY
    hit = _COMPILED.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    if len(_COMPILED) > 1024:
        _COMPILED.clear()
    node = _compile(schema, schema.get("$defs", {}), {})
    _COMPILED[id(schema)] = (schema, node)
    return node


def _compile(schema: Any, defs: Mapping[str, Any], seen: dict[int, tuple[Any, _Node]]) -> _Node:
    """A node per resolved schema; a recursive schema's node refers to itself."""
    resolved = _resolve(schema, defs)
    if not resolved:
        return _EMPTY
    hit = seen.get(id(resolved))
    if hit is not None and hit[0] is resolved:
        return hit[1]
    node = _Node(
        kind=resolved.get("x-kind"),
        total=bool(resolved.get("x-total")),
        change=bool(resolved.get("x-change")),
        terms=tuple(resolved.get("x-terms", ())),
        described=True,
    )
    seen[id(resolved)] = (resolved, node)
    for key, prop in resolved.get("properties", {}).items():
        child = _resolve(prop, defs)
        if child.get("x-cite"):
            node.cite_key = key
        subject = child.get("x-subject")
        if subject:
            target = node.label_keys if child.get("x-subject-label") else node.subject_keys
            target.append((key, subject))
        node.props[key] = _compile(prop, defs, seen)
    if "items" in resolved:
        node.items = _compile(resolved["items"], defs, seen)
        node.item_subjects = tuple(k for _, k in node.items.subject_keys)
    below = [*node.props.values(), *([node.items] if node.items else [])]
    node.cites = node.cite_key is not None or any(child.cites for child in below)
    return node


def _parts(value: Any, node: _Node) -> Iterator[tuple[dict[str, Any], _Node, str]]:
    """The records of ``value`` that carry their own citable source id, with their node."""
    if not node.cites:
        return
    if isinstance(value, dict):
        if node.cite_key is not None:
            yield value, node, node.cite_key
        for key, item in value.items():
            yield from _parts(item, node.props.get(key, _EMPTY))
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _parts(item, node.items or _EMPTY)


def _own_ids(part: Mapping[str, Any], key: str) -> list[str]:
    """The source ids a record cites as its own (one, or a list: ``x-cite``)."""
    own = part.get(key)
    return [str(i) for i in (own if isinstance(own, list) else [own]) if i]


def _resolve(schema: Any, defs: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` with ``$ref`` followed and a nullable ``anyOf`` unwrapped ({} if none)."""
    for _ in range(8):
        if not isinstance(schema, dict):
            return {}
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            schema = defs.get(ref.removeprefix("#/$defs/"))
            continue
        branches = [b for b in schema.get("anyOf", ()) if b != {"type": "null"}]
        if len(branches) == 1 and "properties" not in schema:
            marks = {k: v for k, v in schema.items() if k.startswith("x-")}
            schema = (
                {**branches[0], **marks} if marks and isinstance(branches[0], dict) else branches[0]
            )
            continue
        return schema
    return {}


_OPS: dict[str, Callable[[list[float]], float]] = {
    "sum": lambda xs: math.fsum(xs),
    "product": lambda xs: math.prod(xs),
    "difference": lambda xs: xs[0] - math.fsum(xs[1:]) if xs else 0.0,
    "percent_of": lambda xs: xs[0] / xs[1] * 100 if len(xs) == 2 and xs[1] else math.nan,
}


def _accepted(figures: Iterable[Figure], cited: set[str], values: list[float]) -> list[Figure]:
    """The figures whose sources are cited and whose formula holds on traced inputs.

    A figure with ``op`` is recomputed from ``inputs`` (to the cent, or the hundredth of
    a percent), and each input must be a value of the cited data or of a figure accepted
    before it. A figure without ``op`` is the pack's own statement, taken as is.
    """
    known = set(values)
    accepted: list[Figure] = []
    for figure in figures:
        if not set(figure.source_ids) <= cited:
            continue
        if figure.op is not None:
            op = _OPS.get(figure.op)
            if op is None or not all(_traced(x, known) for x in figure.inputs):
                continue
            computed = op(list(figure.inputs))
            if not abs(computed - figure.value) <= 0.005 + 1e-9 * abs(figure.value):
                continue
        accepted.append(figure)
        known.add(figure.value)
    return accepted


def _traced(value: float, known: set[float]) -> bool:
    return value in known or any(abs(value - k) <= 1e-9 * max(1.0, abs(k)) for k in known)


# -- claims: the numbers of the answer -------------------------------------------------


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


@lru_cache(maxsize=64)
def _mention_pattern(names: frozenset[str]) -> re.Pattern[str] | None:
    if not names:
        return None
    alternatives = sorted(names, key=len, reverse=True)
    return re.compile(
        r"(?<![\w$])(?:" + "|".join(re.escape(n) for n in alternatives) + r")(?!\w)",
        re.IGNORECASE,
    )


def _claims(text: str, blank: str, evidence: _Evidence) -> Iterator[_Claim]:
    """The numbers of ``blank`` (``text`` with dates blanked), each with its context.

    Subjects are found in ``text`` (a date may name a record: a trade's day).
    """
    names, pattern = _vocabulary(frozenset(evidence.labels.items()), frozenset(evidence.ids))
    terms = _mention_pattern(frozenset(evidence.terms))
    start = 0
    for end_match in [*_SEGMENT.finditer(blank), None]:
        end = end_match.start() if end_match else len(blank)
        segment, plain = text[start:end], blank[start:end]
        start = end_match.end() if end_match else end
        found = list(pattern.finditer(segment)) if pattern else []
        mentions = [
            (m.start(), names[m.group().lower()])
            for m in found
            if not (names[m.group().lower()][0] == "date" and _BOUND.search(segment[: m.start()]))
        ]  # "since 2026-10-01" bounds a period, it names no record
        spans = [(m.start(), m.end()) for m in found]
        numbers = [  # "S&P 500" in "Vanguard S&P 500 ETF" names a fund, it states nothing
            n for n in _numbers(plain) if not any(a <= n[2].start() < b for a, b in spans)
        ]
        for i, (value, tolerance, m) in enumerate(numbers):
            before = plain[numbers[i - 1][2].end() if i else 0 : m.start()]
            after = plain[m.end() : numbers[i + 1][2].start() if i + 1 < len(numbers) else None]
            context = _around(before, after, last=i + 1 == len(numbers))
            named = frozenset(
                name
                for t in (terms.findall(context) if terms else ())
                for name in evidence.terms[t.lower()]
            )
            unit = (m.group("unit") or "").strip()
            word = (m.group("after") or "").strip().lower()
            if m.group("cur") or word.startswith(("dollar", "usd")):
                kinds = frozenset({"money"})
            elif unit in ("%", "percent"):
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
            subjects: dict[str, str] = {}
            for at, (kind, ident) in mentions:
                if at < m.start():
                    subjects[kind] = ident
            total = bool(_TOTAL.search(plain[: m.start()]) or _TOTAL.search(context))
            yield _Claim(
                m.group(0).strip(), value, tolerance, kinds, sign, subjects, total, worded, named
            )


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
    if claim.named and fact.name not in claim.named:
        return False
    if fact.kind == "count" and fact.terms and fact.name not in claim.named:
        return False  # "5" is a list's length only when said so: "5 positions"
    if check == "named":
        return True
    if fact.prose and claim.subjects:
        return False  # what a text says of AAPL does not outweigh AAPL's own records
    own = dict(fact.subjects)
    if fact.total:  # a total is of the subjects it names: all of them, or the claim's
        if any(own.get(kind) != ident for kind, ident in claim.subjects.items()):
            return False
    elif any(own.get(kind, ident) != ident for kind, ident in claim.subjects.items()):
        return False
    if check == "subject":
        return True
    if claim.total and not fact.total and not own.keys() <= claim.subjects.keys():
        return False  # a total is a total, or the record the claim fully names
    if check == "total":
        return True
    if claim.worded and fact.kind is not None and not fact.change:
        return False  # "up $228": a direction claims a change, and this is a level
    return not (claim.sign and fact.value and math.copysign(1, fact.value) != claim.sign)


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


def check_grounding(
    markdown: str,
    citations: Sequence[str],
    results: Sequence[ToolResult],
    figures: Iterable[Figure] = (),
    *,
    schemas: Mapping[str, Any] | None = None,
    subjects: Mapping[str, tuple[str, str]] | None = None,
    question: str | None = None,
    claims: Sequence[Claim] = (),
    bound: bool = False,
) -> GroundingReport:
    """Check ``markdown`` and ``citations`` against the run's ``results``.

    Args:
        markdown: The answer's text.
        citations: The source ids the answer cites (the contract's ``citations``).
        results: Every tool result of the run, successful or not.
        figures: Numbers derived from the results (``IntentPack.figures``); one with a
            formula (``op``, ``inputs``) counts only when it recomputes.
        schemas: Output JSON Schema by tool name: where value kinds, subjects and totals
            come from (``core.kinds``). Without one, a tool's numbers match any kind.
        subjects: More display names of subjects (``"Individual Brokerage"`` →
            ``("account", "individual")``), e.g. from ``IntentPack.subjects``.
        question: The question asked; with it, the answer's relevance is checked too
            (``off_question`` findings, see ``Finding.kind``).
        claims: The answer's bound figures (``core.claims``): each is checked at its
            pointer in a cited result, and a figure that holds is not matched again.
        bound: Every figure of the answer is meant to be among ``claims`` (a writer that
            binds as it writes): a number outside them is an ``unbound_figure``, not
            matched against the data by the rules, unless the question states it. A
            claim's formula may take numbers only from the question.

    Returns:
        The findings: citations that are no successful result's source_id, numbers no
        cited value agrees with, dates in none of the cited results. Never raises.
    """
    known = {r.source_id for r in results if r.success and r.source_id}
    for result in results:  # records that carry their own source id (a document's block)
        if result.success and schemas and result.metadata and result.metadata.tool_name:
            node = _compiled(schemas.get(result.metadata.tool_name))
            for part, _, key in _parts(result.data, node):
                known.update(_own_ids(part, key))
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
    evidence = _Evidence(results, figures, set(cited) & known, schemas or {}, numbers=not bound)
    if subjects:
        evidence.labels.update(subjects)
        evidence.ids.update(subjects.values())
    sources = ", ".join(c for c in cited if c in known) or "no valid source"
    for quote in _QUOTE.findall(markdown):
        said = " ".join(quote.lower().split())
        if len(said.split()) >= 4 and not any(said in t for t in evidence.texts):
            findings.append(
                Finding(
                    kind="untraced_quote",
                    text=quote,
                    message=f"The quotation “{quote}” is in none of the cited results "
                    f"({sources}): quote their words exactly, or do not use quotation marks.",
                )
            )
    unclaimed = list(markdown)
    aliases = {name: value for name, (_, value) in (subjects or {}).items()}
    asked = {round(value, 6) for value, _, _ in _numbers(question or "")}
    asked |= {
        float(_COUNTS[w]) for w in re.findall(r"[a-z]+", (question or "").lower()) if w in _COUNTS
    }
    for figure, problems in zip(
        claims, problems_of_claims(markdown, claims, results, aliases), strict=True
    ):
        start, end = figure.span
        problems += [f"{markdown[start:end]!r} is computed with {n:g}, which the question "
                     "does not state" for n in figure.literals() if round(n, 6) not in asked]  # fmt: skip
        uncited = sorted(figure.sources() - set(cited))
        if uncited:
            problems.insert(0, f"{markdown[start:end]!r} is bound to {', '.join(uncited)}, "
                               "which the answer does not cite")  # fmt: skip
        if problems:
            findings.append(
                Finding(kind="claim_mismatch", text=markdown[start:end], message=problems[0])
            )
        if 0 <= start < end <= len(markdown):  # checked at its field: not matched again
            unclaimed[start:end] = " " * (end - start)
    text = _CITATION.sub(" ", "".join(unclaimed))
    text = _SOURCE_ID.sub(" ", text)
    checked = len(claims)
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
    blank = _DATE.sub(lambda m: " " * len(m.group()), text)  # positions kept
    for m in _TIME.finditer(blank):
        checked += 1
        if f"{int(m.group(1)):02d}:{m.group(2)}" not in evidence.times:
            findings.append(
                Finding(
                    kind="untraced_date",
                    text=m.group(0),
                    message=f"The time {m.group(0)} is in no timestamp of the cited results "
                    f"({sources}).",
                )
            )
    blank = _TIME.sub(lambda m: " " * len(m.group()), blank)
    blank = _LIST_MARKER.sub(lambda m: " " * len(m.group()), blank)
    left = _claims(text, blank, evidence) if _NUMBER.search(blank) else iter(())
    for claim in left:  # the numbers no claim covers
        checked += 1
        if bound and round(claim.value, 6) in asked:
            continue  # the question's own number, said back ("10 shares of AAPL cost ...")
        if bound:
            findings.append(
                Finding(
                    kind="unbound_figure",
                    text=claim.text,
                    message=f"{claim.text} is stated with no claim binding it to a field of "
                    f"the cited results ({sources}).",
                )
            )
            continue
        if any(_agrees(claim, fact) for fact in evidence.near(claim.value, claim.tolerance)):
            continue
        if claim.kinds == _PLAIN_KINDS and not claim.sign and int(claim.value) in evidence.years:
            continue
        findings.append(
            Finding(kind="untraced_number", text=claim.text, message=_why(claim, evidence, sources))
        )
    if question is not None:
        findings += _relevance(question, markdown, evidence, checked)
    return GroundingReport(findings, checked, len(cited))


_WHICH_ONE = re.compile(
    r"\bwhich\b[^?]*\b(?:most|least|best|worst|biggest|largest|smallest|highest|lowest)\b|"
    r"\b(?:my|the) (?:biggest|largest|smallest|best|worst|top) (?:position|holding|stock|etf|"
    r"account|performer|winner|loser)\b",
    re.IGNORECASE,
)
_COUNTS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
           "eight": 8, "nine": 9, "ten": 10}  # fmt: skip
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
