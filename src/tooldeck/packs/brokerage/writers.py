"""The brokerage answers' Markdown, every figure bound to the field it states (issue 29).

``AnswerWriter`` writes one intent's answer from the tool results. Each figure and
each fact it renders (a price, a share count, a date, a side, a status, an account's
name) goes through its ``ClaimWriter``, so the answer comes with its claims: the
pointer into the result the figure comes from, or the formula (``core.claims.Formula``)
that derives it. Nothing is rendered from a value without saying where it came from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tooldeck.core.claims import Formula, resolve_pointer
from tooldeck.packs.brokerage.derived import PL, Total, money, number, percent
from tooldeck.packs.brokerage.writing import (
    ACTIVITY,
    LIST,
    PERFORMANCE,
    POSITIONS,
    QUOTES,
    SUMMARY,
    TRANSFERS,
    BoundWriter,
)

__all__ = ["AnswerWriter"]

_PERIODS = {"YTD": "year-to-date", "1Y": "one-year", "3M": "three-month", "1M": "one-month",
            "1W": "one-week"}  # fmt: skip


class AnswerWriter(BoundWriter):
    """Writes one answer; each public method is an intent's writer (``BoundWriter``'s args)."""

    # -- the intents -------------------------------------------------------------------

    def out_of_scope(self) -> str:
        """The graceful answer: what the data can answer instead."""
        return (
            "I can't answer that from your brokerage data. I can tell you about your "
            "holdings and their profit or loss, quotes for the symbols I track "
            f"({', '.join(self.symbols)}), account values and cash, performance over a "
            "period, your trades, deposits and withdrawals, and explain topics such as "
            "Roth IRAs, expense ratios or rebalancing."
        )

    def quotes(self) -> str:
        """Each quote: price, its change (the direction as a word bound to the sign) and the previous close."""
        lines = []
        for i, q in enumerate(self.data[QUOTES]["quotes"]):
            at = f"/quotes/{i}"
            change = Formula(op="abs", inputs=(f"{at}/change",))  # its direction is a word
            change_pct = Formula(op="abs", inputs=(f"{at}/change_pct",))
            lines.append(
                f"**{self._value(QUOTES, f'{at}/symbol')}** ({self._value(QUOTES, f'{at}/name')}) "
                f"is at **{self._money(QUOTES, f'{at}/price')}**, "
                f"{self.claims.figure('up' if q['change'] >= 0 else 'down', QUOTES, f'{at}/change', kind='sign')} "
                f"{self._derived(money(abs(q['change'])), QUOTES, change, 'money')} "
                f"({self._derived(percent(abs(q['change_pct'])), QUOTES, change_pct, 'percent')}) "
                f"from the previous close of "
                f"{self._money(QUOTES, f'{at}/previous_close')}."
            )  # fmt: skip
        return "\n\n".join(lines)

    def positions(self) -> str:
        """One symbol's holdings: shares and average cost per account."""
        symbol = self.params["symbol"]
        positions = self.data[POSITIONS]["positions"]
        if not positions:
            return f"You do not hold {symbol} in {self._scope()}."
        lines = [f"Your {symbol} holdings:", ""]
        for i in range(len(positions)):
            at = f"/positions/{i}"
            lines.append(
                f"- **{self._account(POSITIONS, f'{at}/account')}**: "
                f"{self._number(POSITIONS, f'{at}/quantity')} "
                f"shares at an average cost of "
                f"{self._money(POSITIONS, f'{at}/cost_basis')} a share."
            )  # fmt: skip
        if len(positions) > 1:  # "how many VOO shares do I have in total?" (issue 54)
            quantities = tuple(f"/positions/{i}/quantity" for i in range(len(positions)))
            held = sum(p["quantity"] for p in positions)
            total = self.claims.figure(number(held), POSITIONS, op="sum", inputs=quantities,
                                       kind="quantity")  # fmt: skip
            # "the average price I paid across both accounts": cost over shares, weighted
            costs = Formula(op="sum", inputs=tuple(
                Formula(op="product", inputs=(q, q.replace("quantity", "cost_basis")))
                for q in quantities
            ))  # fmt: skip
            paid = sum(p["quantity"] * p["cost_basis"] for p in positions) / held
            average = self._derived(
                money(paid), POSITIONS,
                Formula(op="quotient", inputs=(costs, Formula(op="sum", inputs=quantities)),
                        decimals=2),
                "money",
            )  # fmt: skip
            lines.append(f"- **Total**: {total} shares at an average cost of {average} a share.")
        return "\n".join(lines)

    def positions_list(self) -> str:
        """The positions in scope as a table (their count when none is left out)."""
        listed = self.data[LIST]["positions"]
        kept = [i for i, p in enumerate(listed) if self._kept(p["symbol"], p["account"], listed)]
        scope = self._scope() + self._without()
        kind = self.params.get("asset_class")
        if not kept:
            return f"You hold no {kind or ''} positions in {scope}.".replace("  ", " ")
        what = f"{kind} positions" if kind else "positions"
        if len(kept) < len(listed):  # a count of what is left is no data value
            head = f"Your {what} in {scope}:"
        else:
            count = self.claims.figure(str(len(listed)), LIST, op="count", inputs=("/positions",))
            head = f"You hold {count} {what} in {scope}:"
        lines = [
            head,
            "",
            "| Account | Symbol | Shares | Avg cost | Class |",
            "|---|---|---:|---:|---|",
        ]
        for i in kept:
            at = f"/positions/{i}"
            lines.append(
                f"| {self._account(LIST, f'{at}/account')} | {self._value(LIST, f'{at}/symbol')} | "
                f"{self._number(LIST, f'{at}/quantity')} | "
                f"{self._money(LIST, f'{at}/cost_basis')} | "
                f"{self._value(LIST, f'{at}/asset_class')} |"
            )  # fmt: skip
        return "\n".join(lines)

    def symbol_performance(self) -> str:
        """One symbol's price and, per account, value, cost and P/L (derived over positions and the quote)."""
        symbol = self.params["symbol"]
        change_pct = self._percent(QUOTES, "/quotes/0/change_pct", signed=True)
        price = (
            f"{self._value(QUOTES, '/quotes/0/symbol')} trades at "
            f"**{self._money(QUOTES, '/quotes/0/price')}**, "
            f"{change_pct} today."
        )
        rows = self._rows(POSITIONS)
        if not rows:
            return f"You do not hold {symbol} in {self._scope()}. {price}"
        lines = [price, ""]
        period = _PERIODS.get(self.params.get("period", ""))
        if period:  # asked over a period the data has no per-symbol figure for: said plainly
            lines = [
                price,
                "",
                f"The data has no {period} figure per holding; since you bought it:",
                "",
            ]
        today = self.params.get("period") == "1D"  # "how much did my position make today"
        for r in rows:
            lines.append(
                f"- **{self._account(POSITIONS, f'{r.at}/account')}**: "
                f"{self._number(POSITIONS, f'{r.at}/quantity')} shares worth "
                f"**{self._derived(money(r.market_value), POSITIONS, r.f_value, 'money')}** "
                f"(cost {self._derived(money(r.cost_value), POSITIONS, r.f_cost, 'money')} at "
                f"{self._money(POSITIONS, f'{r.at}/cost_basis')} a share): "
                f"{self._derived(money(r.pl, signed=True), POSITIONS, r.f_pl, 'money')} "
                f"({self._derived(percent(r.pl_pct, signed=True), POSITIONS, r.f_pct, 'percent')})"
                + (f"; today {self._moved(r)}." if today else ".")
            )  # fmt: skip
        if len(rows) > 1:
            t = Total(rows)
            lines.append(
                f"- **Total**: {self._derived(number(t.quantity), POSITIONS, t.f_quantity, 'quantity')} "
                f"shares worth **{self._derived(money(t.market_value), POSITIONS, t.f_value, 'money')}**, "
                f"{self._derived(money(t.pl, signed=True), POSITIONS, t.f_pl, 'money')} "
                f"({self._derived(percent(t.pl_pct, signed=True), POSITIONS, t.f_pct, 'percent')}) "
                f"on a cost of {self._derived(money(t.cost_value), POSITIONS, t.f_cost, 'money')}"
                + (f"; today {self._moved(*rows)}." if today else ".")
            )  # fmt: skip
        return "\n".join(lines)

    def _moved(self, *rows: PL) -> str:
        """The positions' move today: shares × the quote's change (summed), bound."""
        products, value = [], 0.0
        for r in rows:
            change_at = r.price_at.replace("/price", "/change")
            value += r.quantity * resolve_pointer(self.data[QUOTES], change_at.partition("#")[2])
            products.append(Formula(op="product", inputs=(f"{r.at}/quantity", change_at)))
        moved = (
            products[0].model_copy(update={"decimals": 2}) if len(products) == 1
            else Formula(op="sum", inputs=tuple(products), decimals=2)
        )  # fmt: skip
        return self._derived(money(value, signed=True), POSITIONS, moved, "money")

    def portfolio_ranking(self) -> str:
        """The positions ranked by return, P/L or value; the winner first, then a table."""
        positions = self.data[LIST]["positions"]
        rows = self._rows(LIST)
        if not rows:
            return f"You hold no positions to rank in {self._scope()}."
        rows = [r for r in rows if self._kept(r.symbol, r.account, positions)]
        if not rows:
            return "You hold no positions to rank once those are left out."
        direction = self.params.get("direction", "best")
        by = self.params.get("by", "return")
        if by == "today":
            return self._movers({r.symbol for r in rows}, direction == "best")
        basis = {"value": "market_value", "gain": "pl"}.get(by, "pl_pct")
        ranked = sorted(rows, key=lambda r: getattr(r, basis), reverse=direction == "best")
        limit = int(self.params.get("limit") or 5)
        top = ranked[0]

        def value(r: PL) -> str:
            return self._derived(money(r.market_value), LIST, r.f_value, "money")

        def pl(r: PL) -> str:
            return self._derived(money(r.pl, signed=True), LIST, r.f_pl, "money")

        def pct(r: PL) -> str:
            return self._derived(percent(r.pl_pct, signed=True), LIST, r.f_pct, "percent")

        def who(r: PL) -> tuple[str, str]:
            return self._value(LIST, f"{r.at}/symbol"), self._account(LIST, f"{r.at}/account")

        if by == "value" and self.params.get("combined"):
            return self._combined(rows, direction == "best", limit)
        symbol, where = who(top)
        if by == "value":
            size = "biggest" if direction == "best" else "smallest"
            head = f"Your {size} position by market value is **{symbol}** in {where}: {value(top)}."
        else:
            kind = "in dollars" if by == "gain" else "by return"
            head = (
                f"Your {'best' if direction == 'best' else 'worst'} performer {kind} is "
                f"**{symbol}** in {where}: {pl(top)} ({pct(top)})."
            )
            period = _PERIODS.get(self.params.get("period", ""))
            if period:  # "best performing stock ytd": no such figure per holding, said so
                head = f"The data has no {period} figure per holding; since you bought them, {head[0].lower()}{head[1:]}"
        lines = [head, "", "| Symbol | Account | Value | P/L | P/L % |", "|---|---|---:|---:|---:|"]
        for r in ranked[:limit]:
            symbol, where = who(r)
            lines.append(f"| {symbol} | {where} | {value(r)} | {pl(r)} | {pct(r)} |")
        return "\n".join(lines)

    def _combined(self, rows: list[PL], best: bool, limit: int) -> str:
        """Holdings ranked by market value with each symbol's accounts added together.

        "If you combine accounts, what's my biggest holding": VOO's 25 + 8 shares.
        """
        groups: dict[str, list[PL]] = {}
        for r in rows:
            groups.setdefault(r.symbol, []).append(r)
        ranked = sorted(groups.items(), key=lambda kv: Total(kv[1]).market_value, reverse=best)

        def line(members: list[PL]) -> tuple[str, str, str]:
            t = Total(members)
            symbol = self._value(LIST, f"{members[0].at}/symbol")
            shares = self._derived(number(t.quantity), LIST, t.f_quantity, "quantity")
            return symbol, shares, self._derived(money(t.market_value), LIST, t.f_value, "money")

        symbol, shares, value = line(ranked[0][1])
        size = "biggest" if best else "smallest"
        lines = [
            f"Your {size} holding with its accounts combined is **{symbol}**: {shares} shares "
            f"worth {value}.", "", "| Symbol | Shares | Value |", "|---|---:|---:|",
        ]  # fmt: skip
        for _, members in ranked[:limit]:
            lines.append("| {} | {} | {} |".format(*line(members)))
        return "\n".join(lines)

    def _movers(self, held: set[str], up: bool) -> str:
        """The symbols held, ranked by today's change, the first named first.

        Issue 54: "which of my stocks had the biggest % gain today?" was answered with
        the biggest position.
        """
        quotes = self.data[QUOTES]["quotes"]
        ranked = sorted((q["change_pct"], i) for i, q in enumerate(quotes) if q["symbol"] in held)
        if up:
            ranked.reverse()
        limit = int(self.params.get("limit") or 5)

        def said(i: int, what: str = " ") -> str:
            at = f"/quotes/{i}"
            return (
                f"**{self._value(QUOTES, f'{at}/symbol')}**{what}"
                f"{self._percent(QUOTES, f'{at}/change_pct', signed=True)} "
                f"({self._money(QUOTES, f'{at}/change', signed=True)}) at "
                f"{self._money(QUOTES, f'{at}/price')}"
            )

        what = f" moved most {'up' if up else 'down'} of your holdings today, "
        rest = [f"- {said(i)}" for _, i in ranked[1:limit]]
        return said(ranked[0][1], what) + "." + ("\n\nNext:\n" + "\n".join(rest) if rest else "")

    def performance(self) -> str:
        """Each account over the timeframe, and the completed transfers when they were fetched.

        With several accounts and a ``rank`` (``most``/``least``), the best (or worst)
        one by return is named first ("which account did best this month?"); their total
        closes the list ("how much did my whole
        portfolio make today?"): sums of the accounts' figures, its return as a
        percentage of their start values (each account's own return is that ratio).
        """
        rows = self.data[PERFORMANCE]["performance"]
        lines = []
        rank = self.params.get("rank")
        if len(rows) > 1 and rank:
            pick = max if rank == "most" else min
            first = pick(range(len(rows)), key=lambda i: rows[i]["return_pct"])
            at = f"/performance/{first}"
            lines += [
                f"**{self._account(PERFORMANCE, f'{at}/account')}** did "
                f"{'best' if rank == 'most' else 'worst'}: "
                f"{self._percent(PERFORMANCE, f'{at}/return_pct', signed=True)} "
                f"({self._money(PERFORMANCE, f'{at}/return_amount', signed=True)}).",
                "",
            ]  # fmt: skip
        lines += [f"Performance over {self._value(PERFORMANCE, '/timeframe')}:", ""]
        for i in range(len(rows)):
            at = f"/performance/{i}"
            lines.append(
                f"- **{self._account(PERFORMANCE, f'{at}/account')}**: "
                f"{self._percent(PERFORMANCE, f'{at}/return_pct', signed=True)} "
                f"({self._money(PERFORMANCE, f'{at}/return_amount', signed=True)}), "
                f"from {self._money(PERFORMANCE, f'{at}/start_value')} "
                f"to {self._money(PERFORMANCE, f'{at}/end_value')}, with net "
                f"contributions of {self._money(PERFORMANCE, f'{at}/net_contributions')}."
            )  # fmt: skip
        if len(rows) > 1:
            lines.append(self._all_accounts(rows))
        transfers = self.data.get(TRANSFERS)
        if transfers:
            lines += [
                "",
                f"All completed deposits: {self._money(TRANSFERS, '/total_deposits')}; "
                f"withdrawals: {self._money(TRANSFERS, '/total_withdrawals')}.",
            ]  # fmt: skip
        return "\n".join(lines)

    def _all_accounts(self, rows: Sequence[Mapping[str, Any]]) -> str:
        """The performance rows' total, each figure a sum of theirs (bound as formulas)."""

        def total(field: str) -> Formula:
            return Formula(op="sum", inputs=tuple(f"/performance/{i}/{field}"
                                                  for i in range(len(rows))), decimals=2)  # fmt: skip

        def said(field: str, signed: bool = False) -> str:
            value = round(sum(r[field] for r in rows), 2)
            return self._derived(money(value, signed=signed), PERFORMANCE, total(field), "money")

        gained, start = (sum(r[f] for r in rows) for f in ("return_amount", "start_value"))
        share = Formula(op="percent_of", inputs=(total("return_amount"), total("start_value")),
                        decimals=2)  # fmt: skip
        pct = self._derived(percent(gained / start * 100 if start else 0.0, signed=True),
                            PERFORMANCE, share, "percent")  # fmt: skip
        return (
            f"- **All accounts**: {pct} ({said('return_amount', signed=True)}), from "
            f"{said('start_value')} to {said('end_value')}, with net contributions of "
            f"{said('net_contributions')}."
        )

    def transfers(self) -> str:
        """The last transfer, or the transfers in scope with their totals."""
        t = self.data[TRANSFERS]
        params = self.params
        scope = self._scope() + self._window(TRANSFERS)
        what = {"deposit": "deposits", "withdrawal": "withdrawals"}.get(
            params.get("type", ""), "deposits or withdrawals"
        )
        if params.get("status"):
            what = f"{params['status']} {what}"
        if params.get("method"):
            what = f"{params['method']} {what}"
        if not t["transfers"]:
            return f"No {what} in {scope}."
        if params.get("limit") == 1:
            x, at = t["transfers"][0], "/transfers/0"
            return (
                f"Your last {what.rstrip('s').replace('deposits or withdrawal', 'transfer')}: "
                f"{'an' if x['method'][0] in 'AEIOU' else 'a'} {self._value(TRANSFERS, f'{at}/method')} "
                f"{self._value(TRANSFERS, f'{at}/type')} of "
                f"**{self._money(TRANSFERS, f'{at}/amount')}** "
                f"{'into' if x['type'] == 'deposit' else 'from'} "
                f"{self._account(TRANSFERS, f'{at}/account')} on {self._date(TRANSFERS, f'{at}/timestamp')}, "
                f"**{self._value(TRANSFERS, f'{at}/status')}**."
            )  # fmt: skip
        lines = [
            f"Transfers in {scope}: deposits "
            f"{self._money(TRANSFERS, '/total_deposits')}, withdrawals "
            f"{self._money(TRANSFERS, '/total_withdrawals')} (completed).",
            "",
            "| Date | Account | Type | Method | Amount | Status |",
            "|---|---|---|---|---:|---|",
        ]  # fmt: skip
        for i in range(len(t["transfers"])):
            at = f"/transfers/{i}"
            lines.append(
                f"| {self._date(TRANSFERS, f'{at}/timestamp')} | {self._account(TRANSFERS, f'{at}/account')} "
                f"| {self._value(TRANSFERS, f'{at}/type')} | {self._value(TRANSFERS, f'{at}/method')} "
                f"| {self._money(TRANSFERS, f'{at}/amount')} "
                f"| {self._value(TRANSFERS, f'{at}/status')} |"
            )  # fmt: skip
        return "\n".join(lines)

    def activity(self) -> str:
        """The last trade, or the trades in scope as a table."""
        trades = self.data[ACTIVITY]["trades"]
        scope = self._scope() + self._window(ACTIVITY)
        side = {"BUY": "buys", "SELL": "sells"}.get(self.params.get("side", ""), "trades")
        what = f"{self.params['symbol']} {side}" if self.params.get("symbol") else side
        if not trades:
            return f"No {what} in {scope}."

        def row(i: int) -> tuple[str, ...]:
            at = f"/trades/{i}"
            return (
                self._date(ACTIVITY, f"{at}/timestamp"),
                self._account(ACTIVITY, f"{at}/account"),
                self._value(ACTIVITY, f"{at}/side"),
                self._value(ACTIVITY, f"{at}/symbol"),
                self._number(ACTIVITY, f"{at}/quantity"),
                self._money(ACTIVITY, f"{at}/price"),
            )

        if self.params.get("limit") == 1:
            date, account, side_, symbol, shares, price = row(0)
            return (
                f"Your last {what.rstrip('s')}: **{side_}** {shares} {symbol} at {price} in "
                f"{account} on {date}."
            )
        lines = [
            f"Recent {what} in {scope}:",
            "",
            "| Date | Account | Side | Symbol | Shares | Price |",
            "|---|---|---|---|---:|---:|",
        ]
        lines += ["| " + " | ".join(row(i)) + " |" for i in range(len(trades))]
        return "\n".join(lines)

    def summary(self, *, cash: bool) -> str:
        """Total value (or cash) in scope, per account; a ranking, or a sum of all but one."""
        s = self.data[SUMMARY]
        params = self.params
        field = "total_cash" if cash else "total_value"
        index = {a["account"]: i for i, a in enumerate(s["accounts"])}

        def of(account: Mapping[str, Any], name: str) -> str:
            at = f"/accounts/{index[account['account']]}/{name}"
            return self._money(SUMMARY, at)

        def name(account: Mapping[str, Any]) -> str:
            return self._account(SUMMARY, f"/accounts/{index[account['account']]}/account")

        accounts = [a for a in s["accounts"] if a["account"] != params.get("exclude_account")]
        rank = params.get("rank")
        if rank and accounts:
            ordered = sorted(accounts, key=lambda a: a[field], reverse=rank == "most")
            win = ordered[0]
            lines = [f"**{name(win)}** has the {rank} {'cash' if cash else 'value'}: {of(win, field)}.", ""]  # fmt: skip
            lines += [f"{i}. {name(a)}: {of(a, field)}" for i, a in enumerate(ordered, start=1)]
            return "\n".join(lines)
        if params.get("exclude_account"):  # the all-but-one figure, a sum of the others
            terms = tuple(f"/accounts/{index[a['account']]}/{field}" for a in accounts)
            total_f = Formula(op="sum", inputs=terms, decimals=2)
            total = self._derived(money(round(sum(a[field] for a in accounts), 2)), SUMMARY, total_f, "money")  # fmt: skip
        else:
            total = self._money(SUMMARY, f"/{field}")
        lines = []
        unsettled: list[Formula] = []
        for a in accounts:
            if cash:
                at = f"/accounts/{index[a['account']]}"
                gap = Formula(op="difference", inputs=(f"{at}/total_cash", f"{at}/settled_cash"),
                              decimals=2)  # fmt: skip
                waiting = round(a["total_cash"] - a["settled_cash"], 2)
                if waiting:
                    unsettled.append(gap)
                lines.append(
                    f"- **{name(a)}**: {of(a, 'total_cash')} cash, of which "
                    f"{of(a, 'settled_cash')} is settled"
                    + (f" and {self._derived(money(waiting), SUMMARY, gap, 'money')} not yet settled."
                       if waiting else ".")
                )  # fmt: skip
            else:
                lines.append(
                    f"- **{name(a)}**: {of(a, 'total_value')} ({of(a, 'market_value')} "
                    f"invested, {of(a, 'total_cash')} cash)."
                )
        if len(unsettled) > 1:  # "how much unsettled cash do I have in total"
            waiting = round(sum(a["total_cash"] - a["settled_cash"] for a in accounts), 2)
            both = Formula(op="sum", inputs=tuple(unsettled), decimals=2)
            lines.append(f"- Not yet settled in all: "
                         f"{self._derived(money(waiting), SUMMARY, both, 'money')}.")  # fmt: skip
        head = f"Cash: **{total}**" if cash else f"Total value: **{total}**"
        return f"{head} in {self._scope()}{self._without()}.\n\n" + "\n".join(lines)

    def cost_of_shares(self) -> str:
        """N shares at the current price: the quantity (the question's) times the price."""
        quantity, q = self.params["quantity"], self.data[QUOTES]["quotes"][0]
        cost = Formula(op="product", inputs=(float(quantity), "/quotes/0/price"), decimals=2)
        total = round(float(quantity) * q["price"], 2)
        return (
            f"{number(quantity)} shares of **{self._value(QUOTES, '/quotes/0/symbol')}** at "
            f"{self._money(QUOTES, '/quotes/0/price')} cost "
            f"**{self._derived(money(total), QUOTES, cost, 'money')}**, before any commission."
        )

    def portfolio_share(self) -> str:
        """One symbol's market value as a share of the invested value and of all value with cash."""
        symbol = self.params["symbol"]
        rows = self._rows(LIST)
        mine = [r for r in rows if r.symbol == symbol]
        scope = self._scope()
        if not mine:
            return f"You hold no {symbol} in {scope}, so it is 0% of your portfolio."
        held, everything = Total(mine), Total(rows)
        cash = f"{SUMMARY}#/total_cash"
        with_cash = Formula(op="sum", inputs=(everything.f_value, cash), decimals=2)
        cash_value = self.data[SUMMARY]["total_cash"]
        whole = round(everything.market_value + cash_value, 2)
        of_invested = Formula(
            op="percent_of", inputs=(held.f_value, everything.f_value), decimals=2
        )
        of_all = Formula(op="percent_of", inputs=(held.f_value, with_cash), decimals=2)
        value = self._derived(money(held.market_value), LIST, held.f_value, "money")
        return (
            f"**{symbol}** is **{self._derived(percent(round(held.market_value / everything.market_value * 100, 2)), LIST, of_invested, 'percent')}** "
            f"of your invested value in {scope} ({value} of "
            f"{self._derived(money(everything.market_value), LIST, everything.f_value, 'money')}), and "
            f"{self._derived(percent(round(held.market_value / whole * 100, 2)), LIST, of_all, 'percent')} "
            f"of everything with cash ({self._derived(money(held.market_value), LIST, held.f_value, 'money')} of "
            f"{self._derived(money(whole), LIST, with_cash, 'money')})."
        )  # fmt: skip

    def allocation(self) -> str:
        """The market value of each asset class and the cash, each as a share of everything.

        Classes from the positions' ``asset_class``, largest first; cash is the account
        summary's ``total_cash``; every share is of the positions' value plus that cash
        (what "my allocation" splits), each a formula over the same fields.
        """
        rows = self._rows(LIST)
        scope = self._scope()
        if not rows:
            return f"You hold no positions in {scope}."
        listed = self.data[LIST]["positions"]
        classes: dict[str, list[PL]] = {}
        for r in rows:
            classes.setdefault(listed[int(r.at.rsplit("/", 1)[1])]["asset_class"], []).append(r)
        everything = Total(rows)
        cash_value = self.data[SUMMARY]["total_cash"]
        whole = round(everything.market_value + cash_value, 2)
        with_cash = Formula(op="sum", inputs=(everything.f_value, f"{SUMMARY}#/total_cash"),
                            decimals=2)  # fmt: skip
        names = {"etf": "ETFs", "stocks": "Stocks", "bonds": "Bonds", "cash": "Cash funds"}
        lines = [
            f"Your allocation in {scope}, of "
            f"**{self._derived(money(whole), LIST, with_cash, 'money')}** with cash:",
            "",
        ]
        parts = sorted(classes.items(), key=lambda kv: -Total(kv[1]).market_value)
        for name, members in parts:
            t = Total(members)
            share = Formula(op="percent_of", inputs=(t.f_value, with_cash), decimals=2)
            lines.append(
                f"- **{names.get(name, name)}**: "
                f"{self._derived(money(t.market_value), LIST, t.f_value, 'money')} "
                f"({self._derived(percent(round(t.market_value / whole * 100, 2)), LIST, share, 'percent')})"
            )  # fmt: skip
        cash_share = Formula(op="percent_of", inputs=(f"{SUMMARY}#/total_cash", with_cash),
                             decimals=2)  # fmt: skip
        lines.append(
            f"- **Cash**: {self._money(SUMMARY, '/total_cash')} "
            f"({self._derived(percent(round(cash_value / whole * 100, 2)), LIST, cash_share, 'percent')})"
        )  # fmt: skip
        return "\n".join(lines)

    def account_comparison(self) -> str:
        """Two accounts' values: which is worth more, and by how much."""
        s = self.data[SUMMARY]
        index = {a["account"]: i for i, a in enumerate(s["accounts"])}
        pair = [self.params["account"], self.params["other_account"]]
        missing = [a for a in pair if a not in index]
        if missing:
            return f"I have no account {missing[0]} to compare."
        first, second = sorted(
            pair, key=lambda a: s["accounts"][index[a]]["total_value"], reverse=True
        )
        a, b = (f"/accounts/{index[x]}" for x in (first, second))
        va, vb = (
            s["accounts"][index[first]]["total_value"],
            s["accounts"][index[second]]["total_value"],
        )
        gap = Formula(op="difference", inputs=(f"{a}/total_value", f"{b}/total_value"), decimals=2)
        if va == vb:
            return (
                f"**{self._account(SUMMARY, f'{a}/account')}** and **{self._account(SUMMARY, f'{b}/account')}** "
                f"are worth the same: {self._money(SUMMARY, f'{a}/total_value')}."
            )
        return (
            f"**{self._account(SUMMARY, f'{a}/account')}** is worth more: "
            f"{self._money(SUMMARY, f'{a}/total_value')}, against "
            f"{self._money(SUMMARY, f'{b}/total_value')} in "
            f"{self._account(SUMMARY, f'{b}/account')}, a difference of "
            f"**{self._derived(money(round(va - vb, 2)), SUMMARY, gap, 'money')}**."
        )  # fmt: skip

    def class_total(self) -> str:
        """The market value of one asset class, with its cost, P/L and positions."""
        kind = {"etf": "ETFs", "stocks": "stocks", "bonds": "bonds", "cash": "cash funds"}[
            self.params["asset_class"]
        ]
        rows = self._rows(LIST)
        scope = self._scope()
        if not rows:
            return f"You hold no {kind} in {scope}."
        t = Total(rows)
        listed = len(self.data[LIST]["positions"])
        count = self.claims.figure(str(listed), LIST, op="count", inputs=("/positions",))
        lines = [
            f"Your {kind} in {scope} are worth **{self._derived(money(t.market_value), LIST, t.f_value, 'money')}** "
            f"({count} positions, cost {self._derived(money(t.cost_value), LIST, t.f_cost, 'money')}, "
            f"{self._derived(money(t.pl, signed=True), LIST, t.f_pl, 'money')}).",
            "",
            "| Account | Symbol | Value |",
            "|---|---|---:|",
        ]  # fmt: skip
        for r in rows:
            lines.append(
                f"| {self._account(LIST, f'{r.at}/account')} | {self._value(LIST, f'{r.at}/symbol')} "
                f"| {self._derived(money(r.market_value), LIST, r.f_value, 'money')} |"
            )  # fmt: skip
        return "\n".join(lines)

    def portfolio_pl(self) -> str:
        """P/L since purchase of every position in scope, in total and per account."""
        rows = self._rows(LIST)
        scope = self._scope()
        if not rows:
            return f"You hold no positions in {scope}."
        t = Total(rows)
        lines = [
            f"Since you bought them, your positions in {scope} are "
            f"**{self._derived(money(t.pl, signed=True), LIST, t.f_pl, 'money')}** "
            f"({self._derived(percent(t.pl_pct, signed=True), LIST, t.f_pct, 'percent')}) on a cost of "
            f"{self._derived(money(t.cost_value), LIST, t.f_cost, 'money')}; they are worth "
            f"{self._derived(money(t.market_value), LIST, t.f_value, 'money')}.",
        ]  # fmt: skip
        accounts = list(dict.fromkeys(r.account for r in rows))
        if len(accounts) > 1:
            lines.append("")
            for account in accounts:
                group = [r for r in rows if r.account == account]
                g = Total(group)
                lines.append(
                    f"- **{self._account(LIST, f'{group[0].at}/account')}**: "
                    f"{self._derived(money(g.pl, signed=True), LIST, g.f_pl, 'money')} "
                    f"({self._derived(percent(g.pl_pct, signed=True), LIST, g.f_pct, 'percent')})"
                )  # fmt: skip
        return "\n".join(lines)

    def facts(self) -> str:
        """A fact: its title, its text as written, its source."""
        return (
            f"**{self._value('tool:facts:v1', '/title')}**\n\n"
            f"{self._value('tool:facts:v1', '/snippet')}\n\n"
            f"_Source: {self._value('tool:facts:v1', '/source')}_"
        )
