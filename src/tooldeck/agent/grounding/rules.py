"""What the words around a backed figure say wrongly (the rules of ``check_grounding``).

A figure equal to a field of the cited data is not yet right: the sentence may state a
part as the whole ("You own 42 shares of AAPL", the account unnamed), rank it first when
another record beats it, leave open which of two records it is, or say it of another
account than the one the question asks about.
"""

from __future__ import annotations

from tooldeck.agent.grounding.evidence import _Evidence, _Fact
from tooldeck.agent.grounding.findings import Finding
from tooldeck.agent.grounding.matching import _PERIOD_CODES, _Claim, _vocabulary

__all__: list[str] = []  # the check's own machinery


def _unnamed_part(claim: _Claim, backing: list[_Fact], evidence: _Evidence) -> _Fact | None:
    """The total a sentence states when it names fewer subjects than the part backing it.

    "You have $8,420.00 in cash" matches the joint account's cash; the data also has the
    total cash of all accounts, and the sentence, naming no account, states that. "You
    own 42 shares of AAPL" names the symbol, not the account: it states the 60 shares
    of AAPL in all accounts.
    """
    if not backing or any(f.total or dict(f.subjects).keys() <= claim.subjects.keys()
                          for f in backing):  # fmt: skip
        return None
    names = {f.name for f in backing}
    totals = [
        t
        for t in evidence.facts
        if t.total and not t.excluding and t.name in names and t.kind is not None
        and dict(t.subjects) == claim.subjects
    ]  # fmt: skip
    return next((t for t in totals if abs(t.value - claim.value) > claim.tolerance), None)


def _outranked(claim: _Claim, fact: _Fact, evidence: _Evidence) -> _Fact | None:
    """The record that beats ``fact`` when the sentence ranks it first or last.

    "Joint Brokerage has the most, at $33,578.70": another account's total value is
    larger. Peers are the facts of the same field and kind, about the same types of
    subject (accounts with accounts, a symbol's total with other symbols' totals).
    """
    if not claim.rank or fact.kind is None:
        return None
    kinds = {k for k, _ in fact.subjects}

    def size(f: _Fact) -> float:  # ``rank`` -1 turns the order
        # a change ranks by its sign (the worst fall is the lowest), an amount by its
        # size (the largest expense is the most negative)
        return (f.value if fact.change else abs(f.value)) * claim.rank

    period = _PERIOD_CODES & fact.values  # a month's return ranks with other months'
    better = [
        f
        for f in evidence.facts
        if f.name == fact.name and f.kind == fact.kind and f.total == fact.total
        and not f.excluding and f.subjects != fact.subjects
        and _PERIOD_CODES & f.values == period
        and {k for k, _ in f.subjects} == kinds and size(f) - size(fact) > 1e-9
    ]  # fmt: skip
    return max(better, key=size, default=None)


def _rule_finding(claim: _Claim, backing: list[_Fact], evidence: _Evidence, sources: str
                  ) -> Finding | None:  # fmt: skip
    """What the sentence around a backed figure says wrongly, or None.

    A part said as the whole, or a rank ("the most") that another record beats.
    """
    total = _unnamed_part(claim, backing, evidence)
    if total is not None:  # "I have $8,420 in cash": one account's, said as everything
        missing = sorted({k for f in backing for k, _ in f.subjects} - claim.subjects.keys())
        return Finding(
            kind="untraced_number",
            text=claim.text,
            message=f"{claim.text} is {backing[0].describe()}, but the sentence names no "
            f"{', '.join(missing)}: said so, it states the total, which is {total.value:g} "
            f"({sources}).",
        )
    ranked = [f for f in backing if f.kind is not None]
    beaten = [b for b in (_outranked(claim, f, evidence) for f in ranked) if b is not None]
    if ranked and len(beaten) == len(ranked):
        word = "largest" if claim.rank > 0 else "smallest"
        return Finding(
            kind="untraced_number",
            text=claim.text,
            message=f"{claim.text} is said to be the {word}, but {beaten[0].describe()} is "
            f"{'larger' if claim.rank > 0 else 'smaller'} ({sources}).",
        )
    return None


def _asked(question: str, evidence: _Evidence) -> dict[str, str]:
    """The one account (and the one symbol) the question names, by type; none when two."""
    names, pattern = _vocabulary(frozenset(evidence.labels.items()), frozenset(evidence.ids))
    if pattern is None or not question:
        return {}
    named: dict[str, set[str]] = {}
    for m in pattern.finditer(question):
        kind, ident = names[m.group().lower()]
        if kind in ("account", "symbol"):
            named.setdefault(kind, set()).add(ident)
    return {kind: next(iter(idents)) for kind, idents in named.items() if len(idents) == 1}


def _of_another(said: dict[str, str], facts: list[_Fact], asked: dict[str, str]) -> _Fact | None:
    """A record of another account (or symbol) than the one the question asks about.

    "Individual account 3 month performance" → "It's up 4.1% over 3 months": the
    sentence names no account, and every record holding 4.1% is another account's (the
    Joint's): the figure answers about the wrong one. None when the sentence names one of
    that type itself, or a record of the one asked holds the figure.
    """
    for kind, ident in asked.items():
        if kind in said or not facts:
            continue
        if all(dict(f.subjects).get(kind) not in (None, ident) for f in facts):
            return facts[0]
    return None


def _readings(claim: _Claim, backing: list[_Fact]) -> list[_Fact]:
    """The records a figure could be of, when its sentence does not say which (issue 29, 1b).

    Two or more backing records (totals aside) that differ in a subject type the sentence
    names none of, other than a date: "You hold 10 shares" when two symbols have 10 each
    (of which?), "10 shares of AAPL" when two accounts hold 10 (the whole is 20). Several
    records on different days are not ambiguous: "a withdrawal of $800" is true of each.
    Empty when exactly one reading is consistent with every word of the sentence.
    """
    records = {f.subjects: f for f in backing if f.kind is not None and not f.total}
    named = set(claim.subjects)  # "Joint is up +0.6%": Joint's return, not JPM's quote
    whole = {s: f for s, f in records.items() if named <= {k for k, _ in s}}
    records = whole or records
    if len(records) < 2:
        return []
    kinds = {kind for subjects in records for kind, _ in subjects} - {"date"}
    differ = {k for k in kinds if len({dict(s).get(k) for s in records}) > 1}
    return list(records.values()) if differ - claim.subjects.keys() else []
