"""The pieces of a brokerage answer, each bound to the field it states (issue 29).

``BoundWriter`` holds the tool results of one answer and its ``ClaimWriter``: a price,
a share count, a date, a side, an account's name, or a derived figure with its
formula, rendered only with where it came from. ``writers.AnswerWriter`` writes each
intent's answer from these pieces.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tooldeck.core.claims import ClaimWriter, Formula, resolve_pointer
from tooldeck.packs.brokerage.derived import PL, money, number, percent

__all__ = [
    "ACTIVITY",
    "CLASS_NAMES",
    "LIST",
    "PERFORMANCE",
    "POSITIONS",
    "QUOTES",
    "SUMMARY",
    "TRANSFERS",
    "BoundWriter",
]

POSITIONS = "tool:positions:v1"
LIST = "tool:positions_list:v1"
QUOTES = "tool:quotes:v1"
SUMMARY = "tool:account_summary:v1"
PERFORMANCE = "tool:performance:v1"
TRANSFERS = "tool:transfers:v1"
ACTIVITY = "tool:activity:v1"


CLASS_NAMES = {"etf": "ETFs", "stocks": "stocks", "bonds": "bonds", "cash": "cash funds"}
"""An asset class as an answer says it."""


class BoundWriter:
    """The pieces every brokerage answer is written with, each bound to its field.

    Args:
        data: Each successful result's ``data`` by its source id.
        params: The routed parameters.
        names: Account display names by account id.
        symbols: The symbols the data tracks (the out-of-scope answer lists them).
    """

    def __init__(
        self,
        data: Mapping[str, Any],
        params: Mapping[str, Any],
        names: Mapping[str, str],
        symbols: Sequence[str],
    ) -> None:
        self.data, self.params, self.names, self.symbols = data, params, names, symbols
        self.claims = ClaimWriter()

    # -- bound pieces ------------------------------------------------------------------

    def _money(self, source: str, at: str, *, signed: bool = False) -> str:
        """The amount at ``at``, rendered (``$1,234.50``) and bound to it."""
        value = resolve_pointer(self.data[source], at)
        return self.claims.figure(money(value, signed=signed), source, at, kind="money")

    def _percent(self, source: str, at: str, *, signed: bool = False) -> str:
        """The percentage at ``at``, rendered (``+6.20%``) and bound to it."""
        value = resolve_pointer(self.data[source], at)
        return self.claims.figure(percent(value, signed=signed), source, at, kind="percent")

    def _number(self, source: str, at: str) -> str:
        """The share count at ``at``, rendered (``1,200``) and bound to it."""
        value = resolve_pointer(self.data[source], at)
        return self.claims.figure(number(value), source, at, kind="quantity")

    def _derived(self, text: str, source: str, f: Formula, kind: str) -> str:
        return self.claims.figure(
            text, source, op=f.op, inputs=f.inputs, decimals=f.decimals, kind=kind
        )

    def _value(self, source: str, at: str) -> str:
        """A string field said as itself (a symbol, a side, a status, a timeframe)."""
        value = resolve_pointer(self.data[source], at)
        return self.claims.figure(str(value), source, at)

    def _account(self, source: str, at: str) -> str:
        """An account id field, said by its display name."""
        account = resolve_pointer(self.data[source], at)
        return self.claims.figure(self.names.get(account, account), source, at)

    def _date(self, source: str, at: str) -> str:
        return self.claims.figure(
            str(resolve_pointer(self.data[source], at))[:10], source, at, kind="date"
        )

    def _rows(self, source: str) -> list[PL]:
        """The positions of ``source`` that have a quote, each with its formulas."""
        quotes = {q["symbol"]: i for i, q in enumerate(self.data[QUOTES]["quotes"])}
        out = []
        for i, p in enumerate(self.data[source]["positions"]):
            q = quotes.get(p["symbol"])
            if q is not None:
                price = float(self.data[QUOTES]["quotes"][q]["price"])
                out.append(PL(p, f"/positions/{i}", price, f"{QUOTES}#/quotes/{q}/price"))
        return out

    # -- scope words -------------------------------------------------------------------

    def _kept(self, symbol: str, account: str, positions: Sequence[Mapping[str, Any]]) -> bool:
        """Whether a position survives the question's ``exclude_*`` parameters."""
        params = self.params
        classes = {p["symbol"]: p.get("asset_class") for p in positions}
        return not (
            symbol == params.get("exclude_symbol")
            or account == params.get("exclude_account")
            or (
                params.get("exclude_asset_class")
                and classes.get(symbol) == params["exclude_asset_class"]
            )
        )

    def _without(self) -> str:
        """The exclusion as words (", not counting ETFs"), or "" when there is none."""
        params = self.params
        left_out = [
            CLASS_NAMES.get(params.get("exclude_asset_class", ""), ""),
            params.get("exclude_symbol", ""),
            self.names.get(params.get("exclude_account", ""), ""),
        ]
        said = " or ".join(x for x in left_out if x)
        return f", not counting {said}" if said else ""

    def _scope(self) -> str:
        account = self.params.get("account")
        return self.names.get(account, "all accounts") if account else "all accounts"

    def _window(self, source: str) -> str:
        """The days ``source``'s result covers, as words (" from 2026-11-01 to 2026-11-30").

        Each day is bound to the ``since``/``until`` the result states it applied.
        """
        result = self.data[source]
        since = self._date(source, "/since") if result.get("since") else None
        until = self._date(source, "/until") if result.get("until") else None
        if since and until:
            return (
                f" on {since}"
                if result["since"] == result["until"]
                else f" from {since} to {until}"
            )
        if since:
            return f" since {since}"
        return f" until {until}" if until else ""
