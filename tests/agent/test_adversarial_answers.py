"""The grounding validator on answers phrased the way a model writes them (issue 29).

Every case of ``adversarial_answers.CASES`` is judged against the tool results its
question's plan fetches; the measured rates (wrong judged grounded, right judged
ungrounded) are held, per class, to the figures reached so far.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest
from adversarial_answers import CASES

from portfolio import user_portfolio, user_settings
from tooldeck.agent.calls import RunTools
from tooldeck.agent.grounding import check_grounding, find_citations
from tooldeck.agent.router_agent import RouterAgent
from tooldeck.packs.brokerage import BrokerageAnswers, BrokerageDataSource
from tooldeck.runtime import build_runtime

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


async def judged() -> dict[str, list[tuple[str, bool, bool, list[str]]]]:
    """Per class: (answer, right, judged grounded, findings)."""
    runtime = build_runtime(
        user_settings(),
        load_entry_points=False,
    )
    pack = BrokerageAnswers(BrokerageDataSource(user_portfolio()))
    subjects = pack.subjects()
    out: dict[str, list[tuple[str, bool, bool, list[str]]]] = defaultdict(list)
    fetched: dict[str, Any] = {}
    try:
        view = runtime.view()
        schemas = {d.name: d.output_schema for d in await view.definitions()}
        for cls, question, answer, right in CASES:
            if question not in fetched:

                async def emit(type: str, data: dict[str, Any]) -> None:
                    return None

                tools = RunTools(view, runtime.context(), emit)
                await RouterAgent(pack).answer(question, {}, tools)
                fetched[question] = tools.results
            results = fetched[question]
            report = check_grounding(
                answer, find_citations(answer), results, pack.figures(results),
                schemas=schemas, subjects=subjects, question=question,
            )  # fmt: skip
            out[cls].append((answer, right, report.ok, [f.message for f in report.findings]))
    finally:
        await runtime.aclose()
    return out


def rates(cases: list[tuple[str, bool, bool, list[str]]]) -> tuple[int, int, int, int]:
    """(wrong judged grounded, wrong, right judged ungrounded, right)."""
    wrong = [c for c in cases if not c[1]]
    right = [c for c in cases if c[1]]
    return sum(c[2] for c in wrong), len(wrong), sum(not c[2] for c in right), len(right)


async def test_each_class_has_ten_cases_and_no_answer_is_misjudged() -> None:
    """Issue 29's targets: wrong judged grounded ≤ 1%, right judged ungrounded ≤ 3%.

    Measured before the validator learned these classes: 53 of 89 wrong answers judged
    grounded, 11 of 36 right ones ungrounded (with the pack's derived figures, as a run
    checks a model's answer)."""
    results = await judged()
    report = []
    for cls, cases in sorted(results.items()):
        assert len(cases) >= 10, f"{cls}: {len(cases)} cases"
        passed, wrong, rejected, right = rates(cases)
        report.append(f"{cls}: {passed}/{wrong} wrong judged grounded, "
                      f"{rejected}/{right} right judged ungrounded")  # fmt: skip
    print("\n".join(report))
    total = rates([c for cases in results.values() for c in cases])
    print(f"all: {total[0]}/{total[1]} wrong judged grounded, {total[2]}/{total[3]} right "
          "judged ungrounded")  # fmt: skip
    misjudged = [
        f"[{cls}] {'right' if right else 'WRONG'} judged {'grounded' if ok else 'ungrounded'}: "
        f"{answer!r} {findings[:1]}"
        for cls, cases in sorted(results.items())
        for answer, right, ok, findings in cases
        if ok != right
    ]
    assert total[0] <= 0.01 * total[1] and total[2] <= 0.03 * total[3], "\n".join(misjudged)


async def test_answers_written_by_a_real_model_are_judged_as_by_hand() -> None:
    """Issue 29: the corpus Gemma 3 270M wrote (benchmarks/model_answers.py write). No wrong
    figure of the 100 labelled by hand passes (the last one to: TLT's price in "You changed
    your $88.64 to $88.65"), and none the reference labels wrong."""
    from model_corpus import hand_labels, judged_figures

    listing = await judged_figures()
    assert len(listing) >= 300
    sample = [(right, listing[i - 1]) for i, right in hand_labels()]
    wrong_passed = [item.figure for right, item in sample if not right and item.shown]
    assert wrong_passed == []
    assert [i.figure for i in listing if not i.right and i.shown] == []


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Is my GOOGL investment in the green?",
         "Googl's stock is a yellow green company, so you can buy shares for $176.90 "
         "[tool:quotes:v1]."),
        ("How much is NVDA trading at?", "$146.75 [tool:quotes:v1]"),
        ("$SGOV price", "This stock is priced at $100.52 [tool:quotes:v1]."),
        ("What's my cost basis for NVDA?", "You have 60 shares of NVDA [tool:positions:v1]."),
        ("my AAPL shares",
         "You paid $182.40 for your AAPL shares in Joint Brokerage [tool:positions:v1]."),
        ("Show my fixed income positions", "You hold 80 shares of BND [tool:positions_list:v1]."),
    ],
)  # fmt: skip
async def test_the_right_figures_the_model_wrote_pass_once_cited_honestly(
    question: str, answer: str
) -> None:
    """The 6 figures of the hand sample that are right were each rejected for citing no
    source, or the worked examples' made-up ``tool:holdings:v1``; in a sentence that cites
    the real source and says only what is true, each passes (issue 54: "You have 60
    shares" still does not answer "what's my cost basis", and is said so)."""
    from model_corpus import reference

    runtime = build_runtime(
        user_settings(),
        load_entry_points=False,
    )
    pack = BrokerageAnswers(BrokerageDataSource(user_portfolio()))
    try:
        schemas = {d.name: d.output_schema for d in await runtime.view().definitions()}
        _, tools = await reference(runtime, pack, question)
        report = check_grounding(
            answer, find_citations(answer), tools.results, pack.figures(tools.results),
            schemas=schemas, subjects=pack.subjects(), question=question,
        )  # fmt: skip
        if question == "What's my cost basis for NVDA?":  # true, but not the cost asked
            assert [f.kind for f in report.findings] == ["off_question"], report.findings
        else:
            assert report.ok, report.findings
    finally:
        await runtime.aclose()


async def test_answers_the_model_wrote_after_examples_on_this_data_are_judged_as_by_hand() -> None:
    """The second corpus: worked examples on this data make the model write right answers
    too (19 of the 100 figures labelled by hand). No wrong one is shown; the right ones
    rejected are each in an answer that cites nothing, or a source the run never called."""
    from model_corpus import IN_DOMAIN, hand_labels, judged_figures

    listing = await judged_figures(IN_DOMAIN)
    sample = [(right, listing[i - 1]) for i, right in hand_labels(IN_DOMAIN)]
    assert sum(right for right, _ in sample) == 19
    assert [item.figure for right, item in sample if not right and item.shown] == []
    rejected = [item for right, item in sample if right and item.rejected]
    assert len(rejected) == 7 and all(item.miscited for item in rejected), rejected
