"""Bound claims: each figure an answer states, tied to the field it comes from (issue 29).

A claim is the span of the answer's text that states a figure, the result it comes from
(its ``source_id``) and an RFC 6901 JSON pointer into that result's ``data``; or a
derived figure, an ``op`` over such pointers. Checking a bound claim needs no guess of
which field a number refers to: the value at the pointer must be what the span says,
at the precision it is written with.

``ClaimWriter`` writes an answer with its claims bound by construction: each figure is
rendered through it, so its span and pointer are recorded as the text is made.

Example::

    writer = ClaimWriter()
    price = writer.figure("$228.42", "tool:quotes:v1", "/quotes/0/price", kind="money")
    markdown, claims = writer.finish(f"AAPL is at {price}.")
    # markdown == "AAPL is at $228.42."; claims[0].span == (11, 18)
    check_claims(markdown, claims, results)   # [] : no problem (results: the run's ToolResults)
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tooldeck.core.result import ToolResult

__all__ = [
    "Claim",
    "ClaimWriter",
    "Formula",
    "PointerError",
    "check_claims",
    "problems_of_claims",
    "read_marked",
    "resolve_pointer",
]

Op = Literal["sum", "product", "difference", "quotient", "percent_of", "abs", "count"]


class PointerError(LookupError):
    """A JSON pointer that does not lead to a value; the message says where it stops."""


class Formula(BaseModel):
    """A derived value: ``op`` over ``inputs``, rounded as the writer rounded it.

    An input is a JSON pointer into the claim's own result (``/quotes/0/price``), a
    pointer into the last successful result of another source, written as a URI
    fragment after its source id (``tool:quotes:v1#/quotes/0/price``, RFC 6901 §6),
    a nested formula (P/L is ``difference(product(q, price), product(q, cost))``), or a
    number the question gave ("10 shares": ``product(10, price)``; the grounding check
    holds it to the question's numbers).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    op: Op
    """``sum``; ``product``; ``difference`` (first minus the rest); ``quotient`` (first
    divided by the second: an average cost over accounts is the sum of quantity × cost
    over the sum of quantities); ``percent_of`` (first as a percentage of the second);
    ``abs`` (a change whose direction is said in words: "down $1.50"); ``count`` (the
    length of the list at the one input)."""
    inputs: tuple[str | float | Formula, ...]
    """What ``op`` is applied to (see the class docstring)."""
    decimals: int | None = None
    """The result rounded to this many decimals, as the writer computed it (cents: 2);
    None: not rounded."""


class Claim(BaseModel):
    """One figure or fact of an answer and where it comes from (the chat API's ``answer.claims``).

    Semantics: the value at ``pointer`` (or ``op`` over ``inputs``) in the result must
    be what ``span`` states. A number at the precision it is written with; a string
    value (a side, a status, a symbol, an account id) said as itself or by one of its
    display names; with ``kind="date"``, an ISO date equal to the value's date; with
    ``kind="sign"``, a direction word ("up", "gained", "down", "lost") whose sign is
    the number's; with ``kind="quote"``, words that stand in the text at the pointer
    (spacing aside; a trailing "…" marks where the quotation was cut).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    span: tuple[int, int]
    """``[start, end)`` character offsets of the figure in the answer's Markdown."""
    source_id: str
    """The source the figure comes from (what the answer cites)."""
    result: str | None = None
    """The ``request_id`` of the result (``metadata.request_id``) when several results
    of the run share the source_id; None: the run's last result of that source."""
    pointer: str | None = None
    """RFC 6901 pointer into that result's ``data`` (``/positions/0/quantity``); None for
    a derived figure."""
    op: Op | None = None
    """A derived figure: see ``Formula.op``."""
    inputs: tuple[str | float | Formula, ...] = Field(default=())
    """What ``op`` is applied to: see ``Formula.inputs``."""
    decimals: int | None = None
    """The derived figure's rounding: see ``Formula.decimals``."""
    kind: str | None = None
    """``money``, ``percent``, ``quantity`` (``core.kinds``), ``date``, ``time`` (the
    ``HH:MM`` of an ISO timestamp), ``sign``, ``quote`` (a passage of the text at the
    pointer), or None (a number or a string said as itself)."""

    def shifted(self, offset: int) -> Claim:
        """The same claim, its span moved by ``offset`` (the text was put after others)."""
        return self.model_copy(update={"span": (self.span[0] + offset, self.span[1] + offset)})

    def sources(self) -> set[str]:
        """Every source id the claim reads: its own and those its inputs name."""
        return {self.source_id} | {i.split("#", 1)[0] for i in self._leaves(str) if "#" in i}

    def literals(self) -> list[float]:
        """The numbers its formula takes from the question (``Formula.inputs``)."""
        return [float(i) for i in self._leaves(float)]

    def _leaves(self, kind: type) -> list[Any]:
        stack: list[str | float | Formula] = list(self.inputs)
        out = []
        while stack:
            item = stack.pop()
            if isinstance(item, Formula):
                stack.extend(item.inputs)
            elif isinstance(item, kind) and not isinstance(item, bool):
                out.append(item)
        return out


def resolve_pointer(data: Any, pointer: str) -> Any:
    """The value at ``pointer`` in ``data`` (RFC 6901: ``~1`` is ``/``, ``~0`` is ``~``).

    Raises:
        PointerError: a step names no key or index of the value it is applied to.
    """
    if pointer == "":
        return data
    if not pointer.startswith("/"):
        raise PointerError(f"{pointer!r} is not a JSON pointer (it starts with /)")
    value = data
    for step in _steps(pointer):
        if (type(value) is dict or isinstance(value, Mapping)) and step in value:  # dict: no ABC
            value = value[step]
        elif isinstance(value, Sequence) and not isinstance(value, str) and step.isdigit():
            index = int(step)
            if index >= len(value):
                raise PointerError(f"{pointer}: index {index} of a list of {len(value)}")
            value = value[index]
        else:
            raise PointerError(f"{pointer}: no {step!r} in {type(value).__name__}")
    return value


@functools.lru_cache(maxsize=4096)
def _steps(pointer: str) -> tuple[str, ...]:
    return tuple(raw.replace("~1", "/").replace("~0", "~") for raw in pointer[1:].split("/"))


_OPEN, _CLOSE = "\ue000", "\ue001"  # private-use characters: never in rendered text
_MARK = re.compile(f"{_OPEN}(\\d+){_CLOSE}")


class ClaimWriter:
    """Writes an answer with each figure bound to its source as it is written.

    ``figure`` returns a placeholder to put in the text (f-strings, joins); ``finish``
    replaces the placeholders with the figures and returns the text and its claims,
    their spans measured in the finished text.
    """

    def __init__(self) -> None:
        self._figures: list[tuple[str, dict[str, Any]]] = []

    def figure(
        self,
        rendered: str,
        source_id: str,
        pointer: str | None = None,
        *,
        kind: str | None = None,
        op: Op | None = None,
        inputs: Sequence[str | float | Formula] = (),
        decimals: int | None = None,
        result: str | None = None,
    ) -> str:
        """A placeholder for ``rendered`` (``$228.42``), bound to ``pointer`` in ``source_id``.

        A derived figure gives ``op`` over ``inputs`` instead, rounded to ``decimals``
        (see ``Formula``); ``result`` names the result by request id (``Claim.result``).
        """
        fields = {"source_id": source_id, "pointer": pointer, "kind": kind, "op": op,
                  "inputs": tuple(inputs), "decimals": decimals, "result": result}  # fmt: skip
        self._figures.append((rendered, fields))
        return f"{_OPEN}{len(self._figures) - 1}{_CLOSE}"

    def finish(self, text: str) -> tuple[str, list[Claim]]:
        """``text`` with its placeholders replaced, and one claim per figure in it."""
        return _splice(text, _MARK, lambda match: self._figures[int(match.group(1))])


def _splice(
    text: str,
    pattern: re.Pattern[str],
    figure_of: Callable[[re.Match[str]], tuple[str, dict[str, Any]]],
) -> tuple[str, list[Claim]]:
    """``text`` with each match of ``pattern`` replaced by its figure, and their claims.

    ``figure_of`` gives a match's rendered figure and its claim's fields; each claim's
    span is where the figure stands in the returned text.
    """
    out: list[str] = []
    claims: list[Claim] = []
    length = last = 0
    for match in pattern.finditer(text):
        before = text[last : match.start()]
        out.append(before)
        length += len(before)
        rendered, fields = figure_of(match)
        claims.append(Claim(span=(length, length + len(rendered)), **fields))
        out.append(rendered)
        length += len(rendered)
        last = match.end()
    out.append(text[last:])
    return "".join(out), claims


_MARKED = re.compile(r"\[([^\[\]\n]{1,80})\]\(claim:([A-Za-z][\w.:@-]*)#(/[^()\s]*)?\)")
"""A figure a model marked with where it took it from: ``[$228.42](claim:tool:quotes:v1#/quotes/0/price)``."""


def read_marked(text: str) -> tuple[str, list[Claim]]:
    """``text`` with its claim markers replaced by their figures, and one claim per marker.

    A model is asked to write each figure it takes from a tool result as a Markdown link
    to the field: ``[$228.42](claim:tool:quotes:v1#/quotes/0/price)``, the result's
    ``source_id``, ``#`` and the RFC 6901 pointer into its data. The figure stays in the
    text; the marker becomes a ``Claim`` the validator checks like the router's own.
    Malformed markers are left as written (and their numbers checked as unbound).
    """
    return _splice(
        text,
        _MARKED,
        lambda m: (m.group(1), {"source_id": m.group(2), "pointer": m.group(3) or ""}),
    )


_NUMBER = re.compile(r"[-+−]?\$?[-+−]?\d[\d,]*(?:\.(\d+))?")
_UP = frozenset({"up", "rose", "risen", "gained", "gain", "gains", "higher", "ahead", "earned",
                 "profit", "positive", "increased", "grew"})  # fmt: skip
_DOWN = frozenset({"down", "fell", "fallen", "lost", "loss", "losses", "lower", "behind",
                   "negative", "decreased", "dropped", "declined"})  # fmt: skip
"""Direction words a ``sign`` claim may state (the number's sign must agree)."""


def _stated(text: str) -> tuple[float, float] | None:
    """The number a span states and the tolerance its written precision implies."""
    match = _NUMBER.search(text)
    if match is None:
        return None
    written = match.group(0).replace("$", "").replace(",", "").replace("−", "-")
    negative = written.count("-") % 2 == 1
    value = float(written.replace("-", "").replace("+", ""))
    decimals = len(match.group(1) or "")
    return (-value if negative else value), 0.5 * 10.0**-decimals


class _Results:
    """The run's successful results, found by request id or by source id (the last)."""

    def __init__(self, results: Sequence[ToolResult]) -> None:
        ok = [r for r in results if r.success]
        self.by_source = {r.source_id: r for r in ok if r.source_id}
        self.all_of: dict[str, list[ToolResult]] = {}
        """Every result of each source, in order (a run may call a tool twice)."""
        for r in ok:
            if r.source_id:
                self.all_of.setdefault(r.source_id, []).append(r)
        self.by_id = {r.metadata.request_id: r for r in ok if r.metadata.request_id}
        self._derived: dict[tuple[int, int], float] = {}

    def value(self, own: ToolResult, ref: str | float | Formula) -> Any:
        """The value an input names: a pointer, ``<source_id>#<pointer>``, a formula, a number."""
        if isinstance(ref, Formula):  # a formula shared by several claims is derived once
            key = (id(own), id(ref))
            if key not in self._derived:
                self._derived[key] = self.derive(own, ref.op, ref.inputs, ref.decimals)
            return self._derived[key]
        if isinstance(ref, int | float):
            return float(ref)
        if ref.startswith("/") or ref == "":
            return resolve_pointer(own.data, ref)
        source, _, pointer = ref.partition("#")
        other = self.by_source.get(source)
        if other is None:
            raise PointerError(f"{ref}: {source} is not a result of this run")
        return resolve_pointer(other.data, pointer)

    def derive(
        self,
        own: ToolResult,
        op: Op,
        inputs: Sequence[str | float | Formula],
        decimals: int | None,
    ) -> float:
        if op == "count":
            listed = self.value(own, inputs[0])
            if not isinstance(listed, list | dict):
                raise TypeError(f"count of {inputs[0]}: not a list")
            return float(len(listed))
        values = [_number_at(self.value(own, i), i) for i in inputs]
        if op == "sum":
            out = math.fsum(values)
        elif op == "product":
            out = math.prod(values)
        elif op == "difference":
            out = values[0] - math.fsum(values[1:])
        elif op == "abs":
            out = abs(values[0])
        elif op == "quotient":
            out = values[0] / values[1]
        else:  # percent_of
            out = values[0] / values[1] * 100.0
        return out if decimals is None else round(out, decimals)


def _number_at(value: Any, where: str | float | Formula) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{_show(where)} is {value!r}, not a number")
    return float(value)


def _show(ref: str | float | Formula) -> str:
    if isinstance(ref, Formula):
        return f"{ref.op}({', '.join(_show(i) for i in ref.inputs)})"
    return ref if isinstance(ref, str) else f"{ref:g}"


def _words(text: str) -> str:
    return " ".join(text.lower().replace("_", " ").replace("-", " ").split())


def _check_text(said: str, actual: Any, claim: Claim, aliases: Mapping[str, str]) -> str | None:
    """Why ``said`` does not state the non-numeric ``actual``, or None when it does."""
    if claim.kind == "sign":
        number = _number_at(actual, claim.pointer or "")
        word = _words(said).split()[-1] if said.strip() else ""
        if (word in _UP and number >= 0) or (word in _DOWN and number < 0):
            return None
        if word not in _UP | _DOWN:
            return f"{word!r} is not a direction word"
        return f"says {word!r}; the value is {number:g}"
    if not isinstance(actual, str):
        return f"says {said!r}; the value is {actual!r}, not text"
    if claim.kind == "quote":  # a document's words, quoted: they must stand in its text
        words = " ".join(said.split()).removesuffix("…").rstrip()
        if words and words in " ".join(actual.split()):
            return None
        return f"quotes {words[:60]!r}, which is not in the text there"
    if claim.kind == "date":
        return None if actual[:10] == said.strip() else f"says {said!r}; the date is {actual[:10]}"
    if claim.kind == "time":  # the time of day of an ISO timestamp, as written in it
        time = actual[11:16]
        return None if time == said.strip() else f"says {said!r}; the time is {time or 'none'}"
    words = _words(said)
    if words == _words(actual) or _words(aliases.get(words, "")) == _words(actual):
        return None
    return f"says {said!r}; the value is {actual!r}"


def check_claims(
    markdown: str,
    claims: Sequence[Claim],
    results: Sequence[ToolResult],
    aliases: Mapping[str, str] | None = None,
) -> list[str]:
    """The problems of ``claims`` against the run's ``results``; [] when none.

    Each claim's span must be in ``markdown``; its result (by ``result``, else the last
    successful one of its ``source_id``) must be among ``results``; its pointer (or each
    input of a derived figure) must resolve; and the value there must be what the span
    states (see ``Claim``): a number within the written precision (``$228.42`` accepts
    228.415 to 228.425), a string as itself or through ``aliases`` (a display name,
    lower-case, to the value it names: ``{"joint account": "joint"}``).
    """
    return [
        p for problems in problems_of_claims(markdown, claims, results, aliases) for p in problems
    ]


def problems_of_claims(
    markdown: str,
    claims: Sequence[Claim],
    results: Sequence[ToolResult],
    aliases: Mapping[str, str] | None = None,
) -> list[list[str]]:
    """``check_claims``, one list of problems per claim (in the order of ``claims``)."""
    found = _Results(results)
    names = {_words(k): v for k, v in (aliases or {}).items()}
    return [_problems(markdown, claim, found, names) for claim in claims]


def _problems(markdown: str, claim: Claim, found: _Results, names: Mapping[str, str]) -> list[str]:
    """A claim's problems; [] when it holds.

    A claim naming only its source holds when any result of that source holds it (a
    run that asked for two periods has two ``tool:performance:v1``).
    """
    others = found.all_of.get(claim.source_id, [])[:-1] if claim.result is None else []
    problems = _problems_in(markdown, claim, found, names, None)
    for other in others if problems else ():
        if not _problems_in(markdown, claim, found, names, other):
            return []
    return problems


def _problems_in(
    markdown: str, claim: Claim, found: _Results, names: Mapping[str, str],
    result: ToolResult | None,
) -> list[str]:  # fmt: skip
    start, end = claim.span
    said = markdown[start:end]
    where = f"{said!r} at {start}"
    if not 0 <= start < end <= len(markdown):
        return [f"claim span {claim.span} is outside the answer"]
    if result is None:
        result = (
            found.by_id.get(claim.result) if claim.result else found.by_source.get(claim.source_id)
        )
    if result is None or not (
        result.source_id == claim.source_id or (claim.result and _drawn_from(result, claim))
    ):
        return [f"{where}: {claim.source_id} is not a result of this run"]
    try:
        if claim.op is not None:
            actual: Any = found.derive(result, claim.op, claim.inputs, claim.decimals)
        elif claim.pointer is not None:
            actual = resolve_pointer(result.data, claim.pointer)
        else:
            return [f"{where}: the claim has neither a pointer nor an op"]
        if isinstance(actual, str) or claim.kind in ("sign", "date", "time"):
            why = _check_text(said, actual, claim, names)
            return [] if why is None else [f"{where} {why} ({claim.source_id}{_target(claim)})"]
        value = _number_at(actual, claim.pointer or claim.op or "")
    except (PointerError, TypeError, ValueError, ZeroDivisionError, IndexError) as exc:
        return [f"{where}: {exc}"]
    stated = _stated(said)
    if stated is None:
        return [f"{where} states no number"]
    number, tolerance = stated
    if number > 0 and value < 0 and _said_down(markdown, start, end):
        number = -number  # "down [$2.42]", "($2.42)": the sign is in the words
    if abs(number - value) > tolerance + 1e-9 * max(1.0, abs(value)):
        return [f"{where} says {number:g}; {claim.source_id}{_target(claim)} is {value:g}"]
    return []


def _said_down(markdown: str, start: int, end: int) -> bool:
    """Whether an unsigned figure is said as a fall.

    A direction word just before it ("down", "fell"), just after it ("lower than"), or
    accounting parentheses ("($2.51)").
    """
    before = re.findall(r"[a-z]+", markdown[max(0, start - 30) : start].lower())[-3:]
    after = re.findall(r"[a-z]+", markdown[end : end + 20].lower())[:1]
    if markdown[:start].rstrip().endswith("(") and markdown[end:].lstrip().startswith(")"):
        return not (set(before) & _UP)  # "($2.51)", but "up $2.51 (1.1%)" is not
    return bool(set(before) & _DOWN or set(after) & {"lower", "less", "below", "under"})


def _drawn_from(result: ToolResult, claim: Claim) -> bool:
    """Whether the records a claim reads, in a result of several sources, are ``source_id``'s.

    A result drawn from several sources (the user's calendar and weather) has no single
    ``source_id``; its records name theirs (``source_id``, or a ``source_ids`` list: the
    ``x-cite`` fields). Each pointer the claim reads must pass through a record that names
    the claim's source.
    """
    pointers = [claim.pointer] if claim.pointer is not None else claim._leaves(str)
    return bool(pointers) and all(
        p.startswith("/") and _names(result.data, p, claim.source_id) for p in pointers
    )


def _names(data: Any, pointer: str, source_id: str) -> bool:
    value = data
    for step in ("", *_steps(pointer)):
        if step:
            try:
                value = value[int(step)] if isinstance(value, list) else value[step]
            except (KeyError, IndexError, ValueError, TypeError):
                return False
        if isinstance(value, Mapping) and (
            value.get("source_id") == source_id or source_id in (value.get("source_ids") or ())
        ):
            return True
    return False


def _target(claim: Claim) -> str:
    """Where a claim's value comes from, as a message says it: a pointer or a formula."""
    if claim.pointer is not None:
        return claim.pointer
    return f"{claim.op}({', '.join(_show(i) for i in claim.inputs)})"
