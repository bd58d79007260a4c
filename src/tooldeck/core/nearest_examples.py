"""Classify a question by the labelled questions nearest to it (issue 29's semantic route).

A second reading beside a router's cue words: each labelled example is a sparse
TF-IDF vector of its words, word pairs and in-word character 4-grams (so "withdraw"
and "withdrawal", "afford" and "affordable" meet); a question's nearest examples by
cosine vote for their intents, weighted by similarity. Nothing is downloaded and no
model runs: a question is classified in about 0.1 ms over a few hundred examples (see
``benchmarks/chat.py``), fast enough to run beside every route.

Example::

    nearest = NearestExamples([("what is AAPL at", "quotes"), ("my cash", "cash_balance")])
    nearest.classify("where is MSFT trading")
    # Reading(intent="quotes", similarity=0.31, share=1.0, runner_up=None)
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["NearestExamples", "Reading"]

_WORD = re.compile(r"[a-z0-9$%/+]+")


@dataclass(frozen=True, slots=True)
class Reading:
    """What the nearest examples say a question asks."""

    intent: str | None
    """The intent with the most similarity-weighted votes; None when no example shares a
    feature with the question."""
    similarity: float
    """Cosine similarity (0–1) of the nearest example of that intent: how close the
    question is to anything the examples cover."""
    share: float
    """That intent's share (0–1) of the votes of the ``k`` nearest examples."""
    runner_up: str | None
    """The intent with the next most votes, None when the neighbours agree."""


def _features(text: str, mask: Iterable[str] = ()) -> Counter[str]:
    words = _WORD.findall(text.lower())
    masked = set(mask)
    words = ["<x>" if w in masked else w for w in words]
    out: Counter[str] = Counter(words)
    out.update(f"{a} {b}" for a, b in itertools.pairwise(words))
    for w in words:
        if len(w) > 4:
            out.update(f"#{w[i : i + 4]}" for i in range(len(w) - 3))
    return out


class NearestExamples:
    """A k-nearest-neighbour classifier over labelled questions (TF-IDF, cosine).

    Args:
        examples: ``(question, intent)`` pairs; an intent may appear any number of times.
        k: How many nearest examples vote.
        mask: Words replaced by one placeholder before anything is counted (the data's
            symbols, account names): "what is AAPL at" and "what is MSFT at" are then
            the same question.
        same: A question this similar (cosine) to one example is that example's intent
            alone; below it, the ``k`` nearest vote, each by its similarity squared.

    Raises:
        ValueError: ``examples`` is empty.
    """

    def __init__(
        self,
        examples: Sequence[tuple[str, str]],
        k: int = 7,
        mask: Iterable[str] = (),
        same: float = 0.85,
    ) -> None:
        if not examples:
            raise ValueError("NearestExamples needs at least one labelled example")
        self.k, self.same = k, same
        self.mask = frozenset(m.lower() for m in mask)
        self.intents = [intent for _, intent in examples]
        counted = [_features(q, self.mask) for q, _ in examples]
        documents = Counter(f for c in counted for f in c)
        total = len(examples)
        self._idf = {f: math.log((1 + total) / (1 + n)) + 1.0 for f, n in documents.items()}
        self._postings: dict[str, list[tuple[int, float]]] = defaultdict(list)
        for i, c in enumerate(counted):
            vector = self._weigh(c)
            for f, w in vector.items():
                self._postings[f].append((i, w))

    def _weigh(self, counted: Counter[str]) -> dict[str, float]:
        """Sublinear TF × IDF, L2-normalised; features no example has are dropped."""
        raw = {f: (1.0 + math.log(n)) * self._idf[f] for f, n in counted.items() if f in self._idf}
        norm = math.sqrt(sum(w * w for w in raw.values())) or 1.0
        return {f: w / norm for f, w in raw.items()}

    def classify(self, question: str) -> Reading:
        """The intent the nearest examples vote for (see ``Reading``). Never raises."""
        scores: dict[int, float] = defaultdict(float)
        for f, w in self._weigh(_features(question, self.mask)).items():
            for i, weight in self._postings[f]:
                scores[i] += w * weight
        if not scores:
            return Reading(None, 0.0, 0.0, None)
        nearest = sorted(scores.items(), key=lambda kv: kv[1], reverse=True)[: self.k]
        if nearest[0][1] >= self.same:  # the question is (nearly) a labelled one
            nearest = nearest[:1]
        votes: dict[str, float] = defaultdict(float)
        best: dict[str, float] = {}
        for i, score in nearest:
            intent = self.intents[i]
            votes[intent] += score * score  # the nearest count most
            best[intent] = max(best.get(intent, 0.0), score)
        ranked = sorted(votes.items(), key=lambda kv: kv[1], reverse=True)
        total = sum(votes.values()) or 1.0
        winner = ranked[0][0]
        runner_up = ranked[1][0] if len(ranked) > 1 else None
        return Reading(winner, round(best[winner], 4), round(ranked[0][1] / total, 4), runner_up)
