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

__all__ = ["PL", "Total", "money", "number", "percent"]


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


class PL:
    """One position with a quote: its values and the formulas that derive them.

    Mirrors ``context.unrealized_pl``: market value and cost rounded to cents, P/L the
    difference of those, P/L % of the cost to two decimals.
    """

    def __init__(self, p: Mapping[str, Any], at: str, price: float, price_at: str) -> None:
        self.account: str = p["account"]
        self.symbol: str = p["symbol"]
        self.at = at
        self.quantity = float(p["quantity"])
        self.cost_basis = float(p["cost_basis"])
        self.market_value = round(self.quantity * price, 2)
        self.cost_value = round(self.quantity * self.cost_basis, 2)
        self.pl = round(self.market_value - self.cost_value, 2)
        self.pl_pct = round(self.pl / self.cost_value * 100, 2) if self.cost_value else 0.0
        self.f_value = Formula(op="product", inputs=(f"{at}/quantity", price_at), decimals=2)
        self.f_cost = Formula(
            op="product", inputs=(f"{at}/quantity", f"{at}/cost_basis"), decimals=2
        )
        self.f_pl = Formula(op="difference", inputs=(self.f_value, self.f_cost), decimals=2)
        self.f_pct = Formula(op="percent_of", inputs=(self.f_pl, self.f_cost), decimals=2)


class Total:
    """The sums of several ``PL`` rows, with their formulas (P/L % of the summed cost)."""

    def __init__(self, rows: Sequence[PL]) -> None:
        self.quantity = sum(r.quantity for r in rows)
        self.market_value = round(sum(r.market_value for r in rows), 2)
        self.cost_value = round(sum(r.cost_value for r in rows), 2)
        self.pl = round(sum(r.pl for r in rows), 2)
        self.pl_pct = round(self.pl / self.cost_value * 100, 2) if self.cost_value else 0.0
        self.f_quantity = Formula(op="sum", inputs=tuple(f"{r.at}/quantity" for r in rows))
        self.f_value = Formula(op="sum", inputs=tuple(r.f_value for r in rows), decimals=2)
        self.f_cost = Formula(op="sum", inputs=tuple(r.f_cost for r in rows), decimals=2)
        self.f_pl = Formula(op="sum", inputs=tuple(r.f_pl for r in rows), decimals=2)
        self.f_pct = Formula(op="percent_of", inputs=(self.f_pl, self.f_cost), decimals=2)
