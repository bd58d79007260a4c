"""Answers written by a real model (Gemma 3 270M), and how the validator judges them.

The corpus (``data/model_answers.jsonl``) is written by ``benchmarks/model_answers.py
write``; ``judged_figures`` labels each figure of each answer against the router's own
bound answer to the same question (right when that answer states the same value, at the
figure's written precision, of the same kind), and says whether the validator flagged
it (each figure judged as a statement about the data; whether the answer answers its
question is another check). ``data/model_answers_hand.tsv`` holds the labels of the first
100 figures by hand.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, NamedTuple

from portfolio import user_portfolio, user_settings
from tooldeck.agent.calls import RunTools
from tooldeck.agent.grounding import check_grounding, find_citations
from tooldeck.agent.router_agent import RouterAgent
from tooldeck.packs.brokerage import BrokerageAnswers, BrokerageDataSource
from tooldeck.runtime import build_runtime

CORPUS = Path(__file__).parent / "data" / "model_answers.jsonl"
IN_DOMAIN = Path(__file__).parent / "data" / "model_answers_in_domain.jsonl"
"""The same questions, the model shown worked examples on this data (more right answers)."""
HAND = Path(__file__).parent / "data" / "model_answers_hand.tsv"
SPAN = re.compile(r"\s*(?:days?|weeks?|months?|years?)\b", re.IGNORECASE)
FIGURE = re.compile(r"(?<![\w.])[-+]?\$?\d[\d,]*(?:\.\d+)?%?(?![\w])")


class Judged(NamedTuple):
    question: str
    answer: str
    figure: str
    right: bool
    """What the router's bound answer to the question says of it (its value only)."""
    shown: bool
    """The validator passed the answer it is in: the user would see it."""
    rejected: bool
    """The validator rejected this figure itself (its own finding), or the answer is
    ``miscited``: what counts against a right figure."""
    miscited: bool
    """The answer cites nothing, or a source no result of its run has."""


async def reference(runtime: Any, pack: BrokerageAnswers, question: str) -> tuple[Any, Any]:
    """The router's bound answer to ``question`` and the tool results of its plan."""

    async def emit(type: str, data: dict[str, Any]) -> None:
        return None

    tools = RunTools(runtime.view(), runtime.context(), emit)
    draft = await RouterAgent(pack).answer(question, {}, tools)
    return draft, tools


def _value(text: str) -> tuple[float, float, str]:
    body = text.replace("$", "").replace(",", "").replace("%", "").lstrip("+")
    decimals = len(body.split(".")[1]) if "." in body else 0
    kind = "money" if "$" in text else "percent" if text.endswith("%") else "plain"
    return abs(float(body)), 0.5 * 10.0**-decimals + 1e-9, kind


async def judged_figures(corpus: Path = CORPUS) -> list[Judged]:
    """Every figure of ``corpus``, labelled by the reference and judged by the validator."""
    rows = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines()]
    runtime = build_runtime(user_settings())
    pack = BrokerageAnswers(BrokerageDataSource(user_portfolio()))
    schemas = {d.name: d.output_schema for d in await runtime.view().definitions()}
    subjects = pack.subjects()
    out = []
    try:
        for row in rows:
            draft, tools = await reference(runtime, pack, row["question"])
            answer = row["answer"]
            stated = [draft.markdown[slice(*c.span)] for c in draft.claims]
            truth = [_value(s) for s in stated if FIGURE.fullmatch(s.strip())]
            report = check_grounding(
                answer, find_citations(answer), tools.results, pack.figures(tools.results),
                schemas=schemas, subjects=subjects,
            )  # fmt: skip  # figures, not relevance: whether each is true of the data
            flagged = {f.text for f in report.findings}
            plain = re.sub(r"\d{4}-\d{2}-\d{2}\S*|\[[^\]]*\]", " ", answer)
            plain = re.sub(r"(?m)^\s*\d+[.)]\s", " ", plain)  # list markers state nothing
            for m in FIGURE.finditer(plain):
                value, tolerance, kind = _value(m.group())
                right = any(
                    abs(value - v) <= max(tolerance, t) and (k == kind or "plain" in (k, kind))
                    for v, t, k in truth
                ) or bool(m.group().isdigit() and SPAN.match(plain, m.end()))  # "the last 30
                # days" names a period, as the check reads it: no statement about the data
                said = m.group().strip().lstrip("+")
                miscited = not find_citations(answer) or any(
                    f.kind == "unknown_citation" for f in report.findings
                )
                rejected = miscited or any(f.strip().lstrip("+") == said for f in flagged)
                out.append(
                    Judged(row["question"], answer, m.group(), right, report.ok, rejected, miscited)
                )
    finally:
        await runtime.aclose()
    return out


def hand_labels(corpus: Path = CORPUS) -> list[tuple[int, bool]]:
    """(1-based index into ``judged_figures(corpus)``, right) of the figures labelled by hand.

    A figure is right when its sentence says something true of the run's data (copied
    from the worked examples, or true of data the run did not fetch, is wrong).
    """
    hand = HAND if corpus == CORPUS else corpus.with_name(f"{corpus.stem}_hand.tsv")
    rows = [line.split("\t") for line in hand.read_text(encoding="utf-8").splitlines()
            if line and not line.startswith("#")]  # fmt: skip
    return [(int(row[0]), row[2] == "right") for row in rows]  # index, figure, label, note
