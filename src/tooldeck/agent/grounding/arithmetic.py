"""Figures an answer works out from its own checked figures (issue 54, item 3).

A right answer often states what it computed: "60 shares at $228.42 are worth
$13,705.20", "up $3.62 a share, about $36.20 (+1.61%)", "$740.92 across all three
accounts: +$528.06, +$142.49 and +$70.37". No field holds $13,705.20, so the rules
alone reject it (right answers rejected: 57-84 % on the outside sets). Here a figure no
field backs is accepted when it is one step of arithmetic from figures the same answer
states and the check backed (or the question states, or the data's grand totals):

- a **sum** of two to six figures of the same kind in its own sentence (or the list it
  heads); called a total ("in total", "across all"), the parts must be every non-zero
  record of their field, so a sum over the wrong subset stays rejected;
- a **difference**, **product** (a quantity times a per-share amount), **quotient**
  (an amount over a quantity: an average cost) or **percentage** of two figures of
  the answer (a gain's of where it started, not of where it ended), or of the data's
  grand total where the sentence says "of your portfolio".

A figure a record holds, that the sentence says of another record, is not derived: it
stays the mismatch it is.

A derived figure may feed the next one (42 + 18 = 60, then 60 × $228.42), three steps
at most. Plain numbers (counts, shares) are derived by sums in their sentence only: an
integer is too easy to hit by chance.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from tooldeck.agent.grounding.evidence import _Evidence, _Fact
from tooldeck.agent.grounding.matching import _Claim
from tooldeck.agent.grounding.patterns import _OF_WHOLE

_LOSS = re.compile(r"\b(?:down|loss|losses|lost|lose|losing|fell|fall|drop\w*|below)\b", re.I)

__all__: list[str] = []  # the check's own machinery (``derived``, ``Known``, ``kind_of``)


@dataclass(frozen=True, slots=True)
class Known:
    """A figure the answer states that holds, and the record it was backed by."""

    value: float
    kind: str
    start: int
    sentence: str
    fact: _Fact | None = None
    """The backing record (None: derived here, or the question's number)."""


_STEPS = 3
_MOST_PARTS = 6
_NEAREST = 12
"""How many of the figures nearest a sum's are tried as its parts."""
_PAIRED_NEAREST = 24
"""How many of the figures nearest a figure are tried in pairs (with the question's)."""
_MOST_TRIES = 200_000
"""Sums and pairs tried for one answer, at most: a 27 KB answer of 1,000 untraced
figures took 155 s without a bound (the check runs on the server's event loop); past
it, the figures left stay untraced."""


class _Budget:
    """What is left of ``_MOST_TRIES`` for one answer."""

    __slots__ = ("left",)

    def __init__(self, tries: int) -> None:
        self.left = tries

    def spend(self, tries: int) -> bool:
        """Take ``tries``; False (and nothing taken) when fewer are left."""
        if tries > self.left:
            self.left = 0
            return False
        self.left -= tries
        return True


def kind_of(claim: _Claim) -> str:
    """``money``, ``percent`` or ``quantity`` (any plain number)."""
    for kind in ("money", "percent"):
        if kind in claim.kinds:
            return kind
    return "quantity"


def derived(untraced: Sequence[_Claim], known: list[Known], evidence: _Evidence) -> list[_Claim]:
    """The claims of ``untraced`` that no step of arithmetic reaches (the rest hold)."""
    left = list(untraced)
    budget = _Budget(_MOST_TRIES)
    for _ in range(_STEPS):
        reached = [c for c in left if _reaches(c, known, evidence, budget)]
        if not reached:
            break
        for claim in reached:
            known.append(Known(claim.value, kind_of(claim), claim.start, claim.sentence))
        left = [c for c in left if c not in reached]
    return left


def _close(claim: _Claim, value: float) -> bool:
    said = abs(claim.value)
    return abs(abs(value) - said) <= claim.tolerance + 1e-9 * max(1.0, said)


def _reaches(claim: _Claim, known: list[Known], evidence: _Evidence, budget: _Budget) -> bool:
    if not budget.left or evidence.near(claim.value, claim.tolerance):
        return False  # a record holds it, and the sentence says it of another: not derived
    kind = kind_of(claim)
    return _summed(claim, kind, known, evidence, budget) or (
        kind != "quantity" and _paired(claim, kind, known, evidence, budget)
    )


def _nearest(claim: _Claim, figures: Sequence[Known], count: int) -> list[Known]:
    """The ``count`` figures said nearest ``claim`` (its own position left out)."""
    return sorted(
        (k for k in figures if k.start != claim.start), key=lambda k: abs(k.start - claim.start)
    )[:count]


def _summed(
    claim: _Claim, kind: str, known: list[Known], evidence: _Evidence, budget: _Budget
) -> bool:
    """A sum of figures of its kind in its sentence (or the list after it)."""
    if kind == "percent":
        return False  # percentages of different wholes do not add up
    near = _nearest(
        claim,
        [k for k in known if k.kind == kind
         and (k.sentence == claim.sentence or k.start > claim.start)],
        _NEAREST,
    )  # fmt: skip
    for size in range(2, min(_MOST_PARTS, len(near)) + 1):
        if not budget.spend(math.comb(len(near), size)):
            return False
        for parts in itertools.combinations(near, size):
            if _close(claim, sum(abs(p.value) for p in parts)) and _covers(claim, parts, evidence):
                return True
    return False


def _covers(claim: _Claim, parts: Sequence[Known], evidence: _Evidence) -> bool:
    """Whether a sum called a total adds every non-zero record of its parts' field."""
    if not (claim.total or claim.own_total):
        return True
    facts = [p.fact for p in parts if p.fact is not None]
    names = {f.name for f in facts}
    if len(facts) < len(parts) or len(names) != 1:
        return True  # parts derived here, or of several fields: no peers to count
    name = names.pop()
    kinds = {k for f in facts for k, _ in f.subjects}
    peers = {
        f.subjects for f in evidence.facts
        if f.name == name and not f.total and not f.excluding and abs(f.value) > 1e-9
        and {k for k, _ in f.subjects} == kinds
    }  # fmt: skip
    return peers <= {f.subjects for f in facts}


def _paired(
    claim: _Claim, kind: str, known: list[Known], evidence: _Evidence, budget: _Budget
) -> bool:
    """A difference, product, quotient or percentage of two figures of the answer.

    The figures are the question's and the ``_PAIRED_NEAREST`` the answer says nearest
    the claim.
    """
    pool = [k for k in known if k.start < 0] + _nearest(
        claim, [k for k in known if k.start >= 0], _PAIRED_NEAREST
    )
    if not budget.spend(len(pool) * len(pool)):
        return False
    for a, b in itertools.permutations(pool, 2):
        x, y = abs(a.value), abs(b.value)
        if kind == a.kind == b.kind and _close(claim, x - y):
            return True
        if kind == "money" and {a.kind, b.kind} == {"money", "quantity"} and _close(claim, x * y):
            return True
        if kind == "money" and (a.kind, b.kind) == ("money", "quantity") and y and _close(
            claim, x / y
        ):  # fmt: skip
            return True
        if kind == "percent" and a.kind == b.kind != "percent" and y and _close(
            claim, x / y * 100
        ) and _base(claim, x, y, known):  # fmt: skip
            return True
    whole = max((f.value for f in evidence.facts
                 if f.total and not f.subjects and f.kind == "money" and not f.excluding),
                default=0.0)  # fmt: skip
    if kind == "percent" and whole and _OF_WHOLE.search(claim.sentence):
        return any(_close(claim, abs(k.value) / whole * 100) for k in pool if k.kind == "money")
    return False


def _base(claim: _Claim, change: float, base: float, known: list[Known]) -> bool:
    """Whether ``base`` may be what a change of ``change`` is a percentage of.

    A gain is a percentage of where it started, not of where it ended: with a cost
    of $3,650.00, a value of $5,058.30 and a gain of $1,408.30 all stated, the gain's
    percentage is of the cost (38.6 %), not of the value (27.8 %). So for a gain the
    base may not be an end whose start (base − change) the answer also states, and
    for a loss not one whose start (base + change) it states.
    """
    loss = claim.sign < 0 or bool(_LOSS.search(claim.sentence))
    start = base + change if loss else base - change
    return not any(abs(abs(k.value) - start) <= 0.011 for k in known)
