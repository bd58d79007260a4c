"""``user_context``: the user's context in one tool (seed 000, decisions 6, 7 and 17).

Actions: ``summary`` (one or more categories), ``briefing`` (every configured
category: seed 000's daily briefing), ``commute`` (minutes to a ``destination``) and
``query`` (finance transactions, bank and investment: search, filter, sort, page, group,
with totals). A
category with no source configured answers ``status: "not_configured"`` and how to
configure it; an unknown category is a validation error listing the configured ones; a
source that fails is its category's error while the others answer.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tooldeck.core.context import ToolContext, principal_of
from tooldeck.core.dates import Day
from tooldeck.core.definition import ToolAnnotations
from tooldeck.core.kinds import Cite, Money, Terms
from tooldeck.core.names import closest_names
from tooldeck.core.result import ToolResult
from tooldeck.core.tool import BaseTool
from tooldeck.exceptions import InvalidArgumentsError
from tooldeck.packs.context.adapter import AdapterResult
from tooldeck.packs.context.bridge import ContextBridge
from tooldeck.packs.context.commute import OsrmAdapter
from tooldeck.packs.context.config import CATEGORY_HELP
from tooldeck.packs.context.finance import FinanceQuery, query_transactions
from tooldeck.packs.context.user_sources import ContextBridges

__all__ = ["UserContextRequest", "UserContextResponse", "UserContextTool"]

BUILT_IN = tuple(CATEGORY_HELP)
"""The categories tooldeck has adapters for (configured or not)."""


class UserContextRequest(BaseModel):
    """Arguments of user_context. The finance query's arguments apply to ``query`` only."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["summary", "briefing", "commute", "query"] = Field(
        "summary",
        description="summary: the categories asked for; briefing: every configured "
        "category; commute: travel time to `destination`; query: finance transactions.",
    )
    category: str | None = Field(
        None, max_length=40, description="One category (finance, calendar, weather, commute, "
        "tasks, or another configured one).",
    )  # fmt: skip
    categories: list[Annotated[str, Field(max_length=40)]] | None = Field(
        None, max_length=20, description="Several categories for summary (default: all)."
    )
    include_alerts: bool = Field(True, description="Add alerts worth the user's attention.")
    destination: str | None = Field(
        None, max_length=100, description="commute: a place of the address book."
    )
    search: str | None = Field(
        None, max_length=200, description="query: words in the payee or memo (any case)."
    )
    finance_category: str | None = Field(
        None, max_length=100, description="query: transactions of this spending category."
    )
    kind: Literal["bank", "investment"] | None = Field(
        None, description="query: bank transactions only (payments, deposits: what was "
        "spent), or investment ones only (buys, sells, dividends: amount is the cash "
        "moved, with units and unit_price); default both.",
    )  # fmt: skip
    sort: Literal["date", "amount", "payee"] = Field("date", description="query: sort key.")
    sort_dir: Literal["asc", "desc"] = Field("desc", description="query: sort direction.")
    page: int = Field(1, ge=1, le=100_000, description="query: page, from 1.")
    per_page: int = Field(10, ge=1, le=100, description="query: transactions per page.")
    group_by: Literal["category", "payee", "month"] | None = Field(
        None, description="query: also total the matches by this."
    )
    date_from: Day | None = Field(None, description="query: first day, YYYY-MM-DD.")
    date_to: Day | None = Field(None, description="query: last day, YYYY-MM-DD.")


class SourceStatus(BaseModel):
    """One source's fetch: where from, when, and whether it worked."""

    platform: str
    source_id: Annotated[str, Cite()] = Field(description="context:<category>:<platform>")
    fetched_at: str
    ok: bool
    error: str | None = None
    retryable: bool = False
    records: int = 0
    skipped: list[str] = Field(default_factory=list)
    """What was left out (a file, an event, a row) and why (at most 20)."""
    relaxed: list[str] = Field(default_factory=list)
    """What was repaired or ignored to read the rest (a lenient parse), at most 20."""


Cited = Annotated[list[str], Cite()]
"""The ``context:<category>:<platform>`` ids of the sources a record was drawn from."""


class CategoryContext(BaseModel):
    """One category's state and shaped data."""

    category: str
    status: Literal["ok", "partial", "error", "not_configured"]
    source_ids: Cited = Field(default_factory=list, description="Cite one of these.")
    sources: list[SourceStatus] = Field(default_factory=list)
    summary: dict[str, Any] = Field(default_factory=dict)
    alerts: list[str] = Field(default_factory=list)
    how_to_configure: str | None = None


class CurrencyTotals(BaseModel):
    """The totals of the matching transactions in one currency."""

    currency: str
    count: Annotated[int, Terms("transactions", "purchases", "payments")]
    spent: Money = Field(description="Money out, as a positive amount.")
    received: Money
    net: Money


class Totals(BaseModel):
    """Totals over every matching transaction (not only the page).

    Amounts in different currencies are never added: with more than one currency,
    ``spent``, ``received`` and ``net`` are None and ``by_currency`` has each.
    """

    count: Annotated[int, Terms("transactions", "purchases", "payments")]
    currency: str | None = Field(None, description="The matches' one currency; None: several.")
    spent: Money | None = Field(None, description="Money out, as a positive amount.")
    received: Money | None = None
    net: Money | None = None
    by_currency: list[CurrencyTotals] = Field(default_factory=list)


class QueryResult(BaseModel):
    """A page of matching transactions, totals over every match, and groups if asked."""

    source_ids: Cited
    search: str | None = None
    finance_category: str | None = None
    kind: str | None = None
    date_from: str | None = Field(None, description="The window asked for, as given.")
    date_to: str | None = None
    total: int
    page: int
    per_page: int
    pages: int
    transactions: list[dict[str, Any]]
    totals: Totals
    groups: list[dict[str, Any]] | None = None


class Trip(BaseModel):
    """Travel time from the origin to one place of the address book."""

    source_ids: Cited
    destination: str
    address: str
    minutes: float
    km: float
    profile: str


class UserContextResponse(BaseModel):
    """The categories asked for; the query's or the commute's answer when asked."""

    action: str
    categories: list[CategoryContext]
    query: QueryResult | None = None
    """The ``query`` action's transactions and totals; None when no finance statement
    could be read (the category's ``sources`` say why): never zero totals for data
    that was not read."""
    commute: Trip | None = None


class UserContextTool(BaseTool[UserContextRequest, UserContextResponse]):
    """The user's context (finance, calendar, weather, commute, tasks) in one tool."""

    labels = ("private",)  # statements, calendars, tasks (providers.flow)
    effects = ()  # it reads its configured sources; no argument leaves

    name = "user_context"
    annotations = ToolAnnotations(read_only=True, idempotent=True, open_world=True)
    blocking = False  # awaits the bridge, whose sources run concurrently
    RequestModel = UserContextRequest
    ResponseModel = UserContextResponse
    tags = ("context",)

    def __init__(self, bridges: ContextBridges) -> None:
        self.bridges = bridges
        configured = ", ".join(bridges.configured.categories) or "none yet"
        self.description = (
            "The user's own context: summary of categories, a daily briefing, commute "
            "time to a destination, or a query of finance transactions, bank and "
            "investment (search, sort, page, group by, date range). Configured "
            f"categories: {configured}."
        )

    async def execute_internal(
        self, request: UserContextRequest, ctx: ToolContext
    ) -> UserContextResponse:
        """Run the action (see the module docstring).

        Raises:
            InvalidArgumentsError: an unknown category or destination, a query of
                another category than finance, ``date_from`` after ``date_to``.
        """
        bridge = self.bridges.for_principal(principal_of(ctx))  # the caller's own sources
        action = request.action
        if action == "briefing":
            asked = bridge.categories
        elif action == "query":
            asked = [_known(bridge, request.category or "finance")]
            if asked != ["finance"]:
                raise InvalidArgumentsError.for_field(
                    "category", "query reads finance transactions; use summary for the others"
                )
        elif action == "commute":
            asked = ["commute"]
        else:
            wanted = request.categories or ([request.category] if request.category else [])
            asked = list(dict.fromkeys(_known(bridge, c) for c in wanted)) or bridge.categories
        if request.date_from and request.date_to and request.date_from > request.date_to:
            raise InvalidArgumentsError.for_field(
                "date_from", f"{request.date_from} is after date_to {request.date_to}"
            )
        configured = [c for c in asked if bridge.sources(c)]
        fetched = await bridge.fetch(configured)
        # shaping and querying tens of thousands of records is CPU work: off the event loop
        shaped = await asyncio.to_thread(
            bridge.normalize, fetched, include_alerts=request.include_alerts
        )
        response = UserContextResponse(
            action=action,
            categories=[_category(bridge, c, fetched.get(c, []), shaped.get(c, {})) for c in asked],
        )
        good = [result for result in fetched.get("finance", []) if result.success]
        if action == "query" and good:  # no readable statement: no figures, not zero totals
            records = [r for result in good for r in result.data]
            found = await asyncio.to_thread(query_transactions, records, self._query(request))
            response.query = QueryResult(
                source_ids=[r.source_id for r in good],
                search=request.search,
                finance_category=request.finance_category,
                kind=request.kind,
                date_from=request.date_from.isoformat() if request.date_from else None,
                date_to=request.date_to.isoformat() if request.date_to else None,
                **found,
            )
        if action == "commute" and fetched.get("commute"):
            response.commute = _commute(bridge, request.destination, fetched["commute"])
        return response

    @staticmethod
    def _query(request: UserContextRequest) -> FinanceQuery:
        return FinanceQuery(
            search=request.search, category=request.finance_category, kind=request.kind,
            date_from=request.date_from, date_to=request.date_to, sort=request.sort,
            sort_dir=request.sort_dir, page=request.page, per_page=request.per_page,
            group_by=request.group_by,
        )  # fmt: skip

    def format_output(self, response: UserContextResponse) -> ToolResult:
        """The response, citing its source when it has exactly one.

        ``source_id`` is ``context:<category>:<platform>``; ``as_of`` the oldest fetch used.
        """
        used = [s for c in response.categories for s in c.sources if s.ok]
        ids = list(dict.fromkeys(s.source_id for s in used))
        return ToolResult.ok(
            response.model_dump(mode="json"),
            source_id=ids[0] if len(ids) == 1 else None,
            as_of=min((s.fetched_at for s in used), default=None),
        )


def _status(result: AdapterResult) -> SourceStatus:
    fetched: datetime = result.fetched_at
    return SourceStatus(
        platform=result.platform,
        source_id=result.source_id,
        fetched_at=fetched.isoformat(timespec="seconds"),
        ok=result.success,
        error=result.error,
        retryable=result.retryable,
        records=result.transformed_count,
        skipped=list(result.metadata.get("skipped", []))[:20],
        relaxed=list(result.metadata.get("relaxed", []))[:20],
    )


def _known(bridge: ContextBridge, category: str) -> str:
    name = category.strip().lower()
    if name in bridge.categories or name in BUILT_IN:
        return name
    names = sorted({*bridge.categories, *BUILT_IN})
    near = closest_names(name, names)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    raise InvalidArgumentsError.for_field(
        "category",
        f"unknown category {category!r}{hint}; configured: "
        f"{', '.join(bridge.categories) or 'none'}; built in: {', '.join(BUILT_IN)}",
        allowed=names,
    )


def _category(
    bridge: ContextBridge, category: str, results: list[AdapterResult], shaped: dict[str, Any]
) -> CategoryContext:
    if not bridge.sources(category):
        return CategoryContext(
            category=category,
            status="not_configured",
            how_to_configure=CATEGORY_HELP.get(
                category, f"install or configure an adapter for {category}"
            ),
        )
    good = sum(r.success for r in results)
    status = "ok" if good == len(results) else "error" if good == 0 else "partial"
    summary = dict(shaped.get("summary", {}))
    if category == "finance" and (holdings := _held(results, "positions")):
        holdings.sort(key=lambda p: -(p.get("market_value") or 0.0))  # largest first
        summary["holdings"] = holdings[:50]
    if category == "finance" and (balances := _held(results, "balances")):
        summary["balances"] = balances[:50]
    return CategoryContext(
        category=category,
        status=status,
        source_ids=[r.source_id for r in results if r.success],
        sources=[_status(r) for r in results],
        summary=summary,
        alerts=shaped.get("alerts", []),
    )


def _held(results: list[AdapterResult], key: str) -> list[dict[str, Any]]:
    """The statements' ``positions`` or ``balances``, each with its ``source_id``.

    Shapes: ``ofx.OfxStatements`` (positions from ``INVPOSLIST``, balances from
    ``LEDGERBAL``/``AVAILBAL``/``INVBAL``).
    """
    return [
        {**record, "source_id": result.source_id}
        for result in results
        if result.success
        for record in result.metadata.get(key, [])
    ]


def _commute(
    bridge: ContextBridge, destination: str | None, results: list[AdapterResult]
) -> Trip | None:
    good = [result for result in results if result.success]
    trips = [r for result in good for r in result.data]
    names = [str(t["destination"]) for t in trips]
    for adapter in bridge.sources("commute"):
        if isinstance(adapter, OsrmAdapter):
            names = adapter.destinations
    if not trips:
        return None
    chosen = destination or names[0]
    trip = next((t for t in trips if str(t["destination"]).lower() == chosen.lower()), None)
    if trip is None:
        near = closest_names(chosen, names)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise InvalidArgumentsError.for_field(
            "destination",
            f"{chosen!r} is not in the address book{hint}; places: {', '.join(names)}",
            allowed=names,
        )
    return Trip(source_ids=[r.source_id for r in good], **trip)
