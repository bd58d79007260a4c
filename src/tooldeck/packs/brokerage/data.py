"""The brokerage data file: Pydantic models and a loader cached by file mtime (seed 004).

A malformed file gives ``DataPackError`` naming the file, the section and the field;
an edited file is reloaded on the next call (hot reload).
"""

from __future__ import annotations

import functools
import json
import os
import threading
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tooldeck.core.kinds import Kind, Money, MoneyChange, PercentChange, Quantity, Subject
from tooldeck.exceptions import DataPackError

__all__ = [
    "ASSET_CLASSES",
    "DEFAULT_DATA_PATH",
    "EXAMPLE_DATA",
    "TIMEFRAMES",
    "Account",
    "AccountSummary",
    "BrokerageData",
    "BrokerageDataSource",
    "Fact",
    "PerformancePoint",
    "Position",
    "Quote",
    "Trade",
    "Transfer",
    "shipped_examples",
]

DEFAULT_DATA_PATH = Path(__file__).parent / "data" / "brokerage.json"
"""The data file shipped with the package."""
EXAMPLE_DATA = "Example data: a demo portfolio shipped with tooldeck, not the user's accounts"
"""What the example file's tool descriptions, results and answers say of it (issue 54)."""
EXAMPLES_PATH = Path(__file__).parent / "data" / "examples.tsv"
"""Labelled questions (``question<TAB>intent`` per line) for the router's second reading;
written from ``tests/packs/router_questions.py`` (``python tests/packs/router_questions.py``)."""


@functools.cache
def shipped_examples() -> tuple[tuple[str, str], ...]:
    """The labelled questions of ``EXAMPLES_PATH`` as ``(question, intent)`` pairs."""
    lines = EXAMPLES_PATH.read_text(encoding="utf-8").splitlines()
    return tuple((q, i) for q, _, i in (line.partition("\t") for line in lines) if q and i)


AssetClass = Literal["stocks", "etf", "bonds", "cash"]
ASSET_CLASSES: tuple[str, ...] = ("stocks", "etf", "bonds", "cash")
Timeframe = Literal["1D", "1W", "1M", "3M", "YTD", "1Y", "ALL"]
TIMEFRAMES: tuple[str, ...] = ("1D", "1W", "1M", "3M", "YTD", "1Y", "ALL")


_PRICE = ("trades at", "trading at", "is at", "quoted at", "priced at")
_CLOSE = ("closed at", "close", "yesterday")
_START = ("start", "started", "starting", "began", "went from", "a week ago")
_COST_BASIS = ("average cost", "bought at", "paid")
_RETURN = ("return", "returned", "performance")

AccountId = Annotated[str, Subject("account")]
"""An account id: the subject of the record that holds it."""
Symbol = Annotated[str, Subject("symbol")]
"""A ticker symbol: the subject of the record that holds it."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Account(_Model):
    """An account: id used in calls, display name, type."""

    id: str
    name: str
    type: str


class Quote(_Model):
    """Latest market quote of a symbol (prices in ``currency``)."""

    symbol: Symbol
    name: Annotated[str, Subject("symbol", label=True)]
    asset_class: AssetClass
    price: Annotated[float, Kind("money", terms=_PRICE)] = Field(gt=0)
    previous_close: Annotated[float, Kind("money", terms=_CLOSE, named=True)] = Field(gt=0)
    change: MoneyChange
    change_pct: PercentChange
    currency: str = "USD"


class Position(_Model):
    """A holding: ``quantity`` shares bought at ``cost_basis`` per share on average."""

    account: AccountId
    symbol: Symbol
    quantity: Quantity
    cost_basis: Annotated[float, Kind("money", terms=_COST_BASIS)] = Field(ge=0)
    asset_class: AssetClass


class Trade(_Model):
    """A buy or sell in an account."""

    account: AccountId
    timestamp: Annotated[str, Subject("date")]
    symbol: Symbol
    side: Literal["BUY", "SELL"]
    quantity: Quantity = Field(gt=0)
    price: Money = Field(gt=0)


class Transfer(_Model):
    """A deposit or withdrawal of cash."""

    account: AccountId
    timestamp: Annotated[str, Subject("date")]
    type: Literal["deposit", "withdrawal"]
    method: str
    amount: Money = Field(gt=0)
    status: Literal["completed", "pending", "failed"]


class PerformancePoint(_Model):
    """An account's return over one timeframe (amounts in USD, return in percent)."""

    account: AccountId
    timeframe: Timeframe
    return_pct: Annotated[float, Kind("percent", change=True, terms=_RETURN)]
    return_amount: Annotated[float, Kind("money", change=True, terms=_RETURN)]
    start_value: Annotated[float, Kind("money", terms=_START, named=True)]
    end_value: Money
    net_contributions: Annotated[float, Kind("money", terms=("contributions", "contributed"))]


class AccountSummary(_Model):
    """An account's value and cash (USD)."""

    account: AccountId
    market_value: Annotated[float, Kind("money", terms=("invested",))]
    total_cash: Annotated[float, Kind("money", terms=("cash",))]
    settled_cash: Annotated[float, Kind("money", terms=("settled",))]
    total_value: Annotated[float, Kind("money", terms=("worth",))]


class Fact(_Model):
    """An educational snippet: ``file`` is relative to the data file's folder."""

    id: str
    title: str
    file: str
    keywords: list[str]


class _QuotesSection(_Model):
    as_of: str
    quotes: list[Quote]


class _PositionsSection(_Model):
    as_of: str
    positions: list[Position]


class _ActivitySection(_Model):
    as_of: str
    trades: list[Trade]


class _TransfersSection(_Model):
    as_of: str
    transfers: list[Transfer]


class _PerformanceSection(_Model):
    as_of: str
    performance: list[PerformancePoint]


class _SummarySection(_Model):
    as_of: str
    accounts: list[AccountSummary]


class _FactsSection(_Model):
    as_of: str
    facts: list[Fact]


class BrokerageData(_Model):
    """The whole data file: accounts and one section per domain, each with its ``as_of``."""

    as_of: str
    accounts: list[Account]
    quotes: _QuotesSection
    positions: _PositionsSection
    activity: _ActivitySection
    transfers: _TransfersSection
    performance: _PerformanceSection
    account_summary: _SummarySection
    facts: _FactsSection

    def account_ids(self) -> list[str]:
        """Ids of the accounts, in file order."""
        return [a.id for a in self.accounts]

    def symbols(self) -> list[str]:
        """Symbols with a quote or a position, sorted."""
        return sorted(
            {q.symbol for q in self.quotes.quotes} | {p.symbol for p in self.positions.positions}
        )


class BrokerageDataSource:
    """Loads ``BrokerageData`` from a JSON file, reloading when its mtime changes.

    Args:
        path: The data file (default: the one shipped with the package).

    Semantics:
        ``load()`` stats the file on every call (~1 µs) and parses it only when the
        modification time or size changed. Thread-safe.

    Raises (from ``load``):
        DataPackError: the file is missing, not JSON, or does not match the models;
            the message names the file, section and field.
    """

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path is not None else DEFAULT_DATA_PATH
        self.example = self.path.resolve() == DEFAULT_DATA_PATH.resolve()
        """Whether this is the example file shipped with tooldeck, not the user's accounts:
        its results and answers say so (issue 54); a copy of it elsewhere is a user's file."""
        self._stamp: tuple[int, int] | None = None
        self._data: BrokerageData | None = None
        self._lock = threading.Lock()

    def load(self) -> BrokerageData:
        """The current data, parsed again only if the file changed."""
        try:
            st = os.stat(self.path)
        except OSError as exc:
            raise DataPackError(
                f"brokerage data file {self.path} cannot be read: {exc.strerror}"
            ) from None
        stamp = (st.st_mtime_ns, st.st_size)
        data = self._data
        if data is not None and stamp == self._stamp:
            return data
        with self._lock:
            if self._data is None or stamp != self._stamp:
                self._data = self._parse()
                self._stamp = stamp
            return self._data

    def _parse(self) -> BrokerageData:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise DataPackError(f"brokerage data file {self.path} cannot be read: {exc}") from None
        except json.JSONDecodeError as exc:
            raise DataPackError(
                f"brokerage data file {self.path} is not valid JSON: {exc.msg} "
                f"at line {exc.lineno} column {exc.colno}"
            ) from None
        try:
            return BrokerageData.model_validate(raw)
        except ValidationError as exc:
            problems = []
            for err in exc.errors(include_url=False)[:5]:
                loc = [str(p) for p in err["loc"]]
                section = loc[0] if loc else "(top level)"
                field = ".".join(loc[1:]) or "(section)"
                problems.append(f"section {section!r}, field {field!r}: {err['msg']}")
            raise DataPackError(
                f"brokerage data file {self.path} is malformed: " + "; ".join(problems)
            ) from None

    def fact_text(self, fact: Fact) -> str:
        """The markdown of ``fact``, read from beside the data file.

        Raises:
            DataPackError: the fact's file is missing.
        """
        path = self.path.parent / fact.file
        try:
            return path.read_text(encoding="utf-8")
        except OSError as exc:
            raise DataPackError(
                f"fact file {path} (fact {fact.id!r}) cannot be read: {exc.strerror}"
            ) from None
