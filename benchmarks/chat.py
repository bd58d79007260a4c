"""Cost of the chat pipeline without a model: routing, grounding, a whole run.

    .venv/bin/python benchmarks/chat.py [--quick]

Over the labelled questions of ``tests/packs/router_questions.py``:
(a) routing one question (``BrokerageAnswers.route``), µs;
(b) the grounding check of one composed answer, µs;
(c) checking 56-80 KB answers a model could be led to write (``HOSTILE``), s;
(d) one whole run through ``RunManager`` (route, tool plan through the provider
    stack, compose, validate, events), audit off and on (SQLite: the run, its events
    and its tool calls stored), ms. Medians of repeated passes.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "packs"))

from router_questions import QUESTIONS

from tooldeck.agent.contracts import ChatRequest
from tooldeck.agent.grounding import check_grounding
from tooldeck.config import load_settings
from tooldeck.core.intents import IntentRouter
from tooldeck.packs.brokerage import BrokerageAnswers, BrokerageDataSource
from tooldeck.runtime import build_runtime


def per_question_us(fn: object, repeats: int) -> float:
    best = []
    for _ in range(repeats):
        start = time.perf_counter()
        for question, _, _ in QUESTIONS:
            fn(question)  # type: ignore[operator]
        best.append((time.perf_counter() - start) / len(QUESTIONS) * 1e6)
    return statistics.median(best)


async def runs_ms(audit: bool, repeats: int, data_dir: str) -> float:
    runtime = build_runtime(
        load_settings(data_dir=data_dir, builtin={"enabled": False}, audit={"enabled": audit})
    )
    questions = [q for q, intent, _ in QUESTIONS if not intent.startswith("clarify:")]
    times = []
    try:
        for _ in range(repeats):
            start = time.perf_counter()
            for question in questions:
                run = await runtime.runs.start(ChatRequest(question=question))
                run = await runtime.runs.wait(run.run_id)
                if run.answer is None or run.answer.grounding.verdict != "grounded":
                    raise SystemExit(f"not grounded: {question!r}")
            times.append((time.perf_counter() - start) / len(questions) * 1e3)
    finally:
        await runtime.aclose()
    return statistics.median(times)


async def grounding_us(repeats: int) -> tuple[float, float, float]:
    """(median µs of one check over all answers, ranking route + check p50, p95 µs).

    Each answer is checked as a run checks it: its bound claims at their pointers,
    every other number against the data (``check_grounding(..., claims=, bound=)``).
    """
    runtime = build_runtime(load_settings(builtin={"enabled": False}, audit={"enabled": False}))
    pack = BrokerageAnswers(BrokerageDataSource())
    router = IntentRouter(runtime.provider, pack.intents)
    composed = []
    for question, _, _ in QUESTIONS:
        route = pack.route(question)
        if route.intent is None:
            continue
        outcome = await router.dispatch(route.intent, route.params)
        composed.append((question, pack.compose(route, outcome), outcome.results))
    schemas = {d.name: d.output_schema for d in await runtime.provider.definitions()}
    subjects = pack.subjects()
    await runtime.aclose()

    def check(question: str, answer: Any, results: Any) -> None:
        report = check_grounding(
            answer.markdown,
            answer.citations,
            results,
            answer.figures,
            schemas=schemas,
            subjects=subjects,
            question=question,
            claims=answer.claims,
            bound=answer.bound,
        )
        if not report.ok:
            raise SystemExit(f"not grounded: {question!r}: {report.findings}")

    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for question, answer, results in composed:
            check(question, answer, results)
        times.append((time.perf_counter() - start) / len(composed) * 1e6)
    ranking = "What are my top performers?"  # a five-row table: about 45 claims
    _, answer, results = next(c for c in composed if c[0] == ranking)
    each = []
    for _ in range(repeats * 100):
        start = time.perf_counter()
        pack.route(ranking)
        check(ranking, answer, results)
        each.append((time.perf_counter() - start) * 1e6)
    each.sort()
    return statistics.median(times), each[len(each) // 2], each[int(len(each) * 0.95)]


HOSTILE = {
    "rank words": "biggest $1.00 " * 4000,
    "ratio words": "twice $1 and $2, half of your portfolio " * 2000,
    "dates and ranks": "on Nov 19 the biggest $5 " * 3000,
    "untraced figures": " and ".join(f"${1000 + i * 7.31:,.2f}" for i in range(2000)),
}
"""Long answers a model could be led to write: one sentence of thousands of numbers.
"untraced figures" (42 KB): 2,000 amounts no field holds, each tried as a sum or a pair
of the others (``grounding/arithmetic.py``)."""


async def hostile_s() -> dict[str, float]:
    """Seconds to check each ``HOSTILE`` answer (56-80 KB) against three results."""
    runtime = build_runtime(load_settings(builtin={"enabled": False}, audit={"enabled": False}))
    view = runtime.view()
    results = [await view.execute(name, {}) for name in
               ("get_account_summary", "get_positions_list", "get_quotes")]  # fmt: skip
    schemas = {d.name: d.output_schema for d in await view.definitions()}
    await runtime.aclose()
    took = {}
    for name, text in HOSTILE.items():
        start = time.perf_counter()
        check_grounding(text, ["tool:account_summary:v1"], results, schemas=schemas,
                        question="which is biggest?")  # fmt: skip
        took[name] = time.perf_counter() - start
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    repeats = 3 if parser.parse_args().quick else 10
    pack = BrokerageAnswers(BrokerageDataSource())
    print(f"{len(QUESTIONS)} labelled questions, median of {repeats} passes")
    print(f"route one question:            {per_question_us(pack.route, repeats):8.1f} µs")
    check, ranking_p50, ranking_p95 = asyncio.run(grounding_us(repeats))
    print(f"grounding check of one answer: {check:8.1f} µs")
    print(
        f"route + check, a ranking answer: p50 {ranking_p50:8.1f} µs, p95 {ranking_p95:8.1f} µs"
        " (issue 29: p50 ≤ 1,000, p95 ≤ 5,000)"
    )
    for name, seconds in asyncio.run(hostile_s()).items():
        print(f"check of a {len(HOSTILE[name]) // 1000} KB answer of {name}: {seconds:6.2f} s "
              "(8175054: 6-12 s, quadratic)")  # fmt: skip
    with tempfile.TemporaryDirectory() as data_dir:
        off = asyncio.run(runs_ms(False, repeats, data_dir))
        on = asyncio.run(runs_ms(True, repeats, data_dir))
    print(f"one whole run, audit off:      {off:8.2f} ms")
    print(f"one whole run, audit on:       {on:8.2f} ms  (run, events, calls in SQLite)")


if __name__ == "__main__":
    main()
