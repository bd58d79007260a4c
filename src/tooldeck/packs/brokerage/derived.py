"""Values a brokerage answer derives, each with the formula that derives it (issue 29).

``PL`` is one position with a quote (market value, cost, P/L, P/L %), ``Total`` the sums
of several; each value comes with its ``core.claims.Formula`` over pointers into the
positions and quotes results, rounded as ``context.unrealized_pl`` rounds, so a figure
an answer states can be re-derived by the grounding validator.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tooldeck.core.claims import Formula
from tooldeck.packs.brokerage.context import PositionPL, unrealized_pl

__all__ = ["PL", "Total", "money", "number", "percent", "totals"]


def money(value: float, *, signed: bool = False) -> str:
    """``$1,234.50``; with ``signed``, ``+$1,234.50`` / ``-$1,234.50``."""
    sign = ("+" if value >= 0 else "-") if signed else ("-" if value < 0 else "")
    return f"{sign}${abs(value):,.2f}"


def percent(value: float, *, signed: bool = False) -> str:
    """``6.20%``; with ``signed``, ``+6.20%`` / ``-6.20%``."""
    return f"{value:+.2f}%" if signed else f"{value:.2f}%"


def number(value: float) -> str:
    """A share count: ``42``, ``1,200``, ``0.5``."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.4f}".rstrip("0")


def totals(rows: Sequence[PositionPL]) -> dict[str, float]:
    """The sums of ``rows``, as the answers state them.

    Quantity; market value, cost and P/L each rounded to cents; P/L % of the summed cost
    to two decimals.
    """
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


class PL:
    """One position with a quote: its values and the formulas that derive them.

    The values are ``context.unrealized_pl``'s; the formulas round as it rounds.
    """

    def __init__(self, p: Mapping[str, Any], at: str, price: float, price_at: str) -> None:
        self.price_at = price_at
        """Where the price is: ``tool:quotes:v1#/quotes/<i>/price``."""
        self.row = unrealized_pl([p], [{"symbol": p["symbol"], "price": price}])[0]
        self.account, self.symbol, self.at = self.row.account, self.row.symbol, at
        self.quantity, self.cost_basis = self.row.quantity, self.row.cost_basis
        self.market_value, self.cost_value = self.row.market_value, self.row.cost_value
        self.pl, self.pl_pct = self.row.unrealized_pl, self.row.unrealized_pl_pct
        self.f_value = Formula(op="product", inputs=(f"{at}/quantity", price_at), decimals=2)
        self.f_cost = Formula(
            op="product", inputs=(f"{at}/quantity", f"{at}/cost_basis"), decimals=2
        )
        self.f_pl = Formula(op="difference", inputs=(self.f_value, self.f_cost), decimals=2)
        self.f_pct = Formula(op="percent_of", inputs=(self.f_pl, self.f_cost), decimals=2)


class Total:
    """The sums of several ``PL`` rows (``totals``), with their formulas.

    P/L % is of the summed cost.
    """

    def __init__(self, rows: Sequence[PL]) -> None:
        t = totals([r.row for r in rows])
        self.quantity, self.market_value = t["quantity"], t["market_value"]
        self.cost_value, self.pl, self.pl_pct = (
            t["cost_value"], t["unrealized_pl"], t["unrealized_pl_pct"]
        )  # fmt: skip
        self.f_quantity = Formula(op="sum", inputs=tuple(f"{r.at}/quantity" for r in rows))
        self.f_value = Formula(op="sum", inputs=tuple(r.f_value for r in rows), decimals=2)
        self.f_cost = Formula(op="sum", inputs=tuple(r.f_cost for r in rows), decimals=2)
        self.f_pl = Formula(op="sum", inputs=tuple(r.f_pl for r in rows), decimals=2)
        self.f_pct = Formula(op="percent_of", inputs=(self.f_pl, self.f_cost), decimals=2)
