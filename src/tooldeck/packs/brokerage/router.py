"""The deterministic question router of the brokerage pack (seed 004 intent routing).

Example::

    router = QuestionRouter(BrokerageDataSource().load())
    router.route("How much is my AAPL position worth and how is it doing?")
    # Route(intent="symbol_performance", params={"symbol": "AAPL"}, ...)

No model is involved: cue words decide the intent; the data file's vocabulary (symbols,
company names, accounts, fact topics) gives the parameters. A question that needs a
parameter it does not state, names an unknown symbol or account, or matches no intent
gets a ``ClarifyingQuestion`` with the options, never a guess.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tooldeck.core.intents import ClarifyingQuestion, Route
from tooldeck.core.names import closest_names
from tooldeck.core.nearest_examples import NearestExamples
from tooldeck.packs.brokerage.data import TIMEFRAMES, BrokerageData, shipped_examples
from tooldeck.packs.brokerage.question_words import QuestionWords
from tooldeck.packs.brokerage.vocabulary import (
    _ACTIVITY,
    _ADVICE,
    _ALLOCATION,
    _ASSET_WORDS,
    _BY_GAIN,
    _BY_VALUE,
    _CASH,
    _CLASS_VALUE,
    _CODE_WORDS,
    _COMBINED,
    _COMPARE,
    _COST,
    _COVERS,
    _DATA_WORDS,
    _DEFINITION,
    _DID_BEST,
    _FILTERS,
    _HOLDING,
    _INTENT_BY_LABEL,
    _INTENT_LABELS,
    _LIST,
    _LOSING,
    _MINE,
    _ONE,
    _OUT_OF_SCOPE,
    _OVERALL,
    _PAID_VS_WORTH,
    _PERFORMANCE,
    _PL,
    _PRICE,
    _PRONOUN,
    _RANKING,
    _SHARE_OF,
    _SINCE_BOUGHT,
    _TIMEFRAME_WORDS,
    _TOP_N,
    _TRADE_ADVICE,
    _TRANSFERS,
    _VALUE,
    _WIDE,
    _first,
    _limit,
    _normalize,
    _search,
    _split_parts,
    _window,
)

__all__ = ["INTENT_PARAMS", "QuestionRouter"]

INTENT_PARAMS: dict[str, tuple[str, ...]] = {
    "activity": ("account", "symbol", "side", "since", "until", "limit"),
    "positions": ("symbol", "account"),
    "positions_list": (
        "asset_class", "account", "exclude_asset_class", "exclude_symbol", "exclude_account"
    ),
    "performance": ("timeframe", "account", "rank"),
    "quotes": ("symbol", "symbols"),
    "facts": ("topic",),
    "transfers": ("account", "type", "method", "status", "since", "until", "limit"),
    "account_value": ("account", "rank", "exclude_account"),
    "cash_balance": ("account", "rank", "exclude_account"),
    "symbol_performance": ("symbol", "account", "period"),
    "cost_of_shares": ("symbol", "quantity"),
    "portfolio_share": ("symbol", "account"),
    "account_comparison": ("account", "other_account"),
    "class_total": ("asset_class", "account"),
    "portfolio_pl": ("account",),
    "allocation": ("account",),
    "portfolio_ranking": (
        "direction", "by", "limit", "asset_class", "account", "period", "combined",
        "exclude_asset_class", "exclude_symbol", "exclude_account",
    ),
    "out_of_scope": (),
}  # fmt: skip
"""The parameters each intent takes; a route carries only these."""


class QuestionRouter(QuestionWords):
    """Routes a brokerage question to an intent and its parameters, or to a clarification.

    Args:
        data: The loaded data file; its symbols, company names, accounts and fact
            topics are the vocabulary.

    Semantics:
        ``route(question, given)``: parameters in ``given`` (e.g. the chat request's
        ``account``, or the answer to an earlier clarifying question) win over those
        read from the question. The route's ``params`` hold only the parameters the
        intent takes (``INTENT_PARAMS``), without None values.
    """

    def __init__(
        self, data: BrokerageData, examples: Sequence[tuple[str, str]] | None = None
    ) -> None:
        super().__init__(data)
        mask = [*self.symbols, *self.company_names, "roth", "ira", "joint", "individual"]
        self.nearest = NearestExamples(examples or shipped_examples(), mask=mask)
        """The second reading: the labelled questions nearest to a question (issue 29)."""

    # -- intent ---------------------------------------------------------------------

    def _intent(
        self, q: str, has_symbol: bool, full: str | None = None
    ) -> tuple[str | None, float]:
        """The intent of ``q`` (the question before any "except ..."; ``full``: all of it)."""
        mine = _search(_MINE, q) or _search(_MINE, full or q)
        if _search(_TRADE_ADVICE, q):
            return "out_of_scope", 0.3  # advice on a trade, a prediction: said plainly
        if _search(r"\bsummar|\boverview\b", q):
            return "account_value", 0.9
        if not has_symbol and len(self._accounts_in(q)) >= 2 and _search(_COMPARE, q):
            return "account_comparison", 0.9
        if has_symbol and self._quantity(q) not in (None, 1) and _search(_COST + "|" + _PRICE, q):
            return "cost_of_shares", 0.9  # one share's cost is its price: a quote
        if has_symbol and _search(_SHARE_OF, q):
            return "portfolio_share", 0.9
        period = _first(_TIMEFRAME_WORDS, q)
        if not has_symbol and _search(_ALLOCATION, q):
            return "allocation", 0.9
        if not has_symbol and _search(_PAID_VS_WORTH, q):
            return "portfolio_pl", 0.9  # "what did I pay in total vs what it's worth now"
        if not has_symbol and _search(_LOSING, q):
            return "portfolio_ranking", 0.9  # "am I losing money on anything"
        if not has_symbol and period is None and _search(_PL, q) and _search(_OVERALL, q):
            return "portfolio_pl", 0.9
        asset = _first(_ASSET_WORDS, q)
        if (
            not has_symbol
            and asset
            and _search(_CLASS_VALUE, q)
            and not _search(_RANKING + "|" + _TOP_N + r"|\bbiggest\b|\blargest\b|\bsmallest\b", q)
        ):
            return "class_total", 0.9
        if has_symbol and period not in (None, "1D") and _search(_PERFORMANCE, q):
            return "symbol_performance", 0.9  # a period the answer says it has no figure for
        if not has_symbol and self._account_rank(q):
            if period is not None and _search(_PERFORMANCE + "|" + _DID_BEST, q):
                return "performance", 0.9  # "which account did best this month"
            return ("cash_balance" if _search(_CASH, q) else "account_value"), 0.9
        if _search(r"contribut|\bput in\b", q) and (
            _first(_TIMEFRAME_WORDS, q) or _search(r"since (?:i|we) (?:opened|started)", q)
        ):
            return "performance", 0.85
        if _search(_ADVICE, q) and self._topic(q) is not None:
            return "facts", 0.85
        if not has_symbol and (
            _search(_BY_GAIN, q)
            or (
                (_search(_BY_VALUE, q) or _search(_TOP_N, q))
                and not _search(_TRANSFERS + "|" + _CASH, q)
            )
        ):
            return "portfolio_ranking", 0.9
        if has_symbol:
            if period is None and _search(_SINCE_BOUGHT, q) and _search(_PERFORMANCE, q):
                return "symbol_performance", 0.9  # "my gain on MSFT since I bought it"
            if _search(_ACTIVITY, q) and not _search(
                r"should i (?:buy|sell)|average|cost basis", q
            ):
                return "activity", 0.9
            if _search(r"\baverage\b|cost basis", q):
                return "positions", 0.9
            holding, price = _search(_HOLDING, q), _search(_PRICE, q)
            performance = _search(_PERFORMANCE, q) or (_search(r"\bworth\b|\bvalue\b", q))
            if mine and (performance or (holding and price)):
                return "symbol_performance", 0.95
            if price or (performance and not mine):
                return "quotes", 0.9
            if holding or mine:
                return "positions", 0.9
            return "quotes", 0.5  # a guess: nothing but the symbol
        advice = _search(r"^(?:should|why should|when should) i\b", q)
        if (advice or (_search(_DEFINITION, q) and not _search(_DATA_WORDS, q))) and self._topic(
            q
        ) is not None:  # a topic named by one keyword ("capital") is a guess
            return "facts", 0.9 if self._topic(q, keywords=False) else 0.5
        if _search(r"available to|buying power|can i (?:withdraw|take out|spend|invest)\b", q):
            return "cash_balance", 0.9
        if _search(_RANKING, q) and not _search(_TRANSFERS + "|" + _CASH, q):
            return "portfolio_ranking", 0.9
        if _search(_TRANSFERS, q):
            return "transfers", 0.9
        if _search(_ACTIVITY, q):
            return "activity", 0.9
        if _search(_CASH, q) and not _search(r"\btotal (?:account )?value|including cash", q):
            return "cash_balance", 0.9
        if _search(_PERFORMANCE, q) and not _search(r"\bworth\b|\bbalance\b", q):
            return "performance", 0.85
        named = self._account(q) not in (None, "?", "!")
        if _search(_VALUE, q) and (
            mine or named or _search(r"\baccounts?\b|portfolio|total value", q)
        ):
            return "account_value", 0.9
        if _search(_LIST, q) or (_search(_HOLDING, q) and mine):
            return "positions_list", 0.85
        if _search(_PRICE, q):
            return "quotes", 0.5
        if self._topic(q) is not None and not mine:
            return "facts", 0.5  # a guess: only the topic matched
        return None, 0.0

    # -- routing --------------------------------------------------------------------

    def route(self, question: str, given: Mapping[str, Any] | None = None) -> Route:
        """Route ``question`` (see the class docstring). Never raises.

        A question in several parts ("What's AAPL at and how much cash do I have?") is
        routed part by part; the route's ``also`` holds the parts after the first. A
        part with a pronoun ("how many do I own of it") takes the symbol and account of
        the part before it.
        """
        given = {k: v for k, v in (given or {}).items() if v not in (None, "")}
        whole = self._route_one(question, given)
        if given:
            return whole
        whole = self._second_reading(question, whole)
        parts = _split_parts(question)
        if len(parts) < 2:
            return whole
        routes: list[Route] = []
        for part in parts:
            inherited = (
                {k: v for k, v in routes[-1].params.items() if k in ("symbol", "account")}
                if routes
                else None
            )
            one = self._route_one(part, {}, inherited)
            if one.intent in (None, "out_of_scope"):
                return whole
            routes.append(one)
        intents = {r.intent for r in routes}
        if whole.intent in _COVERS and intents <= {whole.intent, *_COVERS[whole.intent]}:
            return whole
        distinct = {(r.intent, repr(sorted(r.params.items()))) for r in routes}
        if len(distinct) < 2:
            return whole
        first, *rest = routes
        confidence = min(r.confidence for r in routes)
        return Route(first.intent, first.params, confidence, also=tuple(rest))

    def _second_reading(self, question: str, route: Route) -> Route:
        """``route`` checked against the nearest labelled questions (issue 29).

        When they agree, the route stands. When they strongly read another intent (7 in
        10 of the nearest votes, the nearest at cosine ≥ 0.6), the question has two
        readings: a clarifying question names both. When they weakly disagree, or nothing
        labelled is near (cosine < 0.25), the route stands with its confidence at most
        0.7: answered, but not as sure. Thresholds measured on the labelled set, left one
        out, and on ``tests/packs/router_holdout.py`` (benchmarks/router_calibration.py).
        """
        if route.intent is None or route.intent == "out_of_scope":
            return route
        reading = self.nearest.classify(question)
        if reading.intent == route.intent and reading.similarity >= 0.25:
            return route
        strong = reading.share >= 0.7 and reading.similarity >= 0.6
        if strong and reading.intent in _INTENT_LABELS and route.intent in _INTENT_LABELS:
            first, second = _INTENT_LABELS[route.intent], _INTENT_LABELS[reading.intent]
            return self._clarify(
                f"Do you mean {first}, or {second}?", "radio", [first, second], "intent"
            )
        return Route(route.intent, route.params, min(route.confidence, 0.7), also=route.also)

    def _route_one(
        self,
        question: str,
        given: Mapping[str, Any],
        inherited: Mapping[str, Any] | None = None,
    ) -> Route:
        """Route one question (or one part of one)."""
        q = _normalize(question)
        if _search(_OUT_OF_SCOPE, q) and not given.get("intent"):
            return Route("out_of_scope", {}, 0.3)
        kept, gone = self._exclusion(q)
        symbols, unknown, ambiguous = self._symbols(question)
        if not symbols and _search(_CODE_WORDS, q) and not given.get("intent"):
            return Route("out_of_scope", {}, 0.3)  # about code, not the portfolio
        excluded_symbols = self._symbols(gone)[0] if gone else []
        symbols = [x for x in symbols if x not in excluded_symbols]
        follows = inherited is not None and _search(_PRONOUN, q)
        if follows and inherited and not symbols and inherited.get("symbol"):
            symbols = [str(inherited["symbol"])]
        if follows and not _search(_MINE, kept):
            kept = "my " + kept  # "what are they worth": the accounts of the part before
        if "symbol" in given:
            symbols = [str(given["symbol"]).upper()]
        intent = given.get("intent")
        intent = _INTENT_BY_LABEL.get(str(intent).lower(), intent) if intent else None
        confidence = 1.0
        if intent not in INTENT_PARAMS:
            intent, confidence = self._intent(kept, bool(symbols or unknown or ambiguous), q)
        if intent is None:
            about_me = _search(_MINE + r"|\baccounts?\b|\bportfolio\b", q)
            if len(q.split()) >= 3 and not about_me and not _search(_DATA_WORDS, q):
                return Route("out_of_scope", {}, 0.3)  # a vague question about me: ask
            return self._clarify(
                "What would you like to know? Pick one, or rephrase the question.",
                "radio",
                list(_INTENT_LABELS.values()),
                "intent",
            )
        wanted = INTENT_PARAMS[intent]
        before = (inherited or {}).get("symbol")
        elided = bool(before) and not symbols and "symbol" in wanted and not _search(_WIDE, q)
        if elided:  # "how many VXUS do I have in the Roth and when did I last buy"
            symbols = [str(before)]
        params: dict[str, Any] = {}
        if "symbol" in wanted:
            if not symbols:
                if ambiguous:
                    return self._clarify(
                        "Which of these do you mean?", "radio", ambiguous, "symbol", intent
                    )
                if unknown:
                    near = closest_names(unknown[0], list(self.symbols)) or list(self.symbols)
                    return self._clarify(
                        f"I have no data for {unknown[0]}. Which symbol do you mean?",
                        "radio",
                        near,
                        "symbol",
                        intent,
                    )
                if intent != "activity":
                    return self._clarify(
                        "Which symbol? Type a ticker such as AAPL.", "text", [], "symbol", intent
                    )
            elif len(symbols) > 1 and intent == "quotes" and _search(_PRICE, q):
                params["symbols"] = symbols
                symbols = []
            elif len(symbols) > 1 and intent != "activity":
                return self._clarify(
                    "Which symbol should I look at first?", "radio", symbols, "symbol", intent
                )
            if symbols:
                params["symbol"] = symbols[0]
        if "account" in wanted:
            account = given.get("account") or self._account(kept)
            if account is None and (follows or elided) and inherited:
                account = inherited.get("account")
            if account in ("?", "!"):
                said = "That account does not exist here. " if account == "!" else ""
                return self._clarify(
                    f"{said}Which account do you mean?",
                    "radio",
                    [*self.accounts.values(), "All accounts"],
                    "account",
                    intent,
                )
            account = self.account_ids.get(str(account).lower(), account) if account else None
            if account not in (None, "all"):
                params["account"] = account
        if gone:
            if "exclude_asset_class" in wanted:
                asset = _first(_ASSET_WORDS, gone)
                if asset:
                    params["exclude_asset_class"] = asset
            if (
                "exclude_symbol" in wanted
                and excluded_symbols
                and "exclude_asset_class" not in params
            ):
                params["exclude_symbol"] = excluded_symbols[0]
            if "exclude_account" in wanted:
                account = self._account(gone)
                if account not in (None, "?", "!"):
                    params["exclude_account"] = account
        if "quantity" in wanted:
            quantity = given.get("quantity") or self._quantity(q)
            if quantity is None:
                return self._clarify("How many shares?", "text", [], "quantity", intent)
            params["quantity"] = quantity
        if "other_account" in wanted:
            named = self._accounts_in(q)
            if given.get("other_account") or len(named) >= 2:
                params["account"] = given.get("account") or named[0]
                params["other_account"] = given.get("other_account") or named[1]
            else:
                return self._clarify(
                    "Which two accounts should I compare?", "checkbox",
                    list(self.accounts.values()), "other_account", intent,
                )  # fmt: skip
        if "period" in wanted:
            period = given.get("period") or _first(_TIMEFRAME_WORDS, q)
            if period not in (None, "ALL"):
                params["period"] = period  # 1D: the position's move today, beside its P/L
        if "timeframe" in wanted:
            timeframe = given.get("timeframe") or _first(_TIMEFRAME_WORDS, q)
            if timeframe is None and _search(r"contribut|put in", q):
                timeframe = "ALL"
            if timeframe is None:
                return self._clarify(
                    "Over which period?", "radio", list(TIMEFRAMES), "timeframe", intent
                )
            params["timeframe"] = str(timeframe).upper()
        if "asset_class" in wanted:
            asset_class = given.get("asset_class") or _first(_ASSET_WORDS, kept)
            if asset_class is not None:
                params["asset_class"] = asset_class
        if "direction" in wanted:
            params["direction"] = given.get("direction") or (
                "worst" if _search(_LOSING, q) else self._direction(q)
            )
        if "combined" in wanted and _search(_COMBINED, q):
            params["combined"] = True
        if "by" in wanted:
            by = given.get("by") or ("gain" if _search(_LOSING, q) else self._ranked_by(q))
            if by != "return":
                params["by"] = by
        if "limit" in wanted:
            limit = given.get("limit") or _limit(q)
            if limit is None and intent in ("activity", "transfers") and _search(_ONE, q):
                limit = 1
            if limit is not None:
                params["limit"] = min(int(limit), 500)  # the tools take at most 500
        if "rank" in wanted:
            rank = given.get("rank") or self._account_rank(q)
            if rank and intent == "performance" and _search(r"\bworst\b|\bworse\b", q):
                rank = "least"
            if rank:
                params["rank"] = rank
        for name, table in _FILTERS.items():  # side, type, method, status
            if name in wanted:
                hits = {value for pattern, value in table if _search(pattern, q)}
                value = given.get(name) or (hits.pop() if len(hits) == 1 else None)
                if value:  # "buys and sells" names both: no filter
                    params[name] = value
        if "since" in wanted:
            since, until = (given.get("since"), given.get("until"))
            if since is None and until is None:
                found = _window(q, self.today)
                since, until = (d.isoformat() if d else None for d in found)
            if since:
                params["since"] = str(since)
            if until:
                params["until"] = str(until)
        if "topic" in wanted:
            topic = given.get("topic") or self._topic(q)
            if topic is None:
                return self._clarify(
                    "Which topic should I explain?",
                    "radio",
                    list(self.topic_titles.values()),
                    "topic",
                    intent,
                )
            params["topic"] = self.topic_titles.get(topic, topic)
        return Route(intent, params, confidence)

    @staticmethod
    def _clarify(
        question: str, kind: str, options: list[str], parameter: str, intent: str | None = None
    ) -> Route:
        clarification = ClarifyingQuestion.model_validate(
            {"question": question, "type": kind, "options": options, "parameter": parameter}
        )
        return Route(None, {"intent": intent} if intent else {}, 0.0, clarification)
