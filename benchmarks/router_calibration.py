"""How often the brokerage router is right, at each confidence it states (issue 29).

    .venv/bin/python benchmarks/router_calibration.py [--minilm]

Sets (``tests/packs``): the labelled questions the router's examples come from
(``QUESTIONS``: each routed by a router whose second reading leaves that question out),
``HOLDOUT`` (114 written before the router changed) and ``FRESH`` (40 written after).
For each: the share routed right (intent and parameters; a clarification right when the
label asks for one) and a reliability table: of the answers given at each confidence,
how many are right. ``--minilm`` also compares the second reading's classifier alone
(TF-IDF nearest examples) with the same k-nearest vote over the knowledge pack's
MiniLM embeddings, and times one classification of each.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "packs"))

from router_holdout import FRESH, HOLDOUT
from router_questions import QUESTIONS, examples

from tooldeck.packs.brokerage import BrokerageDataSource, QuestionRouter

Labelled = Sequence[tuple[str, str, Any]]
BANDS = ((0.9, "≥ 0.9"), (0.7, "0.7–0.9"), (0.01, "< 0.7"), (0.0, "asks back"))


def outcome(router: QuestionRouter, question: str) -> tuple[str, Any, float]:
    route = router.route(question)
    if route.intent is None:
        assert route.clarification is not None
        return f"clarify:{route.clarification.parameter}", {}, 0.0
    if route.also:
        parts = [route, *route.also]
        params = [dict(r.params) for r in parts]
        return "+".join(str(r.intent) for r in parts), params, route.confidence
    return route.intent, dict(route.params), route.confidence


def table(name: str, items: Labelled, router_for: Callable[[str], QuestionRouter]) -> None:
    counts = {label: [0, 0] for _, label in BANDS}
    right = 0
    for question, intent, params in items:
        got, got_params, confidence = outcome(router_for(question), question)
        ok = got == intent and (intent.startswith("clarify:") or got_params == params)
        right += ok
        band = next(label for floor, label in BANDS if confidence >= floor)
        if got.startswith("clarify:"):
            band = "asks back"
        counts[band][0] += 1
        counts[band][1] += ok
    print(f"\n{name}: {right}/{len(items)} right ({right / len(items):.1%})")
    print(f"  {'confidence':<11} {'answers':>8} {'right':>6} {'share right':>12}")
    for _, label in BANDS:
        n, ok = counts[label]
        share = f"{ok / n:.1%}" if n else "—"
        print(f"  {label:<11} {n:>8} {ok:>6} {share:>12}")


def compare_minilm(data: Any) -> None:
    import numpy as np

    from tooldeck.core.nearest_examples import NearestExamples
    from tooldeck.packs.knowledge.embed import local_embedder

    embedder = local_embedder()
    if embedder is None:
        print("\n--minilm: the knowledge pack's embedder is not installed")
        return
    train = examples()
    router = QuestionRouter(data)
    lexical = NearestExamples(train, mask=router.nearest.mask)
    vectors = embedder.embed([q for q, _ in train])

    def minilm(question: str) -> str:
        scores = vectors @ embedder.embed([question])[0]
        votes: dict[str, float] = {}
        for i in np.argsort(-scores)[:7]:
            votes[train[i][1]] = votes.get(train[i][1], 0.0) + float(scores[i]) ** 2
        return max(votes, key=votes.__getitem__)

    held = [(q, i) for q, i, _ in HOLDOUT + FRESH if i in {x for _, x in train}]
    print(f"\nthe second reading alone, intent only, {len(held)} held-out questions:")
    for name, classify in (
        ("TF-IDF nearest examples", lambda q: lexical.classify(q).intent),
        ("MiniLM int8 nearest examples", minilm),
    ):
        right = sum(classify(q) == i for q, i in held)
        times = []
        for q, _ in held:
            start = time.perf_counter()
            classify(q)
            times.append((time.perf_counter() - start) * 1e6)
        print(
            f"  {name:<30} {right}/{len(held)} right  "
            f"p50 {statistics.median(times):8.1f} µs  p95 {sorted(times)[int(len(times) * 0.95)]:8.1f} µs"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minilm", action="store_true", help="compare with MiniLM embeddings")
    args = parser.parse_args()
    data = BrokerageDataSource().load()
    shipped = QuestionRouter(data)
    all_examples = examples()
    left_out: dict[str, QuestionRouter] = {}

    def without(question: str) -> QuestionRouter:  # the labelled set, each question left out
        if question not in left_out:
            rest = [(q, i) for q, i in all_examples if q != question]
            left_out[question] = QuestionRouter(data, examples=rest)
        return left_out[question]

    table("labelled (each left out of the examples)", QUESTIONS, without)
    table("HOLDOUT (written before the router changed)", HOLDOUT, lambda _: shipped)
    table("FRESH (written after it changed)", FRESH, lambda _: shipped)
    if args.minilm:
        compare_minilm(data)


if __name__ == "__main__":
    main()
