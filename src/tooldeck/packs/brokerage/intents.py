"""The brokerage intents of seed 004, composite ones included."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tooldeck.core.intents import Intent, IntentStep
from tooldeck.core.result import ToolResult

__all__ = ["brokerage_intents"]


def _held_symbols(params: Mapping[str, Any], earlier: Sequence[ToolResult]) -> dict[str, Any]:
    positions = (earlier[0].data or {}).get("positions", [])
    return {"symbols": sorted({p["symbol"] for p in positions})}


def brokerage_intents() -> list[Intent]:
    """Intents → tool plans.

    The seed's single-tool intents, plus the composite symbol_performance,
    portfolio_ranking, class_total and portfolio_pl (quotes for every held symbol, not
    only the first), portfolio_share and allocation (with the account summary's cash) and performance
    with transfers; ``out_of_scope`` calls nothing (the answer says what the data can
    answer). Exclusions (``exclude_*``) and rankings of accounts (``rank``)
    are applied when composing, over the unfiltered results.
    """
    acct = ("account",)
    return [
        Intent(
            "activity",
            (
                IntentStep(
                    "get_activity", params=("account", "symbol", "side", "since", "until", "limit")
                ),
            ),
        ),
        Intent(
            "positions",
            (IntentStep("get_positions", params=("symbol", *acct)),),
            required=("symbol",),
        ),
        Intent(
            "positions_list", (IntentStep("get_positions_list", params=("asset_class", *acct)),)
        ),
        Intent(
            "performance",
            (
                IntentStep("get_performance", params=("timeframe", *acct)),
                IntentStep("get_transfers", params=acct),
            ),
            required=("timeframe",),
        ),
        Intent("quotes", (IntentStep("get_quotes", params=("symbol", "symbols")),)),
        Intent("facts", (IntentStep("get_facts", params=("topic",)),), required=("topic",)),
        Intent(
            "transfers",
            (
                IntentStep(
                    "get_transfers",
                    params=("account", "type", "method", "status", "since", "until", "limit"),
                ),
            ),
        ),
        Intent("account_value", (IntentStep("get_account_summary", params=acct),)),
        Intent("cash_balance", (IntentStep("get_account_summary", params=acct),)),
        Intent(
            "symbol_performance",
            (
                IntentStep("get_positions", params=("symbol", *acct)),
                IntentStep("get_quotes", params=("symbol",)),
            ),
            required=("symbol",),
        ),
        Intent("out_of_scope", ()),
        Intent(
            "cost_of_shares",
            (IntentStep("get_quotes", params=("symbol",)),),
            required=("symbol", "quantity"),
        ),
        Intent(
            "portfolio_share",
            (
                IntentStep("get_positions_list", params=acct),
                IntentStep("get_quotes", build=_held_symbols),
                IntentStep("get_account_summary", params=acct),
            ),
            required=("symbol",),
        ),
        Intent(
            "account_comparison",
            (IntentStep("get_account_summary"),),
            required=("account", "other_account"),
        ),
        Intent(
            "class_total",
            (
                IntentStep("get_positions_list", params=("asset_class", *acct)),
                IntentStep("get_quotes", build=_held_symbols),
            ),
            required=("asset_class",),
        ),
        Intent(
            "allocation",
            (
                IntentStep("get_positions_list", params=acct),
                IntentStep("get_quotes", build=_held_symbols),
                IntentStep("get_account_summary", params=acct),
            ),
        ),
        Intent(
            "portfolio_pl",
            (
                IntentStep("get_positions_list", params=acct),
                IntentStep("get_quotes", build=_held_symbols),
            ),
        ),
        Intent(
            "portfolio_ranking",
            (
                IntentStep("get_positions_list", params=("asset_class", *acct)),
                IntentStep("get_quotes", build=_held_symbols),
            ),
        ),
    ]
