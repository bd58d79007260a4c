"""Answers to brokerage questions without a model (seed 004 context builder + responder).

``BrokerageAnswers`` is the brokerage pack's ``IntentPack``: it routes a question
(``QuestionRouter``), names the tool plan of each intent (``brokerage_intents``),
writes the answer's Markdown from the tool results, and lists the figures it derives
from them (P/L, market values, totals), so the grounding validator can trace every
number in the answer to cited data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tooldeck.core.claims import ClaimWriter
from tooldeck.core.intents import ComposedAnswer, Figure, Intent, IntentOutcome, Route
from tooldeck.core.result import ToolResult
from tooldeck.packs.brokerage.context import PositionPL, unrealized_pl
from tooldeck.packs.brokerage.data import BrokerageData, BrokerageDataSource
from tooldeck.packs.brokerage.intents import brokerage_intents
from tooldeck.packs.brokerage.router import QuestionRouter

__all__ = ["BrokerageAnswers", "money", "percent"]

_POSITIONS = ("tool:positions:v1", "tool:positions_list:v1")
_QUOTES = "tool:quotes:v1"
_SUMMARY = "tool:account_summary:v1"
_LIST = _POSITIONS[1]
_BOUND = frozenset({"quotes", "positions", "positions_list", "account_value", "cash_balance"})
"""Intents whose writers bind every figure to its field (``core.claims``)."""


def money(value: float, *, signed: bool = False) -> str:
    """``$1,234.50``; with ``signed``, ``+$1,234.50`` / ``-$1,234.50``."""
    sign = ("+" if value >= 0 else "-") if signed else ("-" if value < 0 else "")
    return f"{sign}${abs(value):,.2f}"


def percent(value: float, *, signed: bool = False) -> str:
    """``6.20%``; with ``signed``, ``+6.20%`` / ``-6.20%``."""
    return f"{value:+.2f}%" if signed else f"{value:.2f}%"


def _number(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.4f}".rstrip("0")


def _by_source(results: Sequence[ToolResult]) -> dict[str, dict[str, Any]]:
    return {r.source_id: r.data for r in results if r.success and r.source_id and r.data}


class BrokerageAnswers:
    """The brokerage ``IntentPack``: route, plan, compose, derive (see the module docstring).

    Args:
        source: The data file; read at each ``route`` (cached by mtime) so a hot
            reload changes the vocabulary too.
    """

    def __init__(self, source: BrokerageDataSource) -> None:
        self.source = source
        self.intents: Sequence[Intent] = brokerage_intents()
        self._router: tuple[BrokerageData, QuestionRouter] | None = None

    def route(self, question: str, given: Mapping[str, Any] | None = None) -> Route:
        """Route ``question``; ``given`` parameters win (``QuestionRouter.route``).

        The router (the data's vocabulary) is rebuilt only when the data file changed.
        """
        data = self.source.load()  # the same object until the file changes
        if self._router is None or self._router[0] is not data:
            self._router = (data, QuestionRouter(data))
        return self._router[1].route(question, given)

    # -- figures --------------------------------------------------------------------

    def figures(self, results: Sequence[ToolResult]) -> list[Figure]:
        """Figures derived from ``results``, each with its formula, kind and subjects.

        Per position with a quote: market value (quantity × price), cost (quantity ×
        cost basis), P/L (value − cost) and P/L % (of cost); per symbol held in several
        accounts, and over all positions listed: their sums, marked as totals. Only
        positions (``get_positions`` / ``get_positions_list``) combined with quotes
        derive anything; every figure carries both source_ids. With an account summary
        of several accounts: the total value and cash of all accounts but each one (what
        "excluding the joint account" states).
        """
        data = _by_source(results)
        quotes = data.get(_QUOTES)
        out: list[Figure] = []
        for source_id in _POSITIONS:
            positions = data.get(source_id)
            if quotes is None or positions is None:
                continue
            ids = (source_id, _QUOTES)
            rows = unrealized_pl(positions.get("positions", []), quotes.get("quotes", []))
            for row in rows:
                out.extend(_row_figures(row, ids))
            groups: dict[str, list[PositionPL]] = {}
            for row in rows:
                groups.setdefault(row.symbol, []).append(row)
            for group in groups.values():
                if len(group) > 1:
                    out.extend(_total_figures(group, ids))
            if len(rows) > 1:
                out.extend(_total_figures(rows, ids))
        summary = data.get(_SUMMARY)
        if summary is not None:
            out.extend(_all_but_one(summary.get("accounts", [])))
        return out

    def subjects(self) -> dict[str, tuple[str, str]]:
        """Account names and company names, by the subject they name."""
        data = self.source.load()
        names = {a.name: ("account", a.id) for a in data.accounts}
        names.update({q.name: ("symbol", q.symbol) for q in data.quotes.quotes})
        return names

    # -- composing ------------------------------------------------------------------

    def compose(self, route: Route, outcome: IntentOutcome) -> ComposedAnswer:
        """The Markdown answer for a successful ``outcome`` of ``route``'s intent."""
        data = _by_source(outcome.results)
        params = route.params
        intent = outcome.intent
        writer = getattr(self, f"_{intent}")
        claims = ClaimWriter()
        # the writers that bind their figures as they write them (issue 29: all, in time)
        written = writer(data, params, claims) if intent in _BOUND else writer(data, params)
        markdown, bound = claims.finish(written)
        used = {r.source_id: r.metadata.request_id for r in outcome.results if r.success}
        bound = [c.model_copy(update={"result": used.get(c.source_id)}) for c in bound]
        as_of = next((r.as_of for r in outcome.results if r.as_of), None)
        if as_of:
            markdown += f"\n\n_Data as of {as_of}._"
        figures = tuple(self.figures(outcome.results))
        return ComposedAnswer(markdown, tuple(outcome.source_ids), figures, tuple(bound))

    def _out_of_scope(self, data: dict[str, Any], params: Mapping[str, Any]) -> str:
        d = self.source.load()
        symbols = ", ".join(d.symbols())
        return (
            "I can't answer that from your brokerage data. I can tell you about your "
            "holdings and their profit or loss, quotes for the symbols I track "
            f"({symbols}), account values and cash, performance over a period, your "
            "trades, deposits and withdrawals, and explain topics such as Roth IRAs, "
            "expense ratios or rebalancing."
        )

    def _kept(
        self,
        symbol: str,
        account: str,
        params: Mapping[str, Any],
        positions: Sequence[Mapping[str, Any]],
    ) -> bool:
        """Whether a position survives the question's ``exclude_*`` parameters."""
        classes = {p["symbol"]: p.get("asset_class") for p in positions}
        return not (
            symbol == params.get("exclude_symbol")
            or account == params.get("exclude_account")
            or (
                params.get("exclude_asset_class")
                and classes.get(symbol) == params["exclude_asset_class"]
            )
        )

    def _without(self, params: Mapping[str, Any]) -> str:
        """The exclusion as words (", not counting ETFs"), or "" when there is none."""
        left_out = [
            {"etf": "ETFs", "stocks": "stocks", "bonds": "bonds", "cash": "cash funds"}.get(
                params.get("exclude_asset_class", ""), ""
            ),
            params.get("exclude_symbol", ""),
            self._names().get(params.get("exclude_account", ""), ""),
        ]
        said = " or ".join(x for x in left_out if x)
        return f", not counting {said}" if said else ""

    def _names(self) -> dict[str, str]:
        return {a.id: a.name for a in self.source.load().accounts}

    def _account_label(self, account: str | None) -> str:
        return self._names().get(account or "", "all accounts") if account else "all accounts"

    def _symbol_performance(self, data: dict[str, Any], params: Mapping[str, Any]) -> str:
        symbol = params["symbol"]
        positions = data["tool:positions:v1"]["positions"]
        quote = data[_QUOTES]["quotes"][0]
        price = (
            f"{symbol} trades at **{money(quote['price'])}**, "
            f"{percent(quote['change_pct'], signed=True)} today."
        )
        if not positions:
            return (
                f"You do not hold {symbol} in {self._account_label(params.get('account'))}. {price}"
            )
        rows = unrealized_pl(positions, [quote])
        names = self._names()
        lines = [price, ""]
        for r in rows:
            lines.append(
                f"- **{names.get(r.account, r.account)}**: {_number(r.quantity)} shares worth "
                f"**{money(r.market_value)}** (cost {money(r.cost_value)} at "
                f"{money(r.cost_basis)} a share): {money(r.unrealized_pl, signed=True)} "
                f"({percent(r.unrealized_pl_pct, signed=True)})."
            )
        if len(rows) > 1:
            t = _totals(rows)
            lines.append(
                f"- **Total**: {_number(t['quantity'])} shares worth **{money(t['market_value'])}**, "
                f"{money(t['unrealized_pl'], signed=True)} "
                f"({percent(t['unrealized_pl_pct'], signed=True)}) on a cost of "
                f"{money(t['cost_value'])}."
            )
        return "\n".join(lines)

    def _positions(
        self, data: dict[str, Any], params: Mapping[str, Any], claims: ClaimWriter
    ) -> str:
        symbol = params["symbol"]
        positions = data[_POSITIONS[0]]["positions"]
        if not positions:
            return f"You do not hold {symbol} in {self._account_label(params.get('account'))}."
        names = self._names()
        lines = [f"Your {symbol} holdings:", ""]
        for i, p in enumerate(positions):
            shares = claims.figure(
                _number(p["quantity"]), _POSITIONS[0], f"/positions/{i}/quantity", kind="quantity"
            )
            cost = claims.figure(
                money(p["cost_basis"]), _POSITIONS[0], f"/positions/{i}/cost_basis", kind="money"
            )
            lines.append(
                f"- **{names.get(p['account'], p['account'])}**: {shares} shares "
                f"at an average cost of {cost} a share."
            )
        return "\n".join(lines)

    def _quotes(self, data: dict[str, Any], params: Mapping[str, Any], claims: ClaimWriter) -> str:
        lines = []
        for i, q in enumerate(data[_QUOTES]["quotes"]):
            price, previous, change, change_pct = (
                claims.figure(text, _QUOTES, f"/quotes/{i}/{field}")
                if field in ("price", "previous_close")
                else claims.figure(text, _QUOTES, op="abs", inputs=(f"/quotes/{i}/{field}",))
                for text, field in (
                    (money(q["price"]), "price"),
                    (money(q["previous_close"]), "previous_close"),
                    (money(abs(q["change"])), "change"),  # its direction is said in words
                    (percent(abs(q["change_pct"])), "change_pct"),
                )
            )
            direction = "up" if q["change"] >= 0 else "down"
            lines.append(
                f"**{q['symbol']}** ({q['name']}) is at **{price}**, {direction} {change} "
                f"({change_pct}) from the previous close of {previous}."
            )
        return "\n\n".join(lines)

    def _positions_list(
        self, data: dict[str, Any], params: Mapping[str, Any], claims: ClaimWriter
    ) -> str:
        listed = data[_LIST]["positions"]
        positions = [p for p in listed if self._kept(p["symbol"], p["account"], params, listed)]
        scope = self._account_label(params.get("account")) + self._without(params)
        kind = params.get("asset_class")
        if not positions:
            return f"You hold no {kind or ''} positions in {scope}.".replace("  ", " ")
        names = self._names()
        lines = [
            (
                f"Your {kind + ' ' if kind else ''}positions in {scope}:"
                if len(positions) < len(listed)  # a count of what is left is no data value
                else f"You hold {len(positions)} {kind + ' ' if kind else ''}positions in {scope}:"
            ),
            "",
            "| Account | Symbol | Shares | Avg cost | Class |",
            "|---|---|---:|---:|---|",
        ]
        index = {id(p): i for i, p in enumerate(listed)}
        for p in positions:
            at = f"/positions/{index[id(p)]}"
            shares = claims.figure(_number(p["quantity"]), _LIST, f"{at}/quantity", kind="quantity")
            cost = claims.figure(money(p["cost_basis"]), _LIST, f"{at}/cost_basis", kind="money")
            lines.append(
                f"| {names.get(p['account'], p['account'])} | {p['symbol']} | "
                f"{shares} | {cost} | {p['asset_class']} |"
            )
        return "\n".join(lines)

    def _portfolio_ranking(self, data: dict[str, Any], params: Mapping[str, Any]) -> str:
        positions = data["tool:positions_list:v1"]["positions"]
        rows = unrealized_pl(positions, data[_QUOTES]["quotes"])
        if not rows:
            return f"You hold no positions to rank in {self._account_label(params.get('account'))}."
        rows = [r for r in rows if self._kept(r.symbol, r.account, params, positions)]
        if not rows:
            return "You hold no positions to rank once those are left out."
        direction = params.get("direction", "best")
        by = params.get("by", "return")
        basis = {"value": "market_value", "gain": "unrealized_pl"}.get(by, "unrealized_pl_pct")
        ranked = sorted(rows, key=lambda r: getattr(r, basis), reverse=direction == "best")
        limit = int(params.get("limit") or 5)
        top = ranked[0]
        names = self._names()
        where = names.get(top.account, top.account)
        if by == "value":
            size = "biggest" if direction == "best" else "smallest"
            head = (
                f"Your {size} position by market value is **{top.symbol}** in {where}: "
                f"{money(top.market_value)}."
            )
        else:
            kind = "in dollars" if by == "gain" else "by return"
            head = (
                f"Your {'best' if direction == 'best' else 'worst'} performer {kind} is "
                f"**{top.symbol}** in {where}: {money(top.unrealized_pl, signed=True)} "
                f"({percent(top.unrealized_pl_pct, signed=True)})."
            )
        lines = [
            head,
            "",
            "| Symbol | Account | Value | P/L | P/L % |",
            "|---|---|---:|---:|---:|",
        ]
        for r in ranked[:limit]:
            lines.append(
                f"| {r.symbol} | {names.get(r.account, r.account)} | "
                f"{money(r.market_value)} | {money(r.unrealized_pl, signed=True)} | "
                f"{percent(r.unrealized_pl_pct, signed=True)} |"
            )
        return "\n".join(lines)

    def _performance(self, data: dict[str, Any], params: Mapping[str, Any]) -> str:
        perf = data["tool:performance:v1"]
        names = self._names()
        lines = [f"Performance over {perf['timeframe']}:", ""]
        for p in perf["performance"]:
            lines.append(
                f"- **{names.get(p['account'], p['account'])}**: "
                f"{percent(p['return_pct'], signed=True)} ({money(p['return_amount'], signed=True)}), "
                f"from {money(p['start_value'])} to {money(p['end_value'])}, with net "
                f"contributions of {money(p['net_contributions'])}."
            )
        transfers = data.get("tool:transfers:v1")
        if transfers:
            lines += [
                "",
                f"All completed deposits: {money(transfers['total_deposits'])}; withdrawals: "
                f"{money(transfers['total_withdrawals'])}.",
            ]
        return "\n".join(lines)

    def _transfers(self, data: dict[str, Any], params: Mapping[str, Any]) -> str:
        t = data["tool:transfers:v1"]
        scope = self._account_label(params.get("account")) + _window(params)
        what = {"deposit": "deposits", "withdrawal": "withdrawals"}.get(
            params.get("type", ""), "deposits or withdrawals"
        )
        if params.get("status"):
            what = f"{params['status']} {what}"
        if params.get("method"):
            what = f"{params['method']} {what}"
        if not t["transfers"]:
            return f"No {what} in {scope}."
        names = self._names()
        if params.get("limit") == 1:
            x = t["transfers"][0]
            return (
                f"Your last {what.rstrip('s').replace('deposits or withdrawal', 'transfer')}: "
                f"{'an' if x['method'][0] in 'AEIOU' else 'a'} {x['method']} {x['type']} of "
                f"**{money(x['amount'])}** "
                f"{'into' if x['type'] == 'deposit' else 'from'} "
                f"{names.get(x['account'], x['account'])} on {x['timestamp'][:10]}, "
                f"**{x['status']}**."
            )
        lines = [
            f"Transfers in {scope}: deposits {money(t['total_deposits'])}, withdrawals "
            f"{money(t['total_withdrawals'])} (completed).",
            "",
            "| Date | Account | Type | Method | Amount | Status |",
            "|---|---|---|---|---:|---|",
        ]
        for x in t["transfers"]:
            lines.append(
                f"| {x['timestamp'][:10]} | {names.get(x['account'], x['account'])} | {x['type']} "
                f"| {x['method']} | {money(x['amount'])} | {x['status']} |"
            )
        return "\n".join(lines)

    def _activity(self, data: dict[str, Any], params: Mapping[str, Any]) -> str:
        trades = data["tool:activity:v1"]["trades"]
        scope = self._account_label(params.get("account")) + _window(params)
        side = {"BUY": "buys", "SELL": "sells"}.get(params.get("side", ""), "trades")
        what = f"{params['symbol']} {side}" if params.get("symbol") else side
        if not trades:
            return f"No {what} in {scope}."
        names = self._names()
        if params.get("limit") == 1:
            t = trades[0]
            return (
                f"Your last {what.rstrip('s')}: **{t['side']}** {_number(t['quantity'])} "
                f"{t['symbol']} at {money(t['price'])} in "
                f"{names.get(t['account'], t['account'])} on {t['timestamp'][:10]}."
            )
        lines = [
            f"Recent {what} in {scope}:",
            "",
            "| Date | Account | Side | Symbol | Shares | Price |",
            "|---|---|---|---|---:|---:|",
        ]
        for t in trades:
            lines.append(
                f"| {t['timestamp'][:10]} | {names.get(t['account'], t['account'])} | {t['side']} "
                f"| {t['symbol']} | {_number(t['quantity'])} | {money(t['price'])} |"
            )
        return "\n".join(lines)

    def _summary(
        self, data: dict[str, Any], params: Mapping[str, Any], claims: ClaimWriter, cash: bool
    ) -> str:
        s = data[_SUMMARY]
        names = self._names()
        field = "total_cash" if cash else "total_value"
        index = {a["account"]: i for i, a in enumerate(s["accounts"])}

        def of(account: Mapping[str, Any], name: str) -> str:  # bound to its field
            at = f"/accounts/{index[account['account']]}/{name}"
            return claims.figure(money(account[name]), _SUMMARY, at, kind="money")

        accounts = [a for a in s["accounts"] if a["account"] != params.get("exclude_account")]
        rank = params.get("rank")
        if rank and accounts:
            ordered = sorted(accounts, key=lambda a: a[field], reverse=rank == "most")
            win = ordered[0]
            what = "cash" if cash else "value"
            lines = [
                f"**{names.get(win['account'], win['account'])}** has the {rank} {what}: "
                f"{of(win, field)}.",
                "",
            ]
            lines += [
                f"{i}. {names.get(a['account'], a['account'])}: {of(a, field)}"
                for i, a in enumerate(ordered, start=1)
            ]
            return "\n".join(lines)
        if params.get("exclude_account"):  # the all-but-one figure, a sum of the others
            total = claims.figure(
                money(round(sum(a[field] for a in accounts), 2)), _SUMMARY, op="sum",
                inputs=tuple(f"/accounts/{index[a['account']]}/{field}" for a in accounts),
                kind="money",
            )  # fmt: skip
        else:
            total = claims.figure(money(s[field]), _SUMMARY, f"/{field}", kind="money")
        lines = []
        for a in accounts:
            name = names.get(a["account"], a["account"])
            if cash:
                lines.append(
                    f"- **{name}**: {of(a, 'total_cash')} cash, of which "
                    f"{of(a, 'settled_cash')} is settled."
                )
            else:
                lines.append(
                    f"- **{name}**: {of(a, 'total_value')} ({of(a, 'market_value')} "
                    f"invested, {of(a, 'total_cash')} cash)."
                )
        head = f"Cash: **{total}**" if cash else f"Total value: **{total}**"
        scope = self._account_label(params.get("account")) + self._without(params)
        return f"{head} in {scope}.\n\n" + "\n".join(lines)

    def _account_value(
        self, data: dict[str, Any], params: Mapping[str, Any], claims: ClaimWriter
    ) -> str:
        return self._summary(data, params, claims, cash=False)

    def _cash_balance(
        self, data: dict[str, Any], params: Mapping[str, Any], claims: ClaimWriter
    ) -> str:
        return self._summary(data, params, claims, cash=True)

    def _facts(self, data: dict[str, Any], params: Mapping[str, Any]) -> str:
        f = data["tool:facts:v1"]
        return f"**{f['title']}**\n\n{f['snippet']}\n\n_Source: {f['source']}_"


def _all_but_one(accounts: Sequence[Mapping[str, Any]]) -> list[Figure]:
    """For each account, the total value and cash of the others, as recomputable sums."""
    out = []
    for left_out in accounts:
        rest = [a for a in accounts if a is not left_out]
        for field, terms in (("total_value", ("worth",)), ("total_cash", ("cash",))):
            inputs = tuple(a[field] for a in rest)
            label = f"accounts but {left_out['account']} {field}"
            out.append(
                Figure(
                    round(sum(inputs), 2),
                    label,
                    (_SUMMARY,),
                    "money",
                    (),
                    "sum",
                    inputs,
                    True,
                    False,
                    terms,
                )
            )
    return out


def _window(params: Mapping[str, Any]) -> str:
    """The dates a question asked about, as words (" from 2026-11-01 to 2026-11-30")."""
    since, until = params.get("since"), params.get("until")
    if since and until:
        return f" on {since}" if since == until else f" from {since} to {until}"
    if since:
        return f" since {since}"
    return f" until {until}" if until else ""


_CHANGES = frozenset({"unrealized_pl", "unrealized_pl_pct"})
"""Figures that are changes (a gain or a loss has a direction)."""
_TERMS = {
    "market_value": ("worth",),
    "cost_value": ("cost", "paid", "invested"),
    "unrealized_pl": ("p/l", "profit", "gain", "loss", "unrealized"),
    "unrealized_pl_pct": ("p/l", "profit", "gain", "loss", "unrealized"),
}
"""Words that name a figure in an answer, besides its own name."""


def _row_figures(row: PositionPL, ids: tuple[str, ...]) -> list[Figure]:
    """Market value, cost, P/L and P/L % of one position, with their formulas."""
    whose = (("account", row.account), ("symbol", row.symbol))
    label = f"{row.symbol} ({row.account})"

    def figure(name: str, kind: str, op: Any, inputs: tuple[float, ...]) -> Figure:
        value = getattr(row, name)
        change, terms = name in _CHANGES, _TERMS.get(name, ())
        return Figure(value, f"{label} {name}", ids, kind, whose, op, inputs, False, change, terms)

    return [
        figure("market_value", "money", "product", (row.quantity, row.price)),
        figure("cost_value", "money", "product", (row.quantity, row.cost_basis)),
        figure("unrealized_pl", "money", "difference", (row.market_value, row.cost_value)),
        figure("unrealized_pl_pct", "percent", "percent_of", (row.unrealized_pl, row.cost_value)),
    ]


def _total_figures(rows: Sequence[PositionPL], ids: tuple[str, ...]) -> list[Figure]:
    """The sums of ``rows`` (``_totals``) as total figures of the subjects they share."""
    shared = set.intersection(*({("account", r.account), ("symbol", r.symbol)} for r in rows))
    whose = tuple(sorted(shared))
    label = " ".join(v for _, v in whose) or "all positions"
    t = _totals(rows)

    def total(name: str, kind: str, op: Any, inputs: tuple[float, ...]) -> Figure:
        change, terms = name in _CHANGES, _TERMS.get(name, ())
        label_ = f"{label} total {name}"
        return Figure(t[name], label_, ids, kind, whose, op, inputs, True, change, terms)

    return [
        total("quantity", "quantity", "sum", tuple(r.quantity for r in rows)),
        total("market_value", "money", "sum", tuple(r.market_value for r in rows)),
        total("cost_value", "money", "sum", tuple(r.cost_value for r in rows)),
        total("unrealized_pl", "money", "sum", tuple(r.unrealized_pl for r in rows)),
        total("unrealized_pl_pct", "percent", "percent_of", (t["unrealized_pl"], t["cost_value"])),
    ]


def _totals(rows: Sequence[PositionPL]) -> dict[str, float]:
    market = round(sum(r.market_value for r in rows), 2)
    cost = round(sum(r.cost_value for r in rows), 2)
    pl = round(sum(r.unrealized_pl for r in rows), 2)
    return {
        "quantity": sum(r.quantity for r in rows),
        "market_value": market,
        "cost_value": cost,
        "unrealized_pl": pl,
        "unrealized_pl_pct": round(pl / cost * 100, 2) if cost else 0.0,
    }
