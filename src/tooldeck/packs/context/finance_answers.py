"""Answers about the user's money from their statements: balances, spending, trades.

Each reads the ``user_context`` result (a category's summary, or the ``query`` action's
transactions and totals) and binds every figure to its field (``AnswerWriter``):
nothing is added across accounts or currencies that the result did not add.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tooldeck.packs.context.writing import AnswerWriter, each_currency, not_ready

__all__ = ["balances_answer", "spending_answer", "trades_answer"]


def balances_answer(w: AnswerWriter) -> tuple[str, list[str]]:
    """Each balance and the largest holdings the statements state, or what they cannot say.

    Only what a statement states (``LEDGERBAL``, ``INVBAL``, ``INVPOSLIST``), each figure
    bound to its record, with its date: nothing is added up across accounts or currencies.
    """
    at = "/categories/0"
    problem = not_ready(w, at)
    if problem is not None:
        return problem
    summary = w.at(f"{at}/summary")
    balances, holdings = summary.get("balances", []), summary.get("holdings", [])
    cited = list(w.at(at)["source_ids"])
    if not balances and not holdings:
        return (
            "Your statements state no balance and no holding (OFX LEDGERBAL, INVBAL or "
            "INVPOSLIST), so I cannot say how much you have; I can say what you spent "
            "or received."
        ), cited
    lines = []
    for k, b in enumerate(balances):
        here, source = f"{at}/summary/balances/{k}", b["source_id"]
        line = (
            f"- {w.value(source, f'{here}/account')} ({b['kind']}): "
            f"{w.money(source, f'{here}/balance', b['currency'])}"
        )
        if b.get("as_of"):
            line += f" on {w.value(source, f'{here}/as_of', 'date')}"
        lines.append(line)
    for k, h in enumerate(holdings[:5]):
        here, source = f"{at}/summary/holdings/{k}", h["source_id"]
        name = (
            w.value(source, f"{here}/ticker")
            if h.get("ticker")
            else w.value(source, f"{here}/security")
        )
        worth = h.get("market_value")
        lines.append(
            f"- {name}: {w.value(source, f'{here}/units')} units"
            + (f" worth {w.money(source, f'{here}/market_value', h['currency'])}"
               if worth is not None else "")
        )  # fmt: skip
    more = f" ({len(holdings) - 5} more holdings)" if len(holdings) > 5 else ""
    return "**Balances** from your statements" + more + ":\n" + "\n".join(lines), cited


def spending_answer(w: AnswerWriter, listed: str = "Latest") -> tuple[str, list[str]]:
    """What was spent (and received) in the query's window, and its first transactions.

    ``listed``: "Latest" (by date), or "Largest" (by amount: the largest expense is
    said first, as the question asks for it).
    """
    read = _queried(w, "on")
    if isinstance(read, tuple):
        return read
    query, source, what, when = read.query, read.source, read.what, read.when
    totals, transactions = query["totals"], query["transactions"]
    currency = totals["currency"]
    if not totals["count"]:
        return f"I found no transactions{what}{when}.", list(query["source_ids"])
    count = totals["count"]
    if currency is None:  # several currencies: each its own, never added
        text = (
            f"In the {w.value(source, '/query/totals/count')} transactions{what}{when}, you "
            + each_currency(w, source, "/query/totals/by_currency")
        )
    else:
        text = (
            f"You spent {w.money(source, '/query/totals/spent', currency)}{what}{when}, in "
            f"{w.value(source, '/query/totals/count')} transaction{'s' if count != 1 else ''}"
            + (
                f" (and received {w.money(source, '/query/totals/received', currency)})"
                if totals["received"]
                else ""
            )
            + "."
        )
    if transactions:
        text += (
            f" {listed}: "
            + "; ".join(
                f"{w.value(source, f'/query/transactions/{k}/date', 'date')} "
                f"{w.value(source, f'/query/transactions/{k}/payee')} "
                f"{w.money(source, f'/query/transactions/{k}/amount', t['currency'])}"
                for k, t in enumerate(transactions[:3])
            )
            + "."
        )
    if listed == "Largest" and transactions and transactions[0]["amount"] < 0:
        first = transactions[0]
        text = (
            f"Your largest expense{what}{when}: "
            f"{w.value(source, '/query/transactions/0/payee')} "
            f"{w.money(source, '/query/transactions/0/amount', first['currency'])} on "
            f"{w.value(source, '/query/transactions/0/date', 'date')}. " + text
        )
    return text, list(query["source_ids"])


@dataclass(frozen=True, slots=True)
class _Queried:
    """The ``query`` action's result, its source, and what and when it asked for.

    ``what`` and ``when`` are said and bound: " on Uber", " from 2026-04-01 to 2026-04-30".
    """

    query: Mapping[str, Any]
    source: str
    what: str
    when: str


def _queried(w: AnswerWriter, on: str) -> _Queried | tuple[str, list[str]]:
    """The query read for an answer, or what to say when there is none (and its sources)."""
    problem = not_ready(w, "/categories/0")
    query = w.data.get("query")
    if problem is not None or not query:
        return problem or ("I could not read your transactions.", [])
    source = query["source_ids"][0] if query["source_ids"] else ""
    what = f" {on} {w.value(source, '/query/search')}" if query.get("search") else ""
    when = (
        f" from {w.value(source, '/query/date_from', 'date')} to "
        f"{w.value(source, '/query/date_to', 'date')}"
        if query.get("date_from") and query.get("date_to")
        else ""
    )
    return _Queried(query, source, what, when)


_TRADED = {
    "investment buy": ("buy", "spent", "You spent {total} in {count} {kind}"),
    "investment sell": ("sell", "received", "You received {total} from {count} {kind}"),
}
"""A trade question's category → (what its transactions are called, the total said,
the sentence that says it)."""


def trades_answer(w: AnswerWriter) -> tuple[str, list[str]]:
    """The investment transactions asked for: the cash they moved, and the latest ones.

    Each line: day, action, units, security, unit price and the cash moved, each bound
    to its field; income (a dividend) is said as received.
    """
    read = _queried(w, "of")
    if isinstance(read, tuple):
        return read
    query, source, what, when = read.query, read.source, read.what, read.when
    totals, trades = query["totals"], query["transactions"]
    asked = query.get("finance_category")
    kind, total, said = _TRADED.get(asked or "") or (
        (f"{asked} payment", "received", "You received {total} in {count} {kind}") if asked
        else ("investment transaction", "", "")
    )  # fmt: skip
    if not totals["count"]:
        return f"Your statements hold no {kind}s{what}{when}.", list(query["source_ids"])
    kind += "s" if totals["count"] != 1 else ""
    currency = totals["currency"]
    count = w.value(source, "/query/totals/count")
    if currency is None:  # several currencies: each its own, never added
        text = f"In the {count} {kind}{what}{when}, you " + each_currency(
            w, source, "/query/totals/by_currency"
        )
    elif total:
        money = w.money(source, f"/query/totals/{total}", currency)
        text = said.format(total=money, count=count, kind=kind) + f"{what}{when}."
    else:
        text = (
            f"{count} {kind}{what}{when}: money out (buys, expenses) "
            f"{w.money(source, '/query/totals/spent', currency)}, money in (sells, income) "
            f"{w.money(source, '/query/totals/received', currency)}."
        )
    lines = []
    for k, t in enumerate(trades[:5]):
        at = f"/query/transactions/{k}"
        line = f"{w.value(source, f'{at}/date', 'date')} {w.value(source, f'{at}/action')}"
        if t.get("units") is not None and t["action"] in ("buy", "sell", "reinvest"):
            line += f" {w.value(source, f'{at}/units')}"
        line += f" {w.value(source, f'{at}/payee')}"
        if t.get("unit_price") is not None and t["action"] in ("buy", "sell", "reinvest"):
            line += f" at {w.money(source, f'{at}/unit_price', t['currency'])}"
        lines.append(f"{line}: {w.money(source, f'{at}/amount', t['currency'])}")
    return text + " Latest: " + "; ".join(lines) + ".", list(query["source_ids"])
