"""What a brokerage question names: symbols, accounts, topics, quantities, rankings.

``QuestionWords`` holds the data file's vocabulary (symbols, company names, accounts,
fact topics) and reads each parameter from a normalised question; ``QuestionRouter``
decides the intent and asks for what is missing.
"""

from __future__ import annotations

import re
from datetime import date

from tooldeck.packs.brokerage.data import BrokerageData
from tooldeck.packs.brokerage.vocabulary import (
    _ACCOUNT_RANK,
    _ASSET_WORDS,
    _BY_GAIN,
    _BY_TODAY,
    _BY_VALUE,
    _EXCLUDE,
    _NAME_TAILS,
    _NUMBERS,
    _PERFORMANCE,
    _STOPWORDS,
    _WORST,
    _first,
    _search,
)

__all__ = ["QuestionWords"]


class QuestionWords:
    """The data's vocabulary and the readers of a question's parameters.

    Args:
        data: The loaded data file.
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
        if not found and not ambiguous:  # "appl", "nvida": one slip of a ticker or a name
            for m in re.finditer(r"\b[a-z]{4,10}\b", lowered):
                if m.group().upper() in unknown:
                    continue  # "APPL" written as a ticker: asked about ("did you mean AAPL?")
                slipped = self._misspelled(m.group())
                if slipped is not None:
                    found.setdefault(slipped, m.start())
        return sorted(found, key=found.__getitem__), unknown, ambiguous

    def _misspelled(self, word: str) -> str | None:
        """The one symbol ``word`` is a slip of, or None (none, or more than one).

        A slip: one letter added, dropped, changed or two swapped, from a ticker of four
        or more letters or a company name of five or more, with the same first letter.
        """
        if word.upper() in _STOPWORDS or word in _COMMON:
            return None
        near = {
            symbol
            for name, symbols in (
                *((t.lower(), [t]) for t in self.symbols if len(t) >= 4),
                *((n, v) for n, v in self.company_names.items() if len(n) >= 5 and len(v) == 1),
            )
            if name[0] == word[0] and name != word and _one_slip(word, name)
            for symbol in symbols
        }  # fmt: skip
        return near.pop() if len(near) == 1 else None

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

    def _accounts_in(self, q: str) -> list[str]:
        """The accounts ``q`` names, in the order it names them (each once)."""
        found = []
        for account, pattern in (
            ("roth_ira", r"\broth\b|\bira\b|retirement account"),
            ("joint", r"\bjoint\b|shared account"),
            ("individual", r"\bindividual\b|\btaxable\b"),
        ):
            match = re.search(pattern, q)
            if match and account in self.accounts:
                found.append((match.start(), account))
        return [account for _, account in sorted(found)]

    def _quantity(self, q: str) -> float | None:
        """N in "N shares of X" or "N X" (X a symbol or company), None when not said."""
        for match in re.finditer(
            r"(?<![$\d.,])(\d+(?:\.\d+)?|"
            + "|".join(_NUMBERS)
            + r")\s+(?:more\s+)?([a-z][\w.&-]*)",
            q,
        ):
            number, word = match.groups()
            if word.startswith("share") or self._symbols(word)[0]:
                value = float(_NUMBERS.get(number, number))
                return int(value) if value.is_integer() else value
        return None

    @staticmethod
    def _direction(q: str) -> str:
        if _search(r"(?:biggest|largest) to smallest", q):
            return "best"
        return "worst" if _search(_WORST + r"|\bsmallest\b|least valuable", q) else "best"

    def _topic(self, q: str, *, keywords: bool = True) -> str | None:
        """The fact topic ``q`` names: by a phrase, else (``keywords``) by most keywords."""
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
        if not keywords:
            return None
        best, best_hits = None, 0
        for topic, words_of_topic in self.topics.items():
            hits = len(words & set(words_of_topic))
            if hits > best_hits:
                best, best_hits = topic, hits
        return best

    def _ranked_by(self, q: str) -> str:
        """What a ranking ranks by: ``today``, ``value``, ``gain`` or ``return``.

        The day's change, the market value, the P/L in dollars, or the P/L %.
        """
        if _search(_BY_TODAY, q):
            return "today"
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


_COMMON = frozenset(("apply", "ample", "maple", "table", "vote", "votes"))
"""Words one slip from a ticker or a company name that mean themselves."""


def _one_slip(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` are one edit apart (Damerau's distance one).

    One added, dropped or changed letter, or two neighbouring letters swapped.
    """
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        return len(diff) == 1 or (
            len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
            and a[diff[1]] == b[diff[0]]
        )  # fmt: skip
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))
