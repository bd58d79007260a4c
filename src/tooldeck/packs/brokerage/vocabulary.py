"""The brokerage router's vocabulary: cue words per intent, filters, dates, numbers.

Read by ``router.QuestionRouter``; each pattern runs over the normalised question
(lower case, one space, the usual misspellings fixed: ``_normalize``).
"""

from __future__ import annotations

import re
from datetime import date, timedelta

__all__: list[str] = []  # the router's own vocabulary; nothing here is public

_INTENT_LABELS = {
    "allocation": "asset allocation",
    "account_value": "account value",
    "cash_balance": "cash balance",
    "positions_list": "holdings",
    "performance": "performance",
    "portfolio_ranking": "best and worst holdings",
    "activity": "recent trades",
    "transfers": "deposits and withdrawals",
    "quotes": "a quote",
    "facts": "an explanation of a topic",
    "positions": "the shares you hold",
    "symbol_performance": "a holding's value and profit",
    "cost_of_shares": "the cost of buying shares",
    "portfolio_share": "a holding's share of the portfolio",
    "account_comparison": "two accounts compared",
    "class_total": "the value of a class of holdings",
    "portfolio_pl": "the profit or loss of all holdings",
}

_INTENT_BY_LABEL = {label: intent for intent, label in _INTENT_LABELS.items()}
"""A clarifying question's options are labels; the answer comes back as one of them."""

_TIMEFRAME_WORDS: tuple[tuple[str, str], ...] = (
    (r"year[- ]to[- ]date|\bytd\b|this year|so far this year|since (?:january|jan\b|the start of the year)", "YTD"),
    (r"all[- ]time|since inception|since (?:i|we) (?:opened|started|began)|since the (?:beginning|start)|\bever\b|lifetime|\ball\b(?= (?:of )?(?:the )?time)", "ALL"),
    (r"\btoday\b|\b1 ?d\b|\b1 days?\b|one day|1-day|since yesterday|past day|last day|24 hours|\bdaily\b", "1D"),
    (r"this week|past week|last week|\b1 ?w\b|\b1 (?:week|wk)s?\b|one week|1-week|7 days|seven days|\bweekly\b", "1W"),
    (r"(?:3|three)[- ]months?\b|90 days|quarter|\b3 ?m\b|3-month", "3M"),
    (r"this month|past month|last month|\b1 ?m\b|\b1 (?:month|mo)s?\b|one month|1-month|30 days|\bmonthly\b", "1M"),
    (r"past year|last year|\b1 ?y\b|\b1 (?:year|yr)s?\b|one year|1-year|12 months|twelve months|\bannual|trailing year|52 weeks", "1Y"),
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
_TRANSFERS = r"\bwires?\b|money did (?:i|we) move|\bmove(?:d)? money|deposit|withdr[ae]w|\btransfer|\bwire\b|\bach\b|\bfunded\b|fund(?:ed)? my|moved money|(?<!most )money (?:in|out)|put in|took out|add(?:ed)? (?:any |more |some )?(?:money|cash|funds)|contribution|contributed"
_ACTIVITY = r"\badd(?:ed)? (?:any|more|some)\b(?! (?:money|cash|funds))|\btrades?\b|\btraded\b|\bbought\b|\bbuys?\b|\bsold\b|\bsells?\b|\bsell\b|purchase|\borders?\b|\bactivity\b|transactions?|\bexecuted\b|\bfills?\b"
_CASH = r"\bcash\b|buying power|\bsettled\b|uninvested|available to (?:invest|trade|withdraw|spend)|\bsweep\b|spendable"
_VALUE = r"\bworth\b|\bvalues?\b|\bbalances?\b|net worth|how much (?:money )?(?:do i have|is in|have i got|is my|are my)|\btotal\b|\bsize of\b|how big"
_PERFORMANCE = r"\breturns?\b|perform|how(?:'s| is) .* going|\bmake\b|\bmaking\b|\blosing\b|\bdoing\b|how (?:did|has|have|is|are) .*\bdo(?:ne|ing)?\b|\bgain|\bgrow|\bgrew\b|\bp ?/ ?l\b|\bp&l\b|profit|\bmade\b|\bearn|\bup or down\b|\bdown\b|\bup\b|\blost\b|\blos[es]|in the (?:green|red)"
_PRICE = r"\bprice|going for\b|\bquote|trading at|trades? at|\bcost(?:s)? now|share price|\bticker\b|how much is (?:a share of |one share of )?(?!my\b)[a-z]+(?: stock| shares?)?\b(?:\?| (?:today|now|right now|currently|trading))|how much does .* cost|stock at\b|\bchange today\b|moving today|\btrading\b|what(?:'s| is) [a-z]+ at\b"
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
    r"how do i (?:sign up|log ?in|reset)|"
    r"\b(?:how much|what) (?:in )?tax(?:es)?\b[^?.]{0,30}\b(?:owe|pay)\b|\btax bill\b|"
    r"\bowe (?:in )?tax(?:es)?\b|\btax(?:es)? (?:will|would|do|did|am) i\b"
)
"""Questions the brokerage data cannot answer: said plainly, with what it can answer."""
_CODE_WORDS = (
    r"(?<![\w-])(?:--?[a-z][\w-]*|\w+\(\)|[a-z]+_[a-z_]+|0x[0-9a-f]+)(?![\w-])|"
    r"\b(?:functions?|pars(?:e|es|ed|ing)|strings?|arguments?|parameters?|params?|flags?|"
    r"(?:sub)?commands?|decorators?|callbacks?|exceptions?|modules?|library|script|cli|api|"
    r"json|http|urls?|docstrings?|stdout|stdin|terminal|bash|python|pip|config file|"
    r"env var|environment variable|objects?)\b"
)
"""A question about code ("a --token flag", "parses hex numbers", "the cli"): not about
the portfolio. Words a portfolio question may use ("options", "share class", "cost basis
method", "import a statement") are left out. None of the 514 labelled and held-out
brokerage questions has one ("write my own value type, e.g. one that parses hex numbers",
beside documentation, was the account's value at 0.9)."""

_EXCLUDE = (
    r"\b(?:not|isn't|aren't|excluding|exclude|except(?: for)?|besides|other than|apart from|"
    r"without|outside(?: of)?|leaving out|minus|but)\b|\bnon-?(?=[a-z])"
)
_TYPES = (
    (
        r"\bdeposit|\bput in\b|\badd(?:ed)? (?:any |more |some )?(?:money|cash|funds)\b|\bfunded\b|"
        r"\bmoney in\b",
        "deposit",
    ),
    (r"\bwithdr[ae]w|\btook out\b|\bmoney out\b|\bpulled out\b", "withdrawal"),
)
_SIDES = (
    (
        r"\bbuys?\b|\bbought\b|\bpurchase|\badd(?:ed)? (?:any|more|some)\b(?! (?:money|cash|funds))",
        "BUY",
    ),
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
_BY_TODAY = (
    r"\btoday\b|\bon the day\b|\bdaily (?:move|change)|moved the most|"
    r"\btop (?:gainers?|movers?|losers?)\b|\bbiggest (?:movers?|fallers?)\b"
)
"""A ranking by the day's change ("the biggest % gain today", "top movers")."""
_BY_GAIN = (
    r"(?:best|worst|most|least|top|biggest|largest|rank\w*)\b.* in dollars|made me the most|most money (?:made|gained|earned)|"
    r"\bbiggest (?:winners?|losers?|gains?|loss(?:es)?)|dollar (?:gain|loss)"
)
_ACCOUNT_RANK = (
    r"which (?:of my )?(?:account|acct)s?\b|(?:biggest|largest|smallest) account|"
    r"accounts? (?:is |are )?worth the (?:most|least)|rank (?:my )?accounts|"
    r"where do i have the (?:most|least)|where (?:is|are) (?:the )?(?:most|least) of my|which (?:one )?is (?:the )?(?:highest|lowest|biggest)"
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
    r"\bclear(?:ed)?\b|\bgone through\b|\bgo through\b|\barrived?\b"
)
"""Words asking for the one most recent transfer or trade ("my last deposit")."""
_ADVICE = (
    r"^(?:how should i think about|what should i know about|is it a good idea|any tips on|"
    r"how do (?:fees|expense)|what should i do about)"
)
_TRADE_ADVICE = (
    r"^should (?:i|we) (?:buy|sell|hold|add|trim|dump|get|keep)\b|good time to (?:buy|sell)|"
    r"\bwill (?:\w+ )?(?:keep )?(?:be worth|go(?:ing)? up|go(?:ing)? down|ris(?:e|ing)|fall(?:ing)?|drop|recover)\b|\bnext (?:year|month|week)\b|"
    r"\bpredict"
)
"""Advice on one trade, or a prediction: the data cannot answer it (``out_of_scope``)."""
_COST = (
    r"\bcosts?\b|\bafford\b|set me back|how much (?:for|would|money do i need|do i need)|"
    r"would (?:that|it) (?:be|cost)|\bprice of\b|at today's price|how much"
)
"""Asking what buying N shares costs (``cost_of_shares``, with a quantity)."""
_SHARE_OF = (
    r"\bweight|\bpercent|\bfraction\b|\bportion\b|concentrat|% of|how much of my|too much of"
    r"|(?:\bshare of\b|\bpart of\b|\bslice\b|\bexposure\b)"
    r"(?=.*(?:portfolio|holdings|\bmoney\b|\bin my\b|\bam i\b|\bmy (?:roth|ira|joint|individual)\b))"
)
"""A holding's share of the whole (``portfolio_share``); "share of", "part of", "slice" and
"exposure" only with the whole named ("of my portfolio")."""
_COMPARE = (
    r"more than|less than|\bbigger\b|\blarger\b|\bsmaller\b|\bcompare|\bvs\.?\b|\bversus\b|"
    r"difference between|how much more|\bmore\b.*\bthan\b|\bor\b"
)
"""Two accounts named with one of these are compared (``account_comparison``)."""
_PL = r"unrealized|\bp ?/ ?l\b|\bp&l\b|profit|\bgain|(?<!add )\bup\b|\bdown\b|\bmade\b|\bmake\b|\bearn"
_OVERALL = (
    r"\boverall\b|\btotal\b|\ball (?:of )?(?:my )?(?:positions|holdings|investments|stocks)\b|"
    r"\bacross\b|since i bought|\bunrealized\b|on my (?:positions|holdings|investments)\b"
)
"""P/L words with one of these, and no period, ask the P/L since purchase (``portfolio_pl``)."""
_CLASS_VALUE = r"\bworth\b|\bvalue\b|\btotal\b|how much|altogether|\bsum\b|add up"
"""An asset class with one of these asks its value (``class_total``)."""
_TOP_N = r"\b(?:top|bottom) \w+ (?:positions?|holdings?|stocks?|etfs?|performers?|investments?)\b"
_NAME_TAILS = frozenset(
    {"ira", "account", "acct", "brokerage", "one", "funds", "fund", "stocks", "etfs", "shares"}
)
"""Words that end an account's or a holding's name ("roth ira", "joint account")."""
_PAID_VS_WORTH = r"\b(?:what|how much) (?:did )?(?:i|we) (?:pay|paid|put in)\b[^?]{0,60}\bworth\b"
"""What the holdings cost against what they are worth (``portfolio_pl``)."""
_LOSING = (
    r"\b(?:losing|lost|lose) money\b|\bin the red\b|\bunderwater\b|\bbelow (?:what i paid|cost)\b"
)
"""Which holdings are below their cost (``portfolio_ranking`` by gain, the worst first)."""
_COMBINED = r"\bcombin\w*|\bacross (?:all |both |my )?accounts\b|\ball accounts together\b"
"""A holding counted over every account it is held in."""
_ALLOCATION = (
    r"\ballocat\w*|\basset (?:mix|classes|class breakdown)\b|\bby asset class\b|\bdiversified\b|"
    r"\b(?:stocks?|etfs?|bonds?) (?:vs\.?|versus) (?:stocks?|etfs?|bonds?|cash)\b|"
    r"\b(?:split|breakdown|broken down|divided|mix)\b[^?.]{0,40}\b(?:stocks?|etfs?|bonds?|classes)\b"
)
"""How the money is split over asset classes (``allocation``)."""
_DID_BEST = r"\b(?:did|done|do|doing|performed) (?:the )?(?:best|worst|better|worse)\b"
"""How an account did against the others over a period."""
_SINCE_BOUGHT = (
    r"\bsince (?:i|we) (?:first )?(?:bought|purchased|got|bought in)\b|\bsince purchase\b"
)
"""A holding's change since it was bought (not the buy itself)."""
_WIDE = (
    r"\b(?:all|every|everything|each|other|others|overall|portfolio|total|accounts|"
    r"holdings|positions|cash|stocks|etfs)\b"
)
"""Words of a part of a question that make it about more than the symbol of the part before."""
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
