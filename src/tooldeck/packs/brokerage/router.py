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

import re
from collections.abc import Mapping
from datetime import date
from typing import Any

from tooldeck.core.intents import ClarifyingQuestion, Route
from tooldeck.core.names import closest_names
from tooldeck.packs.brokerage.data import TIMEFRAMES, BrokerageData
from tooldeck.packs.brokerage.vocabulary import (
    _ACCOUNT_RANK,
    _ACTIVITY,
    _ADVICE,
    _ASSET_WORDS,
    _BY_GAIN,
    _BY_VALUE,
    _CASH,
    _COVERS,
    _DATA_WORDS,
    _DEFINITION,
    _EXCLUDE,
    _FILTERS,
    _HOLDING,
    _INTENT_BY_LABEL,
    _INTENT_LABELS,
    _LIST,
    _MINE,
    _NAME_TAILS,
    _ONE,
    _OUT_OF_SCOPE,
    _PERFORMANCE,
    _PRICE,
    _PRONOUN,
    _RANKING,
    _STOPWORDS,
    _TIMEFRAME_WORDS,
    _TOP_N,
    _TRANSFERS,
    _VALUE,
    _WORST,
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
    "performance": ("timeframe", "account"),
    "quotes": ("symbol", "symbols"),
    "facts": ("topic",),
    "transfers": ("account", "type", "method", "status", "since", "until", "limit"),
    "account_value": ("account", "rank", "exclude_account"),
    "cash_balance": ("account", "rank", "exclude_account"),
    "symbol_performance": ("symbol", "account"),
    "portfolio_ranking": (
        "direction", "by", "limit", "asset_class", "account",
        "exclude_asset_class", "exclude_symbol", "exclude_account",
    ),
    "out_of_scope": (),
}  # fmt: skip
"""The parameters each intent takes; a route carries only these."""


class QuestionRouter:
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

    def __init__(self, data: BrokerageData) -> None:
        self.symbols = {q.symbol: q.name for q in data.quotes.quotes}
        self.accounts = {a.id: a.name for a in data.accounts}
        self.account_ids = {
            **{a.name.lower(): a.id for a in data.accounts},
            **{a.id: a.id for a in data.accounts},
            "all accounts": "all",
        }
        """Account names and ids (lower case) → ids: a clarifying question's options are
        the names, and the answer comes back as one of them."""
        self.today = date.fromisoformat(data.as_of)
        self.topics = {f.id: tuple(k.lower() for k in f.keywords) for f in data.facts.facts}
        self.topic_titles = {f.id: f.title for f in data.facts.facts}
        names: dict[str, list[str]] = {}
        for symbol, name in self.symbols.items():
            first = re.sub(r"[^a-z]", "", name.split()[0].lower().split(".")[0])
            names.setdefault(first, []).append(symbol)
        names.setdefault("google", []).append("GOOGL")
        names.setdefault("chase", []).append("JPM")
        names.setdefault("jp morgan", []).append("JPM")
        self.company_names = {k: v for k, v in names.items() if len(k) > 2}

    # -- parameters -----------------------------------------------------------------

    def _symbols(self, question: str) -> tuple[list[str], list[str], list[str]]:
        """(known symbols, unknown ticker-like words, symbols of an ambiguous company name).

        Known symbols come in the order the question names them.
        """
        found: dict[str, int] = {}
        unknown: list[str] = []
        for m in re.finditer(r"(?<![\w$])\$?[A-Za-z]{2,5}(?![\w'])", question):
            token = m.group()
            word = token.lstrip("$")
            upper = word.upper()
            if upper in self.symbols:
                found.setdefault(upper, m.start())
            elif (word.isupper() or token.startswith("$")) and upper not in _STOPWORDS:
                unknown.append(upper)
        lowered = question.lower()
        ambiguous: list[str] = []
        for name, symbols in self.company_names.items():
            named = re.search(rf"\b{re.escape(name)}\b", lowered)
            if named:
                if len(symbols) == 1:
                    found.setdefault(symbols[0], named.start())
                else:
                    ambiguous.extend(s for s in symbols if s not in ambiguous)
        return sorted(found, key=found.__getitem__), unknown, ambiguous

    def _names_something(self, words: str) -> bool:
        """Whether ``words`` name an asset class, a symbol or an account."""
        return bool(
            _first(_ASSET_WORDS, words)
            or self._symbols(words)[0]
            or self._account(words) not in (None, "?", "!")
        )

    def _exclusion(self, q: str) -> tuple[str, str]:
        """(the question without its exclusion, the excluded words), or (q, "").

        "not ETFs", "besides Apple", "excluding the joint account": an account, a symbol
        or an asset class must follow the word, else nothing is excluded.
        """
        for m in re.finditer(_EXCLUDE, q):
            rest = q[m.end() :]
            words = re.match(
                r"\s*((?:(?:in|an?|the|my|any|of)\s+)*[\w&'-]+(?:\s+(?!in\b|from\b|with\b|for\b|that\b|which\b)[\w&'-]+){0,3})",
                rest,
            )
            if not words:
                continue
            obj = words.group(1)
            tokens = obj.split()
            for n in range(1, len(tokens) + 1):  # the shortest words naming something known
                if self._names_something(" ".join(tokens[:n])):
                    while n < len(tokens) and tokens[n] in _NAME_TAILS:
                        n += 1  # "roth" + "ira", "joint" + "account"
                    head = " ".join(tokens[:n])
                    after = rest[words.start(1) + len(head) :]
                    more = re.match(r"\s+(?:and|or|&)\s+([\w&'-]+)", after)
                    if more and self._names_something(more.group(1)):  # "MSFT and Apple"
                        head, after = head + more.group(0), after[more.end() :]
                    return (q[: m.start()] + " " + after).strip(), head
        return q, ""

    def _account(self, q: str) -> str | None:
        """An account id, ``?`` when the words fit several accounts, ``!`` when none exists."""
        if _search(r"\broth\b", q):
            return "roth_ira"
        if _search(r"\btraditional ira\b|\b401 ?k\b|\bsep ira\b|\bhsa\b", q):
            return "!"
        if _search(r"\bira\b|retirement account", q):
            return "roth_ira"
        if _search(r"\bjoint\b|shared account|with my (?:wife|husband|spouse|partner)", q):
            return "joint"
        if _search(r"\bindividual\b|\btaxable\b", q):
            return "individual"
        if _search(r"\bbrokerage account\b", q):
            return "?"
        return None

    @staticmethod
    def _direction(q: str) -> str:
        if _search(r"(?:biggest|largest) to smallest", q):
            return "best"
        return "worst" if _search(_WORST + r"|\bsmallest\b|least valuable", q) else "best"

    def _topic(self, q: str) -> str | None:
        words = set(re.findall(r"[a-z0-9+\-]+", q))
        phrases = {
            "capital_gains": r"capital gains?|\btax(?:es|ed)?\b.*\bsell",
            "expense_ratios": r"expense ratio|fees? (?:of|on) (?:a |an |index )?(?:funds?|etfs?)",
            "dollar_cost_averaging": r"dollar[- ]cost|\bdca\b",
            "traditional_ira": r"traditional ira",
            "roth_ira": r"\broth\b",
            "etf_basics": r"\betfs?\b|exchange[- ]traded|index fund",
            "bonds_basics": r"\bbonds?\b|fixed income|yield",
            "settlement": r"settle|t\+1|unsettled",
            "dividends": r"dividend",
            "rebalancing": r"rebalanc|drift",
            "diversification": r"diversif",
        }
        for topic, pattern in phrases.items():
            if topic in self.topics and _search(pattern, q):
                return topic
        best, best_hits = None, 0
        for topic, keywords in self.topics.items():
            hits = len(words & set(keywords))
            if hits > best_hits:
                best, best_hits = topic, hits
        return best

    # -- intent ---------------------------------------------------------------------

    def _intent(
        self, q: str, has_symbol: bool, full: str | None = None
    ) -> tuple[str | None, float]:
        """The intent of ``q`` (the question before any "except ..."; ``full``: all of it)."""
        mine = _search(_MINE, q) or _search(_MINE, full or q)
        if _search(r"\bsummar|\boverview\b", q):
            return "account_value", 0.9
        if not has_symbol and self._account_rank(q):
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
        ) is not None:
            return "facts", 0.9
        if _search(r"available to|buying power", q):
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
            if account is None and follows and inherited:
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
            params["direction"] = given.get("direction") or self._direction(q)
        if "by" in wanted:
            by = given.get("by") or self._ranked_by(q)
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

    def _ranked_by(self, q: str) -> str:
        """``value`` (market value), ``gain`` (P/L in dollars) or ``return`` (P/L %)."""
        if _search(_BY_GAIN, q):
            return "gain"
        if _search(_BY_VALUE, q) or (
            _search(r"\btop \w+ (?:positions?|holdings?|stocks?|etfs?)\b", q)
            and not _search(_PERFORMANCE + "|perform", q)
        ):
            return "value"
        return "return"

    @staticmethod
    def _account_rank(q: str) -> str | None:
        """``most`` / ``least`` when the question asks which account has the most or least."""
        if not _search(_ACCOUNT_RANK + r"|\bhighest\b|\blowest\b", q):
            return None
        return "least" if _search(r"\bleast\b|\blowest\b|\bsmallest\b|\bfewest\b", q) else "most"

    @staticmethod
    def _clarify(
        question: str, kind: str, options: list[str], parameter: str, intent: str | None = None
    ) -> Route:
        clarification = ClarifyingQuestion.model_validate(
            {"question": question, "type": kind, "options": options, "parameter": parameter}
        )
        return Route(None, {"intent": intent} if intent else {}, 0.0, clarification)
