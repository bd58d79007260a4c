"""The brokerage answers about holdings: positions, their P/L, rankings, shares, classes.

``HoldingsWriter`` writes the intents that read the positions (with the quotes that
price them): a symbol's holdings and how they did, the positions ranked, a symbol's
share of the portfolio, the allocation over asset classes, a class's value and the P/L
of every position. Each figure is bound to its field or to the formula that derives it.
"""

from __future__ import annotations

from tooldeck.core.claims import Formula, resolve_pointer
from tooldeck.packs.brokerage.derived import PL, Total, money, number, percent
from tooldeck.packs.brokerage.writing import (
    CLASS_NAMES,
    LIST,
    POSITIONS,
    QUOTES,
    SUMMARY,
    BoundWriter,
)

__all__ = ["HoldingsWriter"]

_PERIODS = {"YTD": "year-to-date", "1Y": "one-year", "3M": "three-month", "1M": "one-month",
            "1W": "one-week"}  # fmt: skip
"""A timeframe as words, where the data has no per-holding figure for it."""


class HoldingsWriter(BoundWriter):
    """The holdings' intents (``writers.AnswerWriter`` adds the others)."""

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
                head = (
                    f"The data has no {period} figure per holding; since you bought them, "
                    f"{head[0].lower()}{head[1:]}"
                )
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
        lines = [
            f"Your allocation in {scope}, of "
            f"**{self._derived(money(whole), LIST, with_cash, 'money')}** with cash:",
            "",
        ]
        totals = sorted(
            ((name, Total(members)) for name, members in classes.items()),
            key=lambda nt: -nt[1].market_value,
        )
        for name, t in totals:
            share = Formula(op="percent_of", inputs=(t.f_value, with_cash), decimals=2)
            label = CLASS_NAMES.get(name, name)
            lines.append(
                f"- **{label[:1].upper() + label[1:]}**: "
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

    def class_total(self) -> str:
        """The market value of one asset class, with its cost, P/L and positions."""
        kind = CLASS_NAMES[self.params["asset_class"]]
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
