"""Context builder computations (seed 004 ``context_builder``): P/L per position and ranking.

Inputs are the ``data`` of ``get_positions`` / ``get_positions_list`` and ``get_quotes``
results, so every figure derives from cited tool data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel

__all__ = ["PositionPL", "rank_positions", "unrealized_pl"]


class PositionPL(BaseModel):
    """Unrealized profit or loss of one position (USD; percent of cost)."""

    account: str
    symbol: str
    quantity: float
    cost_basis: float
    price: float
    market_value: float
    cost_value: float
    unrealized_pl: float
    unrealized_pl_pct: float


def unrealized_pl(
    positions: Sequence[Mapping[str, Any]], quotes: Sequence[Mapping[str, Any]]
) -> list[PositionPL]:
    """P/L of each position that has a quote: market value − cost.

    Market value is quantity × price and cost quantity × cost_basis, each rounded to
    cents (the figures an answer states, and the grounding validator recomputes); the
    percentage is of the cost, to two decimals. Positions without a quote are left out.
    """
    prices = {q["symbol"]: float(q["price"]) for q in quotes}
    out = []
    for p in positions:
        price = prices.get(p["symbol"])
        if price is None:
            continue
        qty, cost = float(p["quantity"]), float(p["cost_basis"])
        market_value, cost_value = round(qty * price, 2), round(qty * cost, 2)
        pl = round(market_value - cost_value, 2)
        out.append(
            PositionPL(
                account=p["account"],
                symbol=p["symbol"],
                quantity=qty,
                cost_basis=cost,
                price=price,
                market_value=market_value,
                cost_value=cost_value,
                unrealized_pl=pl,
                unrealized_pl_pct=round(pl / cost_value * 100, 2) if cost_value else 0.0,
            )
        )
    return out


def rank_positions(
    rows: Sequence[PositionPL],
    direction: Literal["best", "worst"] = "best",
    basis: Literal["unrealized_pl", "unrealized_pl_pct"] = "unrealized_pl",
    top: int | None = None,
) -> list[PositionPL]:
    """Positions ordered best-first (or worst-first) by P/L amount or percentage."""
    ranked = sorted(rows, key=lambda r: getattr(r, basis), reverse=direction == "best")
    return ranked[:top] if top is not None else ranked
