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

from tooldeck.core.intents import ComposedAnswer, Figure, Intent, IntentOutcome, Route
from tooldeck.core.result import ToolResult
from tooldeck.packs.brokerage.context import PositionPL, unrealized_pl
from tooldeck.packs.brokerage.data import BrokerageData, BrokerageDataSource
from tooldeck.packs.brokerage.derived import totals
from tooldeck.packs.brokerage.intents import brokerage_intents
from tooldeck.packs.brokerage.router import QuestionRouter
from tooldeck.packs.brokerage.writers import AnswerWriter
from tooldeck.packs.brokerage.writing import LIST, POSITIONS, QUOTES, SUMMARY

__all__ = ["BrokerageAnswers"]

_EXAMPLE = "Example data (a demo portfolio shipped with tooldeck, not your accounts)"
"""How an answer from the example file says so, where others say "Data"."""


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
        quotes = data.get(QUOTES)
        out: list[Figure] = []
        for source_id in (POSITIONS, LIST):
            positions = data.get(source_id)
            if quotes is None or positions is None:
                continue
            ids = (source_id, QUOTES)
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
        summary = data.get(SUMMARY)
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
        intent = outcome.intent
        loaded = self.source.load()
        names = {a.id: a.name for a in loaded.accounts}
        writer = AnswerWriter(data, route.params, names, loaded.symbols())
        if intent in ("account_value", "cash_balance"):
            written = writer.summary(cash=intent == "cash_balance")
        else:
            written = getattr(writer, str(intent))()
        markdown, bound = writer.claims.finish(written)
        used = {r.source_id: r.metadata.request_id for r in outcome.results if r.success}
        bound = [c.model_copy(update={"result": used.get(c.source_id)}) for c in bound]
        as_of = next((r.as_of for r in outcome.results if r.as_of), None)
        example = self.source.example
        label = _EXAMPLE if example else "Data"  # issue 54: never said as yours
        if as_of or example:
            markdown += f"\n\n_{label} as of {as_of}._" if as_of else f"\n\n_{label}._"
        figures = tuple(self.figures(outcome.results))
        return ComposedAnswer(markdown, tuple(outcome.source_ids), figures, tuple(bound), True)


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
                    (SUMMARY,),
                    "money",
                    (),
                    "sum",
                    inputs,
                    True,
                    False,
                    terms,
                    (("account", left_out["account"]),),
                )
            )
    return out


_CHANGES = frozenset({"unrealized_pl", "unrealized_pl_pct"})
"""Figures that are changes (a gain or a loss has a direction)."""
_TERMS = {
    "market_value": ("worth",),
    "cost_value": ("cost", "cost basis", "paid", "invested"),
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
    """The sums of ``rows`` (``derived.totals``) as total figures of the subjects they share."""
    shared = set.intersection(*({("account", r.account), ("symbol", r.symbol)} for r in rows))
    whose = tuple(sorted(shared))
    label = " ".join(v for _, v in whose) or "all positions"
    t = totals(rows)

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
