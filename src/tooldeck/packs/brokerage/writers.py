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

from tooldeck.core.claims import Formula
from tooldeck.packs.brokerage.derived import money, number, percent
from tooldeck.packs.brokerage.holdings_writers import HoldingsWriter
from tooldeck.packs.brokerage.writing import (
    ACTIVITY,
    PERFORMANCE,
    QUOTES,
    SUMMARY,
    TRANSFERS,
)

__all__ = ["AnswerWriter"]


class AnswerWriter(HoldingsWriter):
    """Writes one answer; each public method is an intent's writer (``BoundWriter``'s args).

    The holdings' intents are ``HoldingsWriter``'s; these are the accounts', the
    market's, the activity's and the facts'.
    """

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

    def facts(self) -> str:
        """A fact: its title, its text as written, its source."""
        return (
            f"**{self._value('tool:facts:v1', '/title')}**\n\n"
            f"{self._value('tool:facts:v1', '/snippet')}\n\n"
            f"_Source: {self._value('tool:facts:v1', '/source')}_"
        )
