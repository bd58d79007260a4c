"""The question's frame and the answer's own arithmetic (issue 54, items 2 and 3).

Every answer is checked against one call of each brokerage tool over the user's
portfolio (what a model that fetched everything would cite). A right answer that states
what it worked out from its own checked figures holds; one that answers a neighbouring
question is ``off_question``, naming what it missed.
"""

from __future__ import annotations

from typing import Any

import pytest

from portfolio import user_portfolio, user_settings
from tooldeck.agent.calls import RunTools
from tooldeck.agent.grounding import GroundingReport, check_grounding
from tooldeck.packs.brokerage.answers import BrokerageAnswers
from tooldeck.packs.brokerage.data import BrokerageDataSource
from tooldeck.runtime import build_runtime

pytestmark = pytest.mark.anyio

CALLS = (
    ("get_account_summary", {}), ("get_positions_list", {}), ("get_quotes", {}),
    ("get_activity", {}), ("get_transfers", {}), ("get_performance", {"timeframe": "1D"}),
    ("get_performance", {"timeframe": "1M"}),
)  # fmt: skip


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def judge() -> Any:
    runtime = build_runtime(user_settings(), load_entry_points=False)

    async def emit(type: str, data: dict[str, Any]) -> None:
        return None

    tools = RunTools(runtime.view(), runtime.context(), emit)
    for name, arguments in CALLS:
        assert (await tools.execute(name, arguments)).success
    schemas = {d.name: d.output_schema for d in await runtime.view().definitions()}
    pack = BrokerageAnswers(BrokerageDataSource(user_portfolio()))
    results = list(tools.results)
    sources = list(dict.fromkeys(r.source_id for r in results if r.source_id))

    def check(question: str, answer: str) -> GroundingReport:
        return check_grounding(
            answer, sources, results, pack.figures(results), schemas=schemas,
            subjects=pack.subjects(), question=question,
        )  # fmt: skip

    yield check
    await runtime.aclose()


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("how many appl shares do i have total and what are they worth",
         "You have 60 AAPL shares in total: 42 in Individual Brokerage and 18 in Joint "
         "Brokerage. At $228.42 they're worth $13,705.20."),
        ("what's my average cost on aapl",
         "Your AAPL average cost is about $159.90 a share: 42 shares in Individual "
         "Brokerage at $150.25 and 18 shares in Joint Brokerage at $182.40; $9,593.70 in "
         "total for 60 shares."),
        ("how is my sgov doing since i bought it",
         "You bought 50 SGOV in Individual Brokerage at $100.10 ($5,005.00). SGOV is now "
         "$100.52, so your SGOV in Individual Brokerage is up $21.00 (+0.42%)."),
        ("how much unsettled cash do i have",
         "$1,550.00 is unsettled in total: $350.00 in Individual Brokerage and $1,200.00 in "
         "Joint Brokerage. The Roth IRA has none."),
        ("what's my qqq worth and what did i pay",
         "Your 10 QQQ shares in the Roth IRA are worth $5,058.30 against a $3,650.00 cost: "
         "a gain of $1,408.30, or about 38.6%."),
    ],
)  # fmt: skip
async def test_figures_worked_out_from_the_answers_own_figures_hold(
    judge: Any, question: str, answer: str
) -> None:
    """Before, each was rejected: no field holds $13,705.20, $159.90, $21.00 or $1,550.00."""
    report = judge(question, answer)
    assert report.ok, report.findings


@pytest.mark.parametrize(
    ("question", "answer", "wrong"),
    [
        ("how many appl shares do i have total and what are they worth",
         "You have 60 AAPL shares: 42 in Individual Brokerage and 18 in Joint Brokerage. "
         "At $228.42 they're worth $13,750.20.", "$13,750.20"),
        # a sum over two of the three accounts, called the total
        ("how much cash do i have in total",
         "Your total cash is $20,760.10: $12,340.10 in Individual Brokerage and $8,420.00 in "
         "Joint Brokerage.", "$20,760.10"),
        # a gain as a percentage of where it ended, not of its cost
        ("what's my qqq worth and what did i pay",
         "Your 10 QQQ shares in the Roth IRA are worth $5,058.30 against a $3,650.00 cost: "
         "a gain of $1,408.30, or about 27.8%.", "27.8%"),
        # JPM is held in Joint: 25 × $243.66 is true, of another account
        ("jpm", "JPM is $243.66; your 25 shares in Individual Brokerage are worth $6,091.50.",
         "$6,091.50"),
    ],
)  # fmt: skip
async def test_arithmetic_does_not_excuse_a_wrong_figure(
    judge: Any, question: str, answer: str, wrong: str
) -> None:
    report = judge(question, answer)
    assert not report.ok
    assert wrong in {f.text for f in report.findings}, report.findings


@pytest.mark.parametrize(
    ("question", "answer", "says"),
    [
        ("which account did best this month?",
         "Individual Brokerage has the most value: $64,926.05.", "over 1M"),
        ("how much unsettled cash do i have in total",
         "Cash: $22,910.85 in all accounts; Individual Brokerage $12,340.10, of which "
         "$11,990.10 is settled.", "what is unsettled"),
        ("is NVDA up today?", "AAPL is up $2.51 (+1.11%) today at $228.42.",
         "asks about NVDA; the answer is about AAPL"),
        ("how much did my whole portfolio make today",
         "Today: Individual Brokerage +$528.06, Roth IRA +$142.49, Joint Brokerage +$70.37.",
         "over all accounts"),
        ("whats my gain on msft since i bought it", "No MSFT buys in all accounts.",
         "a gain or loss"),
        ("give me my allocation stocks vs etfs vs bonds", "Cash: $22,910.85 in all accounts.",
         "asset classes"),
    ],
)  # fmt: skip
async def test_an_answer_to_a_neighbouring_question_is_off_question(
    judge: Any, question: str, answer: str, says: str
) -> None:
    """Each figure is true; none answers what was asked (issue 54: each was grounded)."""
    report = judge(question, answer)
    off = [f.message for f in report.findings if f.kind == "off_question"]
    assert any(says in message for message in off), report.findings


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("which account did best this month?",
         "Individual Brokerage did best over the past month: +3.40% (+$2,085.58)."),
        ("how much did my whole portfolio make today",
         "Across all accounts you made $740.92 today: Individual Brokerage +$528.06, Roth "
         "IRA +$142.49, Joint Brokerage +$70.37."),
        ("did i sell anything last week", "On Nov 12 you sold 5 TSLA at $318.20."),
        ("how much did i withdraw last year", "No withdrawals from 2025-01-01 to 2025-12-31."),
    ],
)  # fmt: skip
async def test_the_answer_to_the_question_asked_is_not_off_question(
    judge: Any, question: str, answer: str
) -> None:
    report = judge(question, answer)
    assert [f for f in report.findings if f.kind == "off_question"] == [], report.findings
