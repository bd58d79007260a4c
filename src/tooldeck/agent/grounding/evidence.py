"""The evidence: the values, dates and subjects of the cited results, by schema node."""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from tooldeck.agent.grounding.findings import _Subjects
from tooldeck.agent.grounding.patterns import _DATE, _INSTRUCTION, _STAMP_TIME, _numbers
from tooldeck.core.intents import Figure
from tooldeck.core.kinds import infer_kind, infer_subject
from tooldeck.core.result import ToolResult

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
    values: frozenset[str] = frozenset()
    """The record's short string values, lower case (its side, status, timeframe,
    currency...): what the sentence's words for such facts must agree with."""
    sources: frozenset[str] = frozenset()
    """The source ids it comes from (a derived figure: all of its inputs')."""
    product: bool = False
    """A derived product (quantity × a per-share value): never a per-share amount."""
    excluding: bool = False
    """A total over all subjects but some (``Figure.excluding``)."""
    named: bool = False
    """It backs a figure only where the sentence names it (``x-named``)."""

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
        walk: bool = True,
    ) -> None:
        self.numbers = numbers
        """False: only dates, times, texts and subjects are gathered (an answer whose
        figures are all bound needs no index of the data's numbers); with ``walk`` False,
        only the results' as_of days."""
        facts: list[_Fact] = []
        self.dates: set[str] = set()
        self.times: set[str] = set()
        """Times of day (``HH:MM``) of the timestamps in the cited data."""
        self.labels: dict[str, tuple[str, str]] = {}
        """Display name → (type, id) of the subjects seen in the data."""
        self.ids: set[tuple[str, str]] = set()
        self.at: dict[tuple[str, str], list[_Fact]] = {}
        """The facts at each (source_id, JSON pointer) of the cited results (one per
        result of that source: a run may call a tool twice): what a claim binds to."""
        self._source = ""
        self.currencies: set[str] = set()
        """Currency codes the cited data names (``currency`` fields), upper case."""
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
                if not walk:  # only the as_of days are needed (a bound answer's footer)
                    continue
                self._source = result.source_id or ""
                self._walk(result.data, node, (), "value", facts, "", frozenset())
                continue
            for part, part_node, key in _parts(result.data, node) if walk else ():
                own = cited.intersection(_own_ids(part, key))
                if own:
                    self._source = min(own)
                    self._walk(part, part_node, (), "value", facts, None, frozenset())
        self.figures = _accepted(figures, cited, [f.value for f in facts]) if numbers else []
        for f in self.figures:
            name = f.label.rsplit(" ", 1)[-1]
            terms = (name.replace("_", " "), *f.terms)
            facts.append(
                _Fact(f.value, f.kind, name, f.subjects, f.total, f.change, terms,
                      sources=frozenset(f.source_ids), product=f.op == "product",
                      excluding=bool(f.excluding))
            )  # fmt: skip
        facts.extend(_shares(facts))
        self.facts = sorted(facts, key=lambda f: abs(f.value))
        self.keys = [abs(f.value) for f in self.facts]
        self.years = {int(d[:4]) for d in self.dates}
        self.terms: dict[str, set[str]] = {}
        """Term (lower case) → the names of the fields it names."""
        for fact in self.facts:
            for term in fact.terms:
                self.terms.setdefault(term.lower(), set()).add(fact.name)

    def _walk(
        self,
        value: Any,
        node: _Node,
        subjects: _Subjects,
        name: str,
        out: list[_Fact],
        path: str | None,
        values: frozenset[str],
    ) -> None:
        if isinstance(value, bool) or value is None:
            return
        if isinstance(value, int | float):
            if not self.numbers or not node.fact:
                return
            terms = node.terms_for(name)
            kind = node.kind if node.described else infer_kind(name)  # no schema: its name
            fact = _Fact(
                float(value), kind, name, subjects, node.total, node.change, terms,
                values=values, sources=frozenset((self._source,)) if self._source else frozenset(),
                named=node.named,
            )  # fmt: skip
            out.append(fact)
            if path is not None:
                self.at.setdefault((self._source, path), []).append(fact)
            if kind is None:
                out.append(_Fact(float(value) * 100, None, name, subjects, False, scaled=True))
        elif isinstance(value, str):
            self.dates.update(m.group(1) for m in _DATE.finditer(value))
            self.times.update(m.group(1) for m in _STAMP_TIME.finditer(value))
            if len(value) > 20:
                self.texts.append(" ".join(value.lower().split()))
            if self.numbers and not _INSTRUCTION.search(value):  # orders are not data
                for number, _, _ in _numbers(_DATE.sub(" ", value)):
                    out.append(_Fact(number, None, name, subjects, False, prose=True,
                                     sources=frozenset((self._source,))))  # fmt: skip
        elif isinstance(value, dict):
            own = dict(subjects)
            keys = node.subject_keys if node.described else _subject_keys(value)
            for key, kind in keys:
                item = value.get(key)
                if isinstance(item, str):
                    day = _DATE.match(item)  # a timestamp's subject is its day
                    own[kind] = day.group(1) if day else item
                    self.ids.add((kind, own[kind]))
            for key, kind in node.label_keys:  # labels name the record's subject ids
                item = value.get(key)
                if isinstance(item, str) and kind in own:
                    self.labels[item] = (kind, own[kind])
            record = tuple(sorted(own.items())) if keys else subjects
            here = values
            if self.numbers:  # what a sentence's words for a side, a status... must agree with
                here = values | {
                    v.lower() for v in value.values() if isinstance(v, str) and len(v) <= 40
                }
            if isinstance(value.get("currency"), str):
                self.currencies.add(value["currency"].upper())
            mark = len(out)
            for key, item in value.items():
                if self.numbers or isinstance(item, str | dict | list | tuple):
                    below = None if path is None else f"{path}/{_escaped(key)}"
                    self._walk(item, node.props.get(key, _EMPTY), record, key, out, below, here)
            if self.numbers and keys:
                out.extend(_within_record([f for f in out[mark:] if f.subjects == record]))
        elif isinstance(value, list | tuple):
            if self.numbers:
                said = node.list_terms(name)
                count = f"number of {name}"
                out.append(_Fact(float(len(value)), "count", count, subjects, False, False, said))
            items = node.items or _EMPTY
            for i, item in enumerate(value):
                at = None if path is None else f"{path}/{i}"
                self._walk(item, items, subjects, name, out, at, values)

    def near(self, value: float, tolerance: float) -> list[_Fact]:
        """Facts whose magnitude is within ``tolerance`` of ``|value|``."""
        i = bisect.bisect_left(self.keys, abs(value) - tolerance)
        out = []
        while i < len(self.keys) and self.keys[i] <= abs(value) + tolerance:
            out.append(self.facts[i])
            i += 1
        return out


_MONEY_PAIRS = 6
"""Records with more amounts than this derive no differences (they are no one's record)."""


def _within_record(own: list[_Fact]) -> list[_Fact]:
    """What one record's amounts state together.

    A quantity times a per-share amount (a trade's 5 × $177.35 = $886.75) and the
    difference of two of its amounts (total cash − settled cash = what is unsettled;
    total value − cash = what is invested), unless the record has a change of its own,
    or a field states it (price − previous close).
    """
    money = [f for f in own if f.kind == "money" and not f.change and not f.total]
    counts = [f for f in own if f.kind == "quantity"]
    out = [
        _Fact(q.value * m.value, "money", f"{m.name} × {q.name}", m.subjects, False,
              values=m.values, sources=m.sources | q.sources, product=True)
        for q in counts for m in money
    ]  # fmt: skip
    if len(money) <= _MONEY_PAIRS and not any(f.change for f in own):
        held = {round(f.value, 6) for f in own}  # a difference a field states is that field's
        out += [
            _Fact(a.value - b.value, "money", f"{a.name} − {b.name}", a.subjects, False,
                  terms=(*a.terms, *b.terms), values=a.values, sources=a.sources | b.sources)
            for a in money for b in money
            if a.value > b.value > 0 and round(a.value - b.value, 6) not in held
        ]  # fmt: skip
    return out


def _shares(facts: list[_Fact]) -> list[_Fact]:
    """Each part's share of its grand total, in percent.

    An account's total value of all accounts' ("the Roth IRA is 23.6% of your portfolio").
    """
    grand = {
        f.name: f
        for f in facts
        if f.total and not f.subjects and not f.excluding and f.kind == "money"
    }
    return [
        _Fact(f.value / grand[f.name].value * 100, "percent", f"share of {f.name}", f.subjects,
              False, sources=f.sources | grand[f.name].sources)
        for f in facts
        if f.name in grand and not f.total and f.subjects and grand[f.name].value
    ]  # fmt: skip


def _escaped(key: str) -> str:
    """A key as an RFC 6901 reference token (``~`` → ``~0``, ``/`` → ``~1``)."""
    return key.replace("~", "~0").replace("/", "~1")


def _subject_keys(record: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The subject fields of a record no schema describes, by their names (``infer_subject``)."""
    return [
        (key, kind)
        for key, item in record.items()
        if isinstance(item, str) and (kind := infer_subject(key)) is not None
    ]


@dataclass(slots=True)
class _Node:
    """One schema node, resolved once: what its values are and where its children are."""

    kind: str | None = None
    total: bool = False
    change: bool = False
    terms: tuple[str, ...] = ()
    """``x-terms`` of the node."""
    named: bool = False
    """``x-named``: its values back only sentences that name the field."""
    described: bool = False
    """The schema describes the node (a list's length is then said with its name)."""
    fact: bool = True
    """False (``x-fact: false``): a number about the call, not the data (a search's
    ranking score): no answer's figure is backed by it."""
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


def _compile(
    schema: Any, defs: Mapping[str, Any], seen: dict[int, tuple[Any, _Node]], name: str = ""
) -> _Node:
    """A node per resolved schema; a recursive schema's node refers to itself.

    A number without ``x-kind`` gets the kind its property ``name`` implies
    (``core.kinds.infer_kind``); a string without ``x-subject``, the subject its name
    implies (``infer_subject``).
    """
    resolved = _resolve(schema, defs)
    if not resolved:
        return _EMPTY
    hit = seen.get(id(resolved))
    if hit is not None and hit[0] is resolved:
        return hit[1]
    kind = resolved.get("x-kind")
    if kind is None and resolved.get("type") in ("number", "integer"):
        kind = infer_kind(name)
    node = _Node(
        kind=kind,
        total=bool(resolved.get("x-total")),
        change=bool(resolved.get("x-change")),
        terms=tuple(resolved.get("x-terms", ())),
        named=bool(resolved.get("x-named")),
        described=True,
        fact=resolved.get("x-fact") is not False,
    )
    seen[id(resolved)] = (resolved, node)
    for key, prop in resolved.get("properties", {}).items():
        child = _resolve(prop, defs)
        if child.get("x-cite"):
            node.cite_key = key
        subject = child.get("x-subject") or (
            infer_subject(key) if child.get("type") == "string" else None
        )
        if subject:
            target = node.label_keys if child.get("x-subject-label") else node.subject_keys
            target.append((key, subject))
        node.props[key] = _compile(prop, defs, seen, key)
    if "items" in resolved:
        node.items = _compile(resolved["items"], defs, seen, name)
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
