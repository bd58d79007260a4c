"""The brokerage tools (seed 004), with its known limitations fixed.

Each tool reads the shared ``BrokerageDataSource``, answers with a typed response that
carries ``as_of``, and a ``source_id`` of the form ``tool:<domain>:v1``. ``account``
filters (by id or name, any case); ``symbol`` filters; unknown symbols, accounts and
topics are ``validation`` errors that list what exists. All are pure in-memory reads:
``blocking = False`` (no worker thread), read-only, idempotent, closed-world.
"""

from __future__ import annotations

import inspect
import re
from datetime import date
from difflib import SequenceMatcher
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, Field, field_validator

from tooldeck.core.context import ToolContext
from tooldeck.core.dates import Day
from tooldeck.core.definition import ToolAnnotations
from tooldeck.core.kinds import Kind, Subject, Terms
from tooldeck.core.names import closest_names
from tooldeck.core.result import ToolResult
from tooldeck.core.tool import BaseTool
from tooldeck.exceptions import InvalidArgumentsError
from tooldeck.packs.brokerage.data import (
    EXAMPLE_DATA,
    AccountSummary,
    AssetClass,
    BrokerageData,
    BrokerageDataSource,
    PerformancePoint,
    Position,
    Quote,
    Timeframe,
    Trade,
    Transfer,
)

__all__ = [
    "GetAccountSummary",
    "GetActivity",
    "GetFacts",
    "GetPerformance",
    "GetPositions",
    "GetPositionsList",
    "GetQuotes",
    "GetTransfers",
    "brokerage_tools",
]

_READ_ONLY = ToolAnnotations(read_only=True, idempotent=True, open_world=False, destructive=False)

TReq = TypeVar("TReq", bound=BaseModel)
TResp = TypeVar("TResp", bound=BaseModel)

_SYMBOL_CHARS = 16
_NAME_CHARS = 64
"""Input bounds: the tools run inline (``blocking = False``), so their work must stay
proportional to small inputs (fuzzy matching is quadratic in the text's length)."""
AccountFilter = Annotated[str | None, Subject("account")]
"""The account filter a response applied: its totals are that account's."""
_ACCOUNT = "Account id or name (e.g. 'individual', 'Roth IRA'); omit for all accounts."


class _Symbol(BaseModel):
    @field_validator("symbol", "symbols", mode="before", check_fields=False)
    @classmethod
    def _upper(cls, value: Any) -> Any:
        if isinstance(value, str):
            return value.strip().upper()
        if isinstance(value, list):
            return [v.strip().upper() if isinstance(v, str) else v for v in value]
        return value


class _BrokerageTool(BaseTool[TReq, TResp], Generic[TReq, TResp]):
    blocking = False
    annotations = _READ_ONLY
    tags: tuple[str, ...] = ("brokerage",)
    labels = ("private",)  # the user's holdings and money (providers.flow)

    def __init__(self, source: BrokerageDataSource | None = None) -> None:
        self.source = source or BrokerageDataSource()
        self.example = self.source.example
        self._custom_format = self.example  # the user's own file keeps BaseTool's fast path
        if self.example:  # issue 54: never read as the user's own accounts
            self.description = f"{EXAMPLE_DATA}. {inspect.getdoc(type(self))}"
            self.tags = (*self.tags, "example-data")

    def build_output_schema(self) -> dict[str, Any] | None:
        """The response's schema, with ``example_data`` when the data is the example."""
        schema = super().build_output_schema()
        if self.example and schema is not None:
            about = {"type": "boolean", "const": True, "description": EXAMPLE_DATA}
            schema["properties"] = {**schema.get("properties", {}), "example_data": about}
        return schema

    def format_output(self, response: TResp) -> ToolResult:
        """The response's envelope; ``data.example_data`` is true on the example file.

        Called for the example file only (``_custom_format``, set per instance): a call
        on the user's own file takes ``BaseTool.execute``'s direct path.
        """
        result = super().format_output(response)
        if self.example and isinstance(result.data, dict):
            result.data["example_data"] = True
        return result

    def account_id(self, data: BrokerageData, account: str | None) -> str | None:
        """The account id for an id or name (any case), None for all accounts.

        Raises:
            InvalidArgumentsError: no such account; the message lists the accounts.
        """
        if account is None or not account.strip():
            return None
        wanted = account.strip().lower()
        for acct in data.accounts:
            if wanted in (acct.id.lower(), acct.name.lower()):
                return acct.id
        listing = ", ".join(f"{a.id} ({a.name})" for a in data.accounts)
        raise InvalidArgumentsError(
            f"Unknown account {account!r}. Accounts: {listing}.",
            details={"field": "account", "allowed": data.account_ids()},
        )

    def check_symbols(self, data: BrokerageData, symbols: list[str]) -> None:
        """Raise ``InvalidArgumentsError`` for symbols the data does not know, with suggestions."""
        known = data.symbols()
        unknown = [s for s in symbols if s not in known]
        if unknown:
            hints = {s: closest_names(s, known) for s in unknown}
            said = ", ".join(
                f"{s!r}" + (f" (did you mean {hints[s][0]!r}?)" if hints[s] else "")
                for s in unknown
            )
            raise InvalidArgumentsError(
                f"Unknown symbol {said}. Symbols: {', '.join(known)}.",
                details={"field": "symbol", "unknown": unknown, "allowed": known},
            )


# -- positions ----------------------------------------------------------------------------


class PositionsRequest(_Symbol):
    """Arguments of get_positions."""

    symbol: str = Field(
        min_length=1,
        max_length=_SYMBOL_CHARS,
        pattern=r"\S",  # stated in the schema: blanks are stripped, so one must remain
        description="Ticker symbol, e.g. AAPL (case-insensitive).",
    )
    account: str | None = Field(None, max_length=_NAME_CHARS, description=_ACCOUNT)


class PositionsResponse(BaseModel):
    """Holdings of one symbol."""

    as_of: str
    symbol: str
    account: AccountFilter = Field(description="The account filter applied, if any.")
    held: bool = Field(description="Whether any account holds the symbol.")
    positions: Annotated[list[Position], Terms("holdings", "positions")]


class GetPositions(_BrokerageTool[PositionsRequest, PositionsResponse]):
    """Holdings of one symbol: quantity, average cost basis per share and asset class, per account."""

    name = "get_positions"
    source_id = "tool:positions:v1"
    RequestModel = PositionsRequest
    ResponseModel = PositionsResponse

    def execute_internal(self, request: PositionsRequest, ctx: ToolContext) -> PositionsResponse:
        """Positions in ``request.symbol``, filtered by account."""
        data = self.source.load()
        account = self.account_id(data, request.account)
        self.check_symbols(data, [request.symbol])
        rows = [
            p
            for p in data.positions.positions
            if p.symbol == request.symbol and (account is None or p.account == account)
        ]
        return PositionsResponse(
            as_of=data.positions.as_of,
            symbol=request.symbol,
            account=account,
            held=bool(rows),
            positions=rows,
        )


class PositionsListRequest(BaseModel):
    """Arguments of get_positions_list."""

    asset_class: AssetClass | None = Field(None, description="Only this asset class; omit for all.")
    account: str | None = Field(None, max_length=_NAME_CHARS, description=_ACCOUNT)


class PositionsListResponse(BaseModel):
    """All holdings, optionally filtered."""

    as_of: str
    account: AccountFilter
    asset_class: str | None
    positions: Annotated[list[Position], Terms("holdings", "positions")]


class GetPositionsList(_BrokerageTool[PositionsListRequest, PositionsListResponse]):
    """Every holding, optionally filtered by asset class (stocks, etf, bonds, cash) and account."""

    name = "get_positions_list"
    source_id = "tool:positions_list:v1"
    RequestModel = PositionsListRequest
    ResponseModel = PositionsListResponse

    def execute_internal(
        self, request: PositionsListRequest, ctx: ToolContext
    ) -> PositionsListResponse:
        """All positions matching the filters."""
        data = self.source.load()
        account = self.account_id(data, request.account)
        rows = [
            p
            for p in data.positions.positions
            if (account is None or p.account == account)
            and (request.asset_class is None or p.asset_class == request.asset_class)
        ]
        return PositionsListResponse(
            as_of=data.positions.as_of,
            account=account,
            asset_class=request.asset_class,
            positions=rows,
        )


# -- quotes ---------------------------------------------------------------------------------


class QuotesRequest(_Symbol):
    """Arguments of get_quotes."""

    symbol: str | None = Field(
        None, max_length=_SYMBOL_CHARS, description="One ticker symbol, e.g. AAPL."
    )
    symbols: list[Annotated[str, Field(max_length=_SYMBOL_CHARS)]] | None = Field(
        None, max_length=100, description="Several symbols; omit both for every quote."
    )


class QuotesResponse(BaseModel):
    """Market quotes."""

    as_of: str
    quotes: list[Quote]


class GetQuotes(_BrokerageTool[QuotesRequest, QuotesResponse]):
    """Latest price, previous close and daily change of one, several or all symbols."""

    name = "get_quotes"
    source_id = "tool:quotes:v1"
    RequestModel = QuotesRequest
    ResponseModel = QuotesResponse

    def execute_internal(self, request: QuotesRequest, ctx: ToolContext) -> QuotesResponse:
        """Quotes of the requested symbols (all when none is given)."""
        data = self.source.load()
        wanted = [*([request.symbol] if request.symbol else []), *(request.symbols or [])]
        self.check_symbols(data, wanted)
        quotes = data.quotes.quotes
        if wanted:
            order = {s: i for i, s in enumerate(dict.fromkeys(wanted))}
            quotes = sorted((q for q in quotes if q.symbol in order), key=lambda q: order[q.symbol])
        return QuotesResponse(as_of=data.quotes.as_of, quotes=quotes)


# -- activity and transfers ---------------------------------------------------------------


class _Window(BaseModel):
    """Date filters shared by get_activity and get_transfers (inclusive, by day, UTC)."""

    since: Day | None = Field(None, description="First day included, YYYY-MM-DD (UTC).")
    until: Day | None = Field(None, description="Last day included, YYYY-MM-DD (UTC).")

    def check_order(self) -> None:
        """Raise ``InvalidArgumentsError`` when ``since`` is after ``until``.

        Checked when the tool runs (as an unknown account is), not in the schema, which
        cannot say it: every call the exported schema allows passes validation.
        """
        if self.since and self.until and self.since > self.until:
            raise InvalidArgumentsError(
                f"since ({self.since}) is after until ({self.until}); swap them.",
                details={"field": "since"},
            )

    def holds(self, timestamp: str) -> bool:
        """Whether ``timestamp`` (ISO 8601) falls on a day of the window."""
        day = timestamp[:10]
        return (self.since is None or day >= self.since.isoformat()) and (
            self.until is None or day <= self.until.isoformat()
        )


class ActivityRequest(_Symbol, _Window):
    """Arguments of get_activity."""

    account: str | None = Field(None, max_length=_NAME_CHARS, description=_ACCOUNT)
    symbol: str | None = Field(
        None, max_length=_SYMBOL_CHARS, description="Only trades of this symbol."
    )
    side: Literal["BUY", "SELL"] | None = Field(None, description="Only buys or only sells.")
    limit: int = Field(20, ge=1, le=500, description="Most recent trades to return.")

    @field_validator("side", mode="before")
    @classmethod
    def _side(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value


class ActivityResponse(BaseModel):
    """Recent trades, newest first."""

    as_of: str
    account: AccountFilter
    since: date | None = Field(None, description="The first day applied, if any.")
    until: date | None = Field(None, description="The last day applied, if any.")
    trades: Annotated[list[Trade], Terms("trades")]


class GetActivity(_BrokerageTool[ActivityRequest, ActivityResponse]):
    """Recent buys and sells, newest first, filtered by account, symbol, side and dates."""

    name = "get_activity"
    source_id = "tool:activity:v1"
    RequestModel = ActivityRequest
    ResponseModel = ActivityResponse

    def execute_internal(self, request: ActivityRequest, ctx: ToolContext) -> ActivityResponse:
        """Trades matching the filters, newest first, at most ``limit``."""
        request.check_order()
        data = self.source.load()
        account = self.account_id(data, request.account)
        if request.symbol:
            self.check_symbols(data, [request.symbol])
        trades = sorted(
            (
                t
                for t in data.activity.trades
                if (account is None or t.account == account)
                and (request.symbol is None or t.symbol == request.symbol)
                and (request.side is None or t.side == request.side)
                and request.holds(t.timestamp)
            ),
            key=lambda t: t.timestamp,
            reverse=True,
        )[: request.limit]
        return ActivityResponse(
            as_of=data.activity.as_of,
            account=account,
            since=request.since,
            until=request.until,
            trades=trades,
        )


class TransfersRequest(_Window):
    """Arguments of get_transfers."""

    account: str | None = Field(None, max_length=_NAME_CHARS, description=_ACCOUNT)
    type: Literal["deposit", "withdrawal"] | None = Field(
        None, description="Only deposits or only withdrawals."
    )
    method: str | None = Field(
        None, max_length=_NAME_CHARS, description="Only this method, e.g. ACH or Wire."
    )
    status: Literal["completed", "pending", "failed"] | None = Field(
        None, description="Only transfers in this status."
    )
    limit: int | None = Field(None, ge=1, le=500, description="Most recent transfers to return.")

    @field_validator("type", "status", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value


class TransfersResponse(BaseModel):
    """Deposits and withdrawals, newest first."""

    as_of: str
    account: AccountFilter
    since: date | None = Field(None, description="The first day applied, if any.")
    until: date | None = Field(None, description="The last day applied, if any.")
    transfers: Annotated[list[Transfer], Terms("transfers")]
    total_deposits: Annotated[float, Kind("money", total=True, terms=("deposits",))] = Field(
        description="Sum of the completed deposits listed, USD."
    )
    total_withdrawals: Annotated[
        float, Kind("money", total=True, terms=("withdrawals", "withdrawn"))
    ] = Field(description="Sum of the completed withdrawals listed, USD.")


class GetTransfers(_BrokerageTool[TransfersRequest, TransfersResponse]):
    """Deposits and withdrawals (method, amount, status), newest first, with completed totals.

    Filtered by account, type, method, status and dates; ``limit`` keeps the most recent.
    """

    name = "get_transfers"
    source_id = "tool:transfers:v1"
    RequestModel = TransfersRequest
    ResponseModel = TransfersResponse

    def execute_internal(self, request: TransfersRequest, ctx: ToolContext) -> TransfersResponse:
        """Transfers matching the filters, with totals of the completed ones listed.

        Raises:
            InvalidArgumentsError: an unknown method; the message lists the methods.
        """
        request.check_order()
        data = self.source.load()
        account = self.account_id(data, request.account)
        methods = sorted({t.method for t in data.transfers.transfers})
        method = None
        if request.method:
            method = next((m for m in methods if m.lower() == request.method.strip().lower()), None)
            if method is None:
                raise InvalidArgumentsError(
                    f"Unknown method {request.method!r}. Methods: {', '.join(methods)}.",
                    details={"field": "method", "allowed": methods},
                )
        rows = sorted(
            (
                t
                for t in data.transfers.transfers
                if (account is None or t.account == account)
                and (request.type is None or t.type == request.type)
                and (method is None or t.method == method)
                and (request.status is None or t.status == request.status)
                and request.holds(t.timestamp)
            ),
            key=lambda t: t.timestamp,
            reverse=True,
        )[: request.limit]
        done = [t for t in rows if t.status == "completed"]
        return TransfersResponse(
            as_of=data.transfers.as_of,
            account=account,
            since=request.since,
            until=request.until,
            transfers=rows,
            total_deposits=round(sum(t.amount for t in done if t.type == "deposit"), 2),
            total_withdrawals=round(sum(t.amount for t in done if t.type == "withdrawal"), 2),
        )


# -- performance and summary --------------------------------------------------------------


class PerformanceRequest(BaseModel):
    """Arguments of get_performance."""

    timeframe: Timeframe = Field(description="Period: 1D, 1W, 1M, 3M, YTD, 1Y or ALL.")
    account: str | None = Field(None, max_length=_NAME_CHARS, description=_ACCOUNT)

    @field_validator("timeframe", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value


class PerformanceResponse(BaseModel):
    """Returns over one timeframe."""

    as_of: str
    timeframe: str
    account: AccountFilter
    performance: list[PerformancePoint]


class GetPerformance(_BrokerageTool[PerformanceRequest, PerformanceResponse]):
    """Return in percent and dollars, start and end value and net contributions over a timeframe."""

    name = "get_performance"
    source_id = "tool:performance:v1"
    RequestModel = PerformanceRequest
    ResponseModel = PerformanceResponse

    def execute_internal(
        self, request: PerformanceRequest, ctx: ToolContext
    ) -> PerformanceResponse:
        """Performance of the account (or each account) over ``timeframe``."""
        data = self.source.load()
        account = self.account_id(data, request.account)
        rows = [
            p
            for p in data.performance.performance
            if p.timeframe == request.timeframe and (account is None or p.account == account)
        ]
        return PerformanceResponse(
            as_of=data.performance.as_of,
            timeframe=request.timeframe,
            account=account,
            performance=rows,
        )


class AccountSummaryRequest(BaseModel):
    """Arguments of get_account_summary."""

    account: str | None = Field(None, max_length=_NAME_CHARS, description=_ACCOUNT)


class AccountSummaryResponse(BaseModel):
    """Account values and cash, with totals over the accounts shown."""

    as_of: str
    account: AccountFilter
    accounts: list[AccountSummary]
    total_value: Annotated[float, Kind("money", total=True, terms=("worth",))] = Field(
        description="Sum of total_value, USD."
    )
    total_cash: Annotated[float, Kind("money", total=True, terms=("cash",))] = Field(
        description="Sum of total_cash, USD."
    )


class GetAccountSummary(_BrokerageTool[AccountSummaryRequest, AccountSummaryResponse]):
    """Account value, market value, total and settled cash, per account and in total."""

    name = "get_account_summary"
    source_id = "tool:account_summary:v1"
    RequestModel = AccountSummaryRequest
    ResponseModel = AccountSummaryResponse

    def execute_internal(
        self, request: AccountSummaryRequest, ctx: ToolContext
    ) -> AccountSummaryResponse:
        """Summary of the account (or all accounts)."""
        data = self.source.load()
        account = self.account_id(data, request.account)
        rows = [s for s in data.account_summary.accounts if account is None or s.account == account]
        return AccountSummaryResponse(
            as_of=data.account_summary.as_of,
            account=account,
            accounts=rows,
            total_value=round(sum(s.total_value for s in rows), 2),
            total_cash=round(sum(s.total_cash for s in rows), 2),
        )


# -- facts ------------------------------------------------------------------------------------


class FactsRequest(BaseModel):
    """Arguments of get_facts."""

    topic: str = Field(
        min_length=1,
        max_length=200,
        description="What to explain, e.g. 'Roth IRA', 'expense ratios'.",
    )


class FactsResponse(BaseModel):
    """An educational snippet."""

    as_of: str
    topic: str
    fact_id: str
    title: str
    snippet: str
    source: str = Field(description="The fact file, relative to the data folder.")


_WORD = re.compile(r"[a-z0-9+\-]+")


class GetFacts(_BrokerageTool[FactsRequest, FactsResponse]):
    """A short educational explanation of an investing topic (IRAs, ETFs, rebalancing, taxes, ...)."""

    name = "get_facts"
    source_id = "tool:facts:v1"
    RequestModel = FactsRequest
    ResponseModel = FactsResponse

    def execute_internal(self, request: FactsRequest, ctx: ToolContext) -> FactsResponse:
        """The best-matching fact: keyword and title overlap, tolerant of typos and plurals.

        Raises:
            InvalidArgumentsError: nothing matches; the message lists the topics.
        """
        data = self.source.load()
        words = _WORD.findall(request.topic.lower())
        best, best_score = None, 0.0
        for fact in data.facts.facts:
            vocabulary = {k.lower() for k in fact.keywords} | set(_WORD.findall(fact.title.lower()))
            score = 0.0
            for word in words:
                similarity = max(SequenceMatcher(None, word, v).ratio() for v in vocabulary)
                if similarity >= 0.8:
                    score += similarity
            if score > best_score:
                best, best_score = fact, score
        if best is None:
            topics = ", ".join(f.title for f in data.facts.facts)
            raise InvalidArgumentsError(
                f"No fact matches topic {request.topic!r}. Topics: {topics}.",
                details={"field": "topic", "allowed": [f.title for f in data.facts.facts]},
            )
        text = self.source.fact_text(best).strip()
        snippet = text.split("\n", 1)[1].strip() if text.startswith("#") and "\n" in text else text
        return FactsResponse(
            as_of=data.facts.as_of,
            topic=request.topic,
            fact_id=best.id,
            title=best.title,
            snippet=snippet,
            source=best.file,
        )


def brokerage_tools(source: BrokerageDataSource | None = None) -> list[BaseTool[Any, Any]]:
    """One instance of each brokerage tool, sharing ``source`` (default: the shipped file)."""
    source = source or BrokerageDataSource()
    return [
        GetPositions(source),
        GetPositionsList(source),
        GetQuotes(source),
        GetActivity(source),
        GetTransfers(source),
        GetPerformance(source),
        GetAccountSummary(source),
        GetFacts(source),
    ]
