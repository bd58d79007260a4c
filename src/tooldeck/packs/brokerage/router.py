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
from typing import Any

from tooldeck.core.intents import ClarifyingQuestion, Route
from tooldeck.core.names import closest_names
from tooldeck.packs.brokerage.data import TIMEFRAMES, BrokerageData

__all__ = ["INTENT_PARAMS", "QuestionRouter"]

INTENT_PARAMS: dict[str, tuple[str, ...]] = {
    "activity": ("account", "symbol"),
    "positions": ("symbol", "account"),
    "positions_list": ("asset_class", "account"),
    "performance": ("timeframe", "account"),
    "quotes": ("symbol",),
    "facts": ("topic",),
    "transfers": ("account",),
    "account_value": ("account",),
    "cash_balance": ("account",),
    "symbol_performance": ("symbol", "account"),
    "portfolio_ranking": ("direction", "asset_class", "account"),
}
"""The parameters each intent takes; a route carries only these."""

_INTENT_LABELS = {
    "account_value": "account value",
    "cash_balance": "cash balance",
    "positions_list": "holdings",
    "performance": "performance",
    "portfolio_ranking": "best and worst holdings",
    "activity": "recent trades",
    "transfers": "deposits and withdrawals",
    "quotes": "a quote",
    "facts": "an explanation of a topic",
}

_TIMEFRAME_WORDS: tuple[tuple[str, str], ...] = (
    (r"year[- ]to[- ]date|\bytd\b|this year|so far this year|since (?:january|jan\b|the start of the year)", "YTD"),
    (r"all[- ]time|since inception|since (?:i|we) (?:opened|started|began)|since the (?:beginning|start)|\bever\b|lifetime|\ball\b(?= (?:of )?(?:the )?time)", "ALL"),
    (r"\btoday\b|\b1 ?d\b|one day|1-day|since yesterday|past day|last day|24 hours|\bdaily\b", "1D"),
    (r"this week|past week|last week|\b1 ?w\b|one week|1-week|7 days|seven days|\bweekly\b", "1W"),
    (r"(?:3|three) months|90 days|quarter|\b3 ?m\b|3-month", "3M"),
    (r"this month|past month|last month|\b1 ?m\b|one month|1-month|30 days|\bmonthly\b", "1M"),
    (r"past year|last year|\b1 ?y\b|one year|1-year|12 months|twelve months|\bannual|trailing year|52 weeks", "1Y"),
)  # fmt: skip

_ASSET_WORDS: tuple[tuple[str, str], ...] = (
    (r"\bstocks?\b|\bequit(?:y|ies)\b|individual companies", "stocks"),
    (r"\betfs?\b|index funds?|exchange[- ]traded", "etf"),
    (r"\bbonds?\b|fixed income|treasur(?:y|ies)(?! bills?)", "bonds"),
    (r"money market|cash equivalents?|t-?bills?|treasury bills?", "cash"),
)

_WORST = r"\bworst|\bbottom\b|biggest los|largest los|\blosers?\b|\blagg|\bweakest|\blowest|underperform|\blosing\b|least|dragging|\bdown the most|lost the most"
_BEST = r"\bbest\b|\btop\b|biggest gain|largest gain|\bwinners?\b|\bleading|\bleaders?\b|strongest|highest|outperform|\bmost\b|gained the most|\bup the most"

_RANKING = r"\bbest\b|\bworst\b|\btop\b|\bbottom\b|biggest (?:gain|los|winner)|largest (?:gain|los)|\bwinners?\b|\blosers?\b|\brank|leader|laggard|lagging|strongest|weakest|outperform|underperform|the most|most profitable|least profitable|which (?:of my )?(?:holdings?|positions?|stocks?|etfs?|investments?)\b.*\b(?:gain|los|up|down|perform|doing|made|return)"
_TRANSFERS = r"deposit|withdr[ae]w|\btransfer|\bwire\b|\bach\b|\bfunded\b|fund(?:ed)? my|moved money|money (?:in|out)|put in|took out|added money|contribution|contributed"
_ACTIVITY = r"\btrades?\b|\btraded\b|\bbought\b|\bbuys?\b|\bsold\b|\bsells?\b|\bsell\b|purchase|\borders?\b|\bactivity\b|transactions?|\bexecuted\b|\bfills?\b"
_CASH = r"\bcash\b|buying power|\bsettled\b|uninvested|available to (?:invest|trade|withdraw|spend)|\bsweep\b|spendable"
_VALUE = r"\bworth\b|\bvalues?\b|\bbalances?\b|net worth|how much (?:money )?(?:do i have|is in|have i got|is my|are my)|\btotal\b|\bsize of\b|how big"
_PERFORMANCE = r"\breturns?\b|perform|\bdoing\b|how (?:did|has|have|is|are) .*\bdo(?:ne|ing)?\b|\bgain|\bgrow|\bgrew\b|\bp ?/ ?l\b|\bp&l\b|profit|\bmade\b|\bearn|\bup or down\b|\bdown\b|\bup\b|\blost\b|\blos[es]|in the (?:green|red)"
_PRICE = r"\bprice|\bquote|trading at|trades? at|\bcost(?:s)? now|share price|\bticker\b|how much is (?:a share of |one share of )?(?!my\b)[a-z]+(?: stock| shares?)?\b(?:\?| (?:today|now|right now|currently|trading))|how much does .* cost|stock at\b|\bchange today\b|moving today|\btrading\b|what(?:'s| is) [a-z]+ at\b"
_HOLDING = r"how many shares|\bshares\b|\bown\b|\bhold\b|\bholding\b|position|cost basis|average cost|avg cost|bought at|\bstake\b|exposure"
_LIST = r"what(?:'s| is) in my|which (?:stocks|etfs|bonds|funds)\b|\bholdings\b|\bpositions\b|what do i own|what am i invested in|invested in|\blist\b|show (?:me )?(?:all )?my|allocation|breakdown|\bportfolio\b|what (?:stocks|etfs|bonds|funds) do i|\bmy (?:stocks|etfs|bonds|funds|investments)\b"
_DEFINITION = r"^(?:what(?:'s| is| are)(?!.*\bmy\b)|explain|how (?:does|do|are|is)(?! my\b)(?!.*\bmy\b)|tell me about|define|meaning of|difference between|should i|why (?:do|should|would)|when should|is it (?:good|better|wise)|what does|can you explain|help me understand|teach me|pros and cons)"
_MINE = r"\bmy\b|\bi\b|\bi'?ve\b|\bme\b"

_DATA_WORDS = (
    r"\b(?:worth|value|balance|returns?|holdings|positions|trades|deposits?|buying power)\b|\bi (?:own|hold|have)\b|\bdo i\b|"
    + _RANKING
)

_STOPWORDS = frozenset(
    [
        "A",
        "I",
        "AN",
        "AND",
        "ARE",
        "AS",
        "AT",
        "BE",
        "BY",
        "DO",
        "ETF",
        "ETFS",
        "FOR",
        "HOW",
        "IF",
        "IN",
        "IRA",
        "IS",
        "IT",
        "ME",
        "MY",
        "OF",
        "ON",
        "OR",
        "ROTH",
        "SO",
        "THE",
        "TO",
        "UP",
        "US",
        "WE",
        "YTD",
        "ACH",
        "USD",
        "PL",
        "CEO",
        "IPO",
        "RMD",
        "ALL",
        "ANY",
        "HAS",
        "HAD",
        "WAS",
        "WHAT",
        "WHO",
        "WHY",
        "CAN",
        "OK",
        "SP",
        "NOW",
        "DAY",
        "YEAR",
    ]
)


def _search(pattern: str, text: str) -> bool:
    return re.search(pattern, text) is not None


def _first(table: tuple[tuple[str, str], ...], text: str) -> str | None:
    """The value of the first (pattern, value) of ``table`` whose pattern is in ``text``."""
    return next((value for pattern, value in table if _search(pattern, text)), None)


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
        """(known symbols, unknown ticker-like words, symbols of an ambiguous company name)."""
        found: list[str] = []
        unknown: list[str] = []
        for token in re.findall(r"(?<![\w$])\$?[A-Za-z]{2,5}(?![\w'])", question):
            word = token.lstrip("$")
            upper = word.upper()
            if upper in self.symbols:
                if upper not in found:
                    found.append(upper)
            elif (word.isupper() or token.startswith("$")) and upper not in _STOPWORDS:
                unknown.append(upper)
        lowered = question.lower()
        ambiguous: list[str] = []
        for name, symbols in self.company_names.items():
            if re.search(rf"\b{re.escape(name)}\b", lowered):
                if len(symbols) == 1:
                    if symbols[0] not in found:
                        found.append(symbols[0])
                else:
                    ambiguous.extend(s for s in symbols if s not in ambiguous)
        return found, unknown, ambiguous

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
        return "worst" if _search(_WORST, q) else "best"

    def _topic(self, q: str) -> str | None:
        words = set(re.findall(r"[a-z0-9+\-]+", q))
        phrases = {
            "capital_gains": r"capital gains?|\btax(?:es|ed)?\b.*\bsell",
            "expense_ratios": r"expense ratio|fees? (?:of|on) (?:a |an )?(?:fund|etf)",
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

    def _intent(self, q: str, has_symbol: bool) -> tuple[str | None, float]:
        mine = _search(_MINE, q)
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
            return "quotes", 0.6
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
        if _search(_VALUE, q) and (mine or _search(r"\baccounts?\b|portfolio|total value", q)):
            return "account_value", 0.9
        if _search(_LIST, q) or (_search(_HOLDING, q) and mine):
            return "positions_list", 0.85
        if _search(_PRICE, q):
            return "quotes", 0.5
        if self._topic(q) is not None and not mine:
            return "facts", 0.6
        return None, 0.0

    # -- routing --------------------------------------------------------------------

    def route(self, question: str, given: Mapping[str, Any] | None = None) -> Route:
        """Route ``question`` (see the class docstring). Never raises."""
        given = {k: v for k, v in (given or {}).items() if v not in (None, "")}
        q = " ".join(question.lower().split())
        symbols, unknown, ambiguous = self._symbols(question)
        if "symbol" in given:
            symbols = [str(given["symbol"]).upper()]
        intent = given.get("intent")
        confidence = 1.0
        if intent not in INTENT_PARAMS:
            intent, confidence = self._intent(q, bool(symbols or unknown or ambiguous))
        if intent is None:
            return self._clarify(
                "What would you like to know? Pick one, or rephrase the question.",
                "radio",
                list(_INTENT_LABELS),
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
            elif len(symbols) > 1 and intent != "activity":
                return self._clarify(
                    "Which symbol should I look at first?", "radio", symbols, "symbol", intent
                )
            if symbols:
                params["symbol"] = symbols[0]
        if "account" in wanted:
            account = given.get("account") or self._account(q)
            if account in ("?", "!"):
                said = "That account does not exist here. " if account == "!" else ""
                return self._clarify(
                    f"{said}Which account do you mean?",
                    "radio",
                    [*self.accounts, "all"],
                    "account",
                    intent,
                )
            if account not in (None, "all"):
                params["account"] = account
        if "timeframe" in wanted:
            timeframe = given.get("timeframe") or _first(_TIMEFRAME_WORDS, q)
            if timeframe is None:
                return self._clarify(
                    "Over which period?", "radio", list(TIMEFRAMES), "timeframe", intent
                )
            params["timeframe"] = str(timeframe).upper()
        if "asset_class" in wanted:
            asset_class = given.get("asset_class") or _first(_ASSET_WORDS, q)
            if asset_class is not None:
                params["asset_class"] = asset_class
        if "direction" in wanted:
            params["direction"] = given.get("direction") or self._direction(q)
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
