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

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tooldeck.core.result import ToolResult

__all__ = ["Claim", "ClaimWriter", "PointerError", "check_claims", "resolve_pointer"]

Op = Literal["sum", "product", "difference", "percent_of", "abs"]


class PointerError(LookupError):
    """A JSON pointer that does not lead to a value; the message says where it stops."""


class Claim(BaseModel):
    """One figure of an answer and where it comes from (part of the chat API: ``answer.claims``)."""

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
    """A derived figure: the sum, product, first minus the rest, first as a percentage
    of the second, or the absolute value (a change written with its direction as a
    word: "down $1.50"), of the values at ``inputs``."""
    inputs: tuple[str, ...] = Field(default=())
    """The pointers ``op`` is applied to (into the same result)."""
    kind: str | None = None
    """``money``, ``percent``, ``quantity`` (``core.kinds``), or None."""

    def shifted(self, offset: int) -> Claim:
        """The same claim, its span moved by ``offset`` (the text was put after others)."""
        return self.model_copy(update={"span": (self.span[0] + offset, self.span[1] + offset)})


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
    for raw in pointer[1:].split("/"):
        step = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(value, Mapping) and step in value:
            value = value[step]
        elif isinstance(value, Sequence) and not isinstance(value, str) and step.isdigit():
            index = int(step)
            if index >= len(value):
                raise PointerError(f"{pointer}: index {index} of a list of {len(value)}")
            value = value[index]
        else:
            raise PointerError(f"{pointer}: no {step!r} in {type(value).__name__}")
    return value


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
        inputs: Sequence[str] = (),
    ) -> str:
        """A placeholder for ``rendered`` (``$228.42``), bound to ``pointer`` in ``source_id``."""
        fields = {"source_id": source_id, "pointer": pointer, "kind": kind, "op": op,
                  "inputs": tuple(inputs)}  # fmt: skip
        self._figures.append((rendered, fields))
        return f"{_OPEN}{len(self._figures) - 1}{_CLOSE}"

    def finish(self, text: str) -> tuple[str, list[Claim]]:
        """``text`` with its placeholders replaced, and one claim per figure in it."""
        out: list[str] = []
        claims: list[Claim] = []
        length = last = 0
        for match in _MARK.finditer(text):
            before = text[last : match.start()]
            out.append(before)
            length += len(before)
            rendered, fields = self._figures[int(match.group(1))]
            claims.append(Claim(span=(length, length + len(rendered)), **fields))
            out.append(rendered)
            length += len(rendered)
            last = match.end()
        out.append(text[last:])
        return "".join(out), claims


_NUMBER = re.compile(r"[-+−]?\$?[-+−]?\d[\d,]*(?:\.(\d+))?")


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


def _derived(op: Op, values: Sequence[float]) -> float:
    if op == "sum":
        return math.fsum(values)
    if op == "product":
        return math.prod(values)
    if op == "difference":
        return values[0] - math.fsum(values[1:])
    if op == "abs":
        return abs(values[0])
    return values[0] / values[1] * 100.0  # percent_of


def check_claims(
    markdown: str, claims: Sequence[Claim], results: Sequence[ToolResult]
) -> list[str]:
    """The problems of ``claims`` against the run's ``results``; [] when none.

    Each claim's span must be in ``markdown`` and state a number; its result (by
    ``result``, else the last successful one of its ``source_id``) must be among
    ``results``; its pointer (or each input of a derived figure) must resolve to a
    number; and that number (or the derived one) must equal the stated one within the
    written precision (``$228.42`` accepts 228.415 to 228.425).
    """
    by_source = {r.source_id: r for r in results if r.success and r.source_id}
    by_id = {r.metadata.request_id: r for r in results if r.success and r.metadata.request_id}
    problems = []
    for claim in claims:
        start, end = claim.span
        said = markdown[start:end]
        where = f"{said!r} at {start}"
        if not 0 <= start < end <= len(markdown):
            problems.append(f"claim span {claim.span} is outside the answer")
            continue
        stated = _stated(said)
        if stated is None:
            problems.append(f"{where} states no number")
            continue
        result = by_id.get(claim.result) if claim.result else by_source.get(claim.source_id)
        if result is None or result.source_id != claim.source_id:
            problems.append(f"{where}: {claim.source_id} is not a result of this run")
            continue
        try:
            if claim.op is not None:
                values = [float(resolve_pointer(result.data, p)) for p in claim.inputs]
                actual = _derived(claim.op, values)
            elif claim.pointer is not None:
                actual = float(resolve_pointer(result.data, claim.pointer))
            else:
                problems.append(f"{where}: the claim has neither a pointer nor an op")
                continue
        except (PointerError, TypeError, ValueError, ZeroDivisionError, IndexError) as exc:
            problems.append(f"{where}: {exc}")
            continue
        value, tolerance = stated
        if abs(value - actual) > tolerance + 1e-9 * max(1.0, abs(actual)):
            target = claim.pointer or f"{claim.op}({', '.join(claim.inputs)})"
            problems.append(f"{where} says {value:g}; {claim.source_id}{target} is {actual:g}")
    return problems
