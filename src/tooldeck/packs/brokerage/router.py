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
from datetime import date, timedelta
from typing import Any

from tooldeck.core.intents import ClarifyingQuestion, Route
from tooldeck.core.names import closest_names
from tooldeck.packs.brokerage.data import TIMEFRAMES, BrokerageData

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

_INTENT_BY_LABEL = {label: intent for intent, label in _INTENT_LABELS.items()}
"""A clarifying question's options are labels; the answer comes back as one of them."""

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
_TRANSFERS = r"\bwires?\b|money did (?:i|we) move|\bmove(?:d)? money|deposit|withdr[ae]w|\btransfer|\bwire\b|\bach\b|\bfunded\b|fund(?:ed)? my|moved money|(?<!most )money (?:in|out)|put in|took out|added money|contribution|contributed"
_ACTIVITY = r"\btrades?\b|\btraded\b|\bbought\b|\bbuys?\b|\bsold\b|\bsells?\b|\bsell\b|purchase|\borders?\b|\bactivity\b|transactions?|\bexecuted\b|\bfills?\b"
_CASH = r"\bcash\b|buying power|\bsettled\b|uninvested|available to (?:invest|trade|withdraw|spend)|\bsweep\b|spendable"
_VALUE = r"\bworth\b|\bvalues?\b|\bbalances?\b|net worth|how much (?:money )?(?:do i have|is in|have i got|is my|are my)|\btotal\b|\bsize of\b|how big"
_PERFORMANCE = r"\breturns?\b|perform|\bdoing\b|how (?:did|has|have|is|are) .*\bdo(?:ne|ing)?\b|\bgain|\bgrow|\bgrew\b|\bp ?/ ?l\b|\bp&l\b|profit|\bmade\b|\bearn|\bup or down\b|\bdown\b|\bup\b|\blost\b|\blos[es]|in the (?:green|red)"
_PRICE = r"\bprice|\bquote|trading at|trades? at|\bcost(?:s)? now|share price|\bticker\b|how much is (?:a share of |one share of )?(?!my\b)[a-z]+(?: stock| shares?)?\b(?:\?| (?:today|now|right now|currently|trading))|how much does .* cost|stock at\b|\bchange today\b|moving today|\btrading\b|what(?:'s| is) [a-z]+ at\b"
_HOLDING = r"how many shares|\bshares\b|\bown\b|\bhold\b|\bholding\b|position|cost basis|average cost|avg cost|bought at|\bstake\b|exposure"
_LIST = r"\beverything\b|what(?:'s| is) in my|which (?:stocks|etfs|bonds|funds)\b|\bholdings\b|\bpositions\b|what do i own|what am i invested in|invested in|\blist\b|show (?:me )?(?:all )?my|allocation|breakdown|\bportfolio\b|what (?:stocks|etfs|bonds|funds) do i|\bmy (?:stocks|etfs|bonds|funds|investments)\b"
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


_TYPOS = {
    "csh": "cash", "cahs": "cash", "prce": "price", "pirce": "price", "yr": "year",
    "yrs": "years", "acct": "account", "accts": "accounts", "acount": "account",
    "acros": "across", "accross": "across", "hw": "how", "hav": "have", "r": "are",
    "u": "you", "pls": "please", "plz": "please", "whats": "what's", "hows": "how's",
    "$": "money", "ira's": "ira", "etf's": "etfs", "perfomance": "performance",
    "preformance": "performance", "balanc": "balance", "postions": "positions",
    "holdigns": "holdings", "deposti": "deposit", "withdrawl": "withdrawal",
    "withdrawls": "withdrawals",
}  # fmt: skip
"""Misspellings and shorthands users write, fixed word by word before routing."""

_OUT_OF_SCOPE = (
    r"\bweather\b|\bforecast\b|\brain\b|\bbitcoin\b|\bbtc\b|\bethereum\b|\beth\b|\bcrypto|"
    r"dogecoin|\bnews\b|\bheadlines?\b|\bflights?\b|\bhotel|\bjoke\b|\bwon the\b|\bgame\b|"
    r"\bscore\b|\bmortgage|\brent\b|\bhouse\b|\bdow\b|\bnasdaq\b|s&p 500 index|\bthe index\b|"
    r"\bgdp\b|\binflation\b|\blunch\b|\bdinner\b|\brecipe|\bchecking\b|\bsavings account\b|"
    r"transfer \$?\d|\bsend money\b|\bpay my\b|\bsolana\b|\bcardano\b|\bxrp\b|"
    r"litecoin|\bcoins?\b|open (?:a |an )?(?:new )?account|close my account|"
    r"how do i (?:sign up|log ?in|reset)"
)
"""Questions the brokerage data cannot answer: said plainly, with what it can answer."""

_EXCLUDE = (
    r"\b(?:not|isn't|aren't|excluding|exclude|except(?: for)?|besides|other than|apart from|"
    r"without|outside(?: of)?|leaving out|minus|but)\b|\bnon-?(?=[a-z])"
)
_TYPES = (
    (r"\bdeposit|\bput in\b|\badded money\b|\bfunded\b|\bmoney in\b", "deposit"),
    (r"\bwithdr[ae]w|\btook out\b|\bmoney out\b|\bpulled out\b", "withdrawal"),
)
_SIDES = (
    (r"\bbuys?\b|\bbought\b|\bpurchase", "BUY"),
    (r"\bsells?\b|\bsold\b", "SELL"),
)
_STATUSES = (
    (r"\bpending\b|\bin progress\b|\bnot (?:yet )?(?:arrived|cleared)", "pending"),
    (r"\bfailed\b|\brejected\b|\breturned\b|\bbounced\b", "failed"),
    (r"\bcompleted\b|\bcleared ones\b", "completed"),
)
_FILTERS = {
    "side": _SIDES,
    "type": _TYPES,
    "method": ((r"\bach\b", "ACH"), (r"\bwires?\b", "Wire")),
    "status": _STATUSES,
}
"""Filters of trades and transfers, read from the question's words."""
_BY_VALUE = (
    r"\bbiggest\b|\blargest\b|\bsmallest\b|\bworth the (?:most|least)\b|by (?:market )?value|"
    r"most valuable|least valuable|biggest to smallest|largest to smallest|the most money in|"
    r"(?:value|worth) of (?:my |all my )?(?:etfs|stocks|bonds|funds)"
)
_BY_GAIN = (
    r"in dollars|made me the most|most money (?:made|gained|earned)|"
    r"\bbiggest (?:winners?|losers?|gains?|loss(?:es)?)|dollar (?:gain|loss)"
)
_ACCOUNT_RANK = (
    r"which (?:of my )?(?:account|acct)s?\b|(?:biggest|largest|smallest) account|"
    r"accounts? (?:is |are )?worth the (?:most|least)|rank (?:my )?accounts|"
    r"where do i have the (?:most|least)|which (?:one )?is (?:the )?(?:highest|lowest|biggest)"
)
_MONTHS = {
    m: i for i, names in enumerate(
        [("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"),
         ("may",), ("jun", "june"), ("jul", "july"), ("aug", "august"),
         ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
         ("dec", "december")], start=1)
    for m in names
}  # fmt: skip
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10}  # fmt: skip
_SPLIT = re.compile(
    r"\?\s+(?=\S)|;\s*|,?\s+(?:and\s+)?also\s+|,?\s+and\s+(?=(?:what|what's|whats|how|how's|"
    r"which|show|tell|list|give|my|when|did|do|is|are|also)\b)",
    re.IGNORECASE,
)
_ONE = (
    r"\b(?:last|latest|most recent)\b(?! (?:week|month|year)\b)(?! \w+ (?:days?|weeks?|months?))|"
    r"\bcleared\b|\bgone through\b|\bgo through\b|\barrived?\b"
)
"""Words asking for the one most recent transfer or trade ("my last deposit")."""
_ADVICE = (
    r"^(?:how should i think about|what should i know about|is it a good idea|any tips on|"
    r"how do (?:fees|expense)|what should i do about)"
)
_TOP_N = r"\b(?:top|bottom) \w+ (?:positions?|holdings?|stocks?|etfs?|performers?|investments?)\b"
_NAME_TAILS = frozenset(
    {"ira", "account", "acct", "brokerage", "one", "funds", "fund", "stocks", "etfs", "shares"}
)
"""Words that end an account's or a holding's name ("roth ira", "joint account")."""
_PRONOUN = (
    r"\b(?:it|its|they|them|there|those|that one|the same)\b|"
    r"^how many (?:do|did|does) (?:i|we) (?:own|hold|have)$"
)
_COVERS = {"symbol_performance": frozenset({"positions", "quotes"})}
"""Intents whose answer covers other intents' for the same parameters."""


def _normalize(question: str) -> str:
    """Lower case, one space, the usual misspellings fixed (``_TYPOS``)."""
    words = question.lower().replace("’", "'").split()
    return " ".join(_TYPOS.get(w.strip("?.,!"), w) for w in words)


def _number(word: str) -> int | None:
    return int(word) if word.isdigit() else _NUMBERS.get(word)


def _day(month: str, day: str | None, today: date, *, end: bool = False) -> date:
    """A day of ``month`` (this year, or last year when it is still to come)."""
    m = _MONTHS[month]
    year = today.year if m <= today.month else today.year - 1
    last = (date(year + (m == 12), m % 12 + 1, 1) - timedelta(days=1)).day
    if day:  # "feb 30" is read as the month's last day, "nov 0" as its first
        return date(year, m, min(max(int(day), 1), last))
    return date(year, m, last if end else 1)


def _window(q: str, today: date) -> tuple[date | None, date | None]:
    """The days a question's words name (``since``, ``until``), relative to ``today``."""
    md = rf"({_MONTH})\.?\s*(\d{{1,2}})?(?:st|nd|rd|th)?"
    between = re.search(rf"between {md} and {md}", q)
    if between:
        a, b = between.groups()[:2], between.groups()[2:]
        return _day(a[0], a[1], today), _day(b[0], b[1], today, end=True)
    since = re.search(rf"\b(?:since|from|after) {md}", q)
    if since:
        return _day(since.group(1), since.group(2), today), None
    before = re.search(rf"\bbefore {md}", q)
    if before:
        return None, _day(before.group(1), before.group(2), today) - timedelta(days=1)
    month = re.search(rf"\bin ({_MONTH})\b", q)
    if month:
        return _day(month.group(1), None, today), _day(month.group(1), None, today, end=True)
    year = re.search(r"\bin (20\d\d)\b", q)
    if year:
        y = int(year.group(1))
        return date(y, 1, 1), date(y, 12, 31)
    recent = re.search(r"\b(?:last|past) (\w+) (day|week)s?\b", q)
    count = _number(recent.group(1)) if recent else None
    if recent and count:
        days = min(count * (7 if recent.group(2) == "week" else 1), 36_500)
        return today - timedelta(days=days), None
    monday = today - timedelta(days=today.weekday())
    first = today.replace(day=1)
    previous = (first - timedelta(days=1)).replace(day=1)
    for pattern, window in (
        (r"\btoday\b", (today, today)),
        (r"\byesterday\b", (today - timedelta(days=1), today - timedelta(days=1))),
        (r"\bthis week\b", (monday, None)),
        (r"\blast week\b", (monday - timedelta(days=7), monday - timedelta(days=1))),
        (r"\bpast week\b", (today - timedelta(days=7), None)),
        (r"\bthis month\b", (first, None)),
        (r"\blast month\b", (previous, first - timedelta(days=1))),
        (r"\bpast month\b", (today - timedelta(days=30), None)),
        (r"\bthis year\b|\bytd\b|year to date", (date(today.year, 1, 1), None)),
        (r"\blast year\b", (date(today.year - 1, 1, 1), date(today.year - 1, 12, 31))),
    ):
        if _search(pattern, q):
            return window
    return None, None


def _limit(q: str) -> int | None:
    """How many rows a question asks for: "top 3", "last 2 trades", "my last deposit"."""
    count = re.search(
        r"\b(?:top|last|first|bottom|worst|best|biggest|largest|smallest)\s+(\w+)\b(?!\s+(?:days?|weeks?|months?|years?))",
        q,
    )
    if count and _number(count.group(1)):
        return _number(count.group(1))
    count = re.search(r"\b(\w+) (?:biggest|largest|smallest|best|worst)\b", q)
    if count and _number(count.group(1)):
        return _number(count.group(1))
    return None


def _split_parts(question: str) -> list[str]:
    """The parts of a question in several parts ("AAPL's price and my cash")."""
    parts = [p.strip(" ,.?") for p in _SPLIT.split(question)]
    return [p for p in parts if len(p.split()) >= 2]


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
