"""What a number of a tool's response is: money, a percentage, a quantity; whose it is.

Markers for response models, kept in the output JSON Schema, where the grounding
validator reads them: a figure an answer states as money is matched only against money
fields, one stated for AAPL only against AAPL's records, a "total" only against totals.

Example::

    class Quote(BaseModel):
        symbol: Annotated[str, Subject("symbol")]         # "x-subject": "symbol"
        name: Annotated[str, Subject("symbol", label=True)]  # a display name of it
        price: Money                                      # "x-kind": "money"
        change_pct: Percent                               # "x-kind": "percent"

JSON Schema keys (any tool, MCP ones included, may carry them): ``x-kind`` (``money``,
``percent``, ``quantity``), ``x-change: true`` (a change or a return, which has a
direction, rather than a level), ``x-terms`` (words that name the field in an answer,
besides its own name: ``["trades at", "is at"]`` for a price), ``x-total: true`` (a sum
over several subjects' records), ``x-subject`` (the field names the record's subject
of that type, e.g. ``symbol``, ``account``) and ``x-subject-label: true`` (a display
name of that subject, e.g. "Apple Inc."), ``x-cite: true`` (the record's own source id,
citable on its own), ``x-fact: false`` (a number about the call, not the data, such as
a search's ranking score: it backs no figure of an answer).

A field without ``x-kind`` gets one inferred from its name (``infer_kind``: ``price``,
``*_value``, ``balance`` are money; ``*_pct``, ``rate`` percentages; ``quantity``,
``*_count``, ``minutes`` quantities), and a string field named ``symbol``, ``ticker``
or ``account`` names its record's subject (``infer_subject``). A number whose field has
no kind, given or inferred, cannot be verified by the grounding validator: an answer
stating it must bind it to its field (``core.claims``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated

from pydantic import GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

__all__ = [
    "KINDS",
    "Cite",
    "Kind",
    "Money",
    "MoneyChange",
    "MoneyTotal",
    "Percent",
    "PercentChange",
    "Quantity",
    "Subject",
    "Terms",
    "infer_kind",
    "infer_subject",
]

KINDS = ("money", "percent", "quantity")
"""The kinds a number can be marked with."""


@dataclass(frozen=True, slots=True)
class Kind:
    """Marks a number field: ``Annotated[float, Kind("money")]``.

    Args:
        name: One of ``KINDS``.
        total: The value sums several subjects' records (all accounts' deposits).
        change: A change or a return (it has a direction: "up 1.1%"), not a level.
        terms: Words that name the field in an answer besides its own name ("previous
            close" names ``previous_close`` already): a number stated with words of
            another field's terms does not match this one.
        named: The field backs a figure only where the sentence names it (its name or
            terms): a previous close or a period's start value is never "the price"
            or "the value" (issue 54: "up 4.06% to $141.02" stated the previous close).

    Raises:
        ValueError: ``name`` is not one of ``KINDS``.
    """

    name: str
    total: bool = False
    change: bool = False
    terms: tuple[str, ...] = ()
    named: bool = False

    def __post_init__(self) -> None:
        if self.name not in KINDS:
            raise ValueError(f"unknown kind {self.name!r}; kinds: {', '.join(KINDS)}")

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler(core_schema)
        schema["x-kind"] = self.name
        if self.total:
            schema["x-total"] = True
        if self.change:
            schema["x-change"] = True
        if self.terms:
            schema["x-terms"] = list(self.terms)
        if self.named:
            schema["x-named"] = True
        return schema


@dataclass(frozen=True, slots=True)
class Subject:
    """Marks a string field naming its record's subject: ``Annotated[str, Subject("account")]``.

    Args:
        type: What kind of subject (``symbol``, ``account``, ...): one of each type per
            record.
        label: The field is a display name ("Apple Inc.") rather than the id.
    """

    type: str
    label: bool = False

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler(core_schema)
        schema["x-subject"] = self.type
        if self.label:
            schema["x-subject-label"] = True
        return schema


@dataclass(frozen=True, slots=True)
class Terms:
    """Words that name a field in an answer: ``Annotated[list[Position], Terms("holdings")]``.

    For a list, they name its length ("5 holdings"); a number field takes them in
    ``Kind(terms=...)``.
    """

    words: tuple[str, ...]

    def __init__(self, *words: str) -> None:
        object.__setattr__(self, "words", words)

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler(core_schema)
        schema["x-terms"] = list(self.words)
        return schema


@dataclass(frozen=True, slots=True)
class Cite:
    """Marks a record's own source id: ``Annotated[str, Cite()]`` (``x-cite``).

    A search result listing blocks of several documents gives each its
    ``doc:<id>@v<n>``: an answer may cite that id, and the validator then checks the
    answer against that record only. A record drawn from several sources lists them
    (``Annotated[list[str], Cite()]``): citing any of them cites the record.
    """

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler(core_schema)
        schema["x-cite"] = True
        return schema


Money = Annotated[float, Kind("money")]
"""An amount of money, in the record's currency."""
MoneyTotal = Annotated[float, Kind("money", total=True)]
"""An amount of money summed over several subjects."""
Percent = Annotated[float, Kind("percent")]
"""A percentage, in percent (1.5 means 1.5 %)."""
MoneyChange = Annotated[float, Kind("money", change=True)]
"""A change of an amount of money (a gain, a loss, a return): it has a direction."""
PercentChange = Annotated[float, Kind("percent", change=True)]
"""A change in percent: it has a direction."""
Quantity = Annotated[float, Kind("quantity")]
"""A count of units (shares)."""


_INFERRED: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("percent", re.compile(r"(?:^|_)(?:pct|percent|percentage|rate|yield|apr|apy)(?:_|$)")),
    ("money", re.compile(
        r"(?:^|_)(?:price|prices|cost|costs|value|amount|balance|cash|fee|fees|paid|proceeds|"
        r"revenue|income|spend|spent|spending|budget|salary|usd|eur|gbp|dollars|pnl|"
        r"gain|loss|profit|basis|equity|net_worth|close)(?:_|$)"
    )),
    ("quantity", re.compile(
        r"(?:^|_)(?:quantity|qty|shares|units|count|number|num|total_count|minutes|hours|"
        r"seconds|days|km|miles|meters|items|records|pages|size|length)(?:_|$)"
    )),
)  # fmt: skip
"""Field-name rules for ``infer_kind``, tried in order (``change_pct`` is a percentage)."""
_SUBJECTS = {"symbol": "symbol", "ticker": "symbol", "account": "account",
             "account_id": "account"}  # fmt: skip


def infer_kind(name: str) -> str | None:
    """The kind a number field's name implies (``_INFERRED``), or None when it implies none.

    ``price``, ``market_value``, ``total_cash`` → ``money``; ``change_pct``, ``rate`` →
    ``percent``; ``quantity``, ``page_count``, ``minutes`` → ``quantity``; ``score``,
    ``version``, ``temp`` → None. Explicit ``x-kind`` always wins over inference.
    """
    key = name.lower()
    return next((kind for kind, rule in _INFERRED if rule.search(key)), None)


def infer_subject(name: str) -> str | None:
    """The subject type a string field's name implies (``symbol``, ``account``), or None."""
    return _SUBJECTS.get(name.lower())
