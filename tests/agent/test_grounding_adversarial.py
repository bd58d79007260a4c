"""Wrong answers the grounding validator must refuse, for every intent of the router.

For each intent, the router's own answer to a question is grounded; then each number
of it is made wrong in the ways a model gets numbers wrong (a neighbour field, another
subject's value, the sign, the rounding, the scale, the kind, an injected figure, a
total that is one account's), and every such answer must be judged ungrounded, with a
finding that names the number. The hand-written cases are the ones measured on a
scripted model (issue "Grounding that a wrong number cannot pass").
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from portfolio import user_portfolio, user_settings
from tooldeck.agent.base import Draft
from tooldeck.agent.calls import RunTools
from tooldeck.agent.grounding import check_grounding, find_citations
from tooldeck.agent.router_agent import RouterAgent
from tooldeck.packs.brokerage.answers import BrokerageAnswers
from tooldeck.packs.brokerage.data import BrokerageDataSource
from tooldeck.runtime import Runtime, build_runtime

pytestmark = pytest.mark.anyio

QUESTIONS = {
    "symbol_performance": "How much is my AAPL position worth and how is it doing?",
    "positions": "How many shares of AAPL do I have?",
    "quotes": "What is AAPL trading at?",
    "positions_list": "List my holdings in the joint account",
    "portfolio_ranking": "What is my best performing position?",
    "performance": "How did my accounts do YTD?",
    "transfers": "Show my deposits and withdrawals",
    "activity": "What trades did I make recently?",
    "account_value": "What is my total account value?",
    "cash_balance": "How much cash do I have?",
    "facts": "What is an expense ratio?",
}

_NUMBER = re.compile(r"(?<![\w.,$-])[+-]?\$?\d[\d,]*(?:\.\d+)?%?(?![\w%])")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def runtime() -> Any:
    settings = user_settings()
    rt = build_runtime(settings, load_entry_points=False)
    yield rt
    await rt.aclose()


class Answer:
    """A router answer with what the validator needs to judge variants of it."""

    def __init__(self, draft: Draft, tools: RunTools, schemas: dict[str, Any]) -> None:
        self.draft, self.tools, self.schemas = draft, tools, schemas
        self.subjects = BrokerageAnswers(BrokerageDataSource(user_portfolio())).subjects()

    def check(self, markdown: str, *, bound: bool = False) -> Any:
        """The verdict on ``markdown``: with the router's claims (``bound``, as a run checks
        its own answer), or with none (a variant: every number matched against the data)."""
        citations = self.draft.citations or find_citations(markdown)
        return check_grounding(
            markdown,
            citations,
            self.tools.results,
            self.draft.figures,
            schemas=self.schemas,
            subjects=self.subjects,
            claims=self.draft.claims if bound else (),
            bound=bound and self.draft.bound,
        )


async def answer(runtime: Runtime, question: str) -> Answer:
    async def emit(type: str, data: dict[str, Any]) -> None:
        return None

    view = runtime.view()
    tools = RunTools(view, runtime.context(), emit)
    agent = RouterAgent(BrokerageAnswers(BrokerageDataSource(user_portfolio())))
    draft = await agent.answer(question, {}, tools)
    schemas = {d.name: d.output_schema for d in await view.definitions()}
    return Answer(draft, tools, schemas)


def _value(text: str) -> float:
    return float(text.strip("+-$%").replace(",", ""))


def _money(value: float, template: str) -> str:
    sign = template[0] if template[0] in "+-" else ""
    body = f"{abs(value):,.2f}" if "." in template else f"{abs(value):,.0f}"
    return f"{sign}{'$' if '$' in template else ''}{body}{'%' if template.endswith('%') else ''}"


def _shape(text: str) -> tuple[bool, bool, str]:
    """Money or not, percent or not, and the sign written: numbers in the same role."""
    return "$" in text, text.endswith("%"), text[0] if text[0] in "+-" else ""


def variants(markdown: str) -> Iterator[tuple[str, str]]:
    """(what was done, the wrong answer) for each number of ``markdown``.

    Each number is nudged past its precision, rounded wrong, stated as the other kind
    (money as a percentage), scaled (``k``), its sign flipped; and replaced by the
    number in the same place of another line (another account's or symbol's).
    """
    lines = markdown.split("\n")
    found = [[m for m in _NUMBER.finditer(line) if not _DATE.search(m.group())] for line in lines]
    for i, line in enumerate(lines):
        for k, m in enumerate(found[i]):
            text = m.group()
            value = _value(text)
            if value == 0 or _DATE.search(line[max(0, m.start() - 5) : m.end() + 6]):
                continue

            def put(new: str, i: int = i, m: Any = m, line: str = line) -> str:
                return "\n".join(
                    [*lines[:i], line[: m.start()] + new + line[m.end() :], *lines[i + 1 :]]
                )

            yield f"nudged {text}", put(_money(value * 1.013 + 1, text))
            if "." in text:
                yield f"rounded {text} wrong", put(_money(round(value) + 1, text))
            if "$" in text:
                yield f"{text} as a percentage", put(text.replace("$", "") + "%")
                yield f"{text} scaled", put(text + "k")
            if text[0] in "+-":
                yield f"sign of {text} flipped", put(("-" if text[0] == "+" else "+") + text[1:])
            for j, other_line in enumerate(found):
                if j == i or len(other_line) <= k:
                    continue
                other = other_line[k].group()
                if _shape(other) == _shape(text) and _value(other) != value:
                    yield f"{text} replaced by {other} of line {j + 1}", put(other)
                    break


@pytest.mark.parametrize("intent", sorted(QUESTIONS))
async def test_every_wrong_variant_of_a_router_answer_is_ungrounded(
    runtime: Runtime, intent: str
) -> None:
    a = await answer(runtime, QUESTIONS[intent])
    assert a.draft.intent == intent
    original = a.check(a.draft.markdown, bound=True)
    assert original.ok, original.findings
    wrong = list(variants(a.draft.markdown))
    wrong += [
        (f"injected: {extra}", a.draft.markdown + "\n\n" + extra)
        for extra in (
            "AAPL will reach $312.40 next week.",
            "Updated 2026-11-21.",
            "You hold 23 positions.",
            "Your total value is $64,926.05.",
            "Fees were 0.85% this year.",
            "AAPL trades at $231.00.",
            "Your cash is $5,000.00 in all accounts.",
        )
    ]
    passed = []
    for what, text in wrong:
        assert text != a.draft.markdown, what
        report = a.check(text)
        if report.ok:
            passed.append(what)
        else:
            assert all(f.message for f in report.findings)
    assert len(wrong) >= 10, f"{intent}: only {len(wrong)} wrong variants"
    assert passed == [], f"{intent}: judged grounded: {passed}"


async def test_the_wrong_answers_measured_on_a_scripted_model(runtime: Runtime) -> None:
    a = await answer(runtime, "How much is my AAPL position worth and how is it doing?")
    summary = await answer(runtime, "What is my total account value?")
    for text, why in [
        ("AAPL is $1 [tool:quotes:v1]", "stated as money"),
        ("AAPL is at $2.51 [tool:quotes:v1]", "name price, but it is change"),
        ("AAPL is at $225.91 [tool:quotes:v1]", "name price, but it is previous_close"),
        ("AAPL is down 1.11% today [tool:quotes:v1]", "stated as a change down"),
        ("AAPL is up $228.42 today [tool:quotes:v1]", "stated as a change up"),
        ("Your 42 AAPL shares in Joint Brokerage are worth $9,593.64.", "states it for"),
        ("In total you hold 42 shares of AAPL.", "calls it a total"),
    ]:
        report = a.check(text)
        assert not report.ok, text
        assert why in report.findings[0].message, (text, report.findings[0].message)
    total = summary.check("The total value of your accounts is $64,926.05.")
    assert not total.ok and "is not a total" in total.findings[0].message
    assert summary.check("Individual Brokerage: total value $64,926.05.").ok


async def test_an_answer_of_another_kind_than_the_question_asks_is_off_question(
    runtime: Runtime,
) -> None:
    cash = await answer(runtime, "Which account has the most cash?")
    ranked = await answer(runtime, "top 3 positions")

    def findings(a: Answer, question: str, text: str) -> list[str]:
        report = check_grounding(
            text,
            a.draft.citations,
            a.tools.results,
            a.draft.figures,
            schemas=a.schemas,
            subjects=a.subjects,
            question=question,
        )
        return [f.message for f in report.findings if f.kind == "off_question"]

    listed = "Cash per account:\n\n- Individual Brokerage: $12,340.10\n- Joint Brokerage: $8,420.00"
    assert findings(cash, "Which account has the most cash?", listed) == [
        "The question asks which one; name the winner in the first sentence (an account or "
        "a symbol of the data)."
    ]
    assert findings(cash, "Which account has the most cash?", cash.draft.markdown) == []
    five = ranked.draft.markdown + "\n| QQQ | Roth IRA | $5,058.30 | +$1,408.30 | +38.58% |"
    assert findings(ranked, "top 3 positions", five) == [
        "The question asks for 3; the answer lists 4."
    ]
    assert findings(ranked, "top 3 positions", ranked.draft.markdown) == []
    vague = "You have cash in each of your accounts."
    assert findings(cash, "How much cash do I have?", vague) == [
        "The question asks how much; the answer states no figure."
    ]


async def test_an_answer_holds_to_the_share_the_comparison_and_the_period_asked(
    runtime: Runtime,
) -> None:
    """Issue 29's wrong-with-confidence kinds, for any answer (a model's): a share count for
    "what share of my portfolio", one account for "is A worth more than B", the all-time
    gain for "this year"."""
    values = await answer(runtime, "Give me my account balances")
    ytd = await answer(runtime, "What's my YTD return?")

    def findings(a: Answer, question: str, text: str) -> list[str]:
        report = check_grounding(
            text, find_citations(text), a.tools.results, a.draft.figures, schemas=a.schemas,
            subjects=a.subjects, question=question,
        )  # fmt: skip
        return [f.message for f in report.findings if f.kind == "off_question"]

    s = "[tool:account_summary:v1]"
    share = "What share of my money is in the Roth IRA?"
    assert findings(values, share, f"Your Roth IRA holds $30,458.45 {s}.") == [
        "The question asks what share of the whole it is; the answer states no percentage."
    ]
    compare = "Is my Roth worth more than my joint account?"
    assert findings(values, compare, f"Your Roth IRA is worth $30,458.45 {s}.") == [
        "The question compares 2 of them; the answer does not name joint."
    ]
    both = f"Joint Brokerage ($33,578.70) is worth more than the Roth IRA ($30,458.45) {s}."
    assert findings(values, compare, both) == []
    f = "[tool:performance:v1]"
    year = "How much did the individual account make this year?"
    assert findings(ytd, year, f"Individual Brokerage returned 14.60% over the past year {f}.")
    assert findings(ytd, year, f"Individual Brokerage returned 14.60% year to date {f}.") == []


async def test_a_comparison_must_name_the_larger_one_as_larger(runtime: Runtime) -> None:
    """Every figure right, the conclusion wrong: Joint ($33,578.70) is worth more than the
    Roth IRA ($30,458.45), so an answer saying the Roth is worth more is off the question."""
    values = await answer(runtime, "Give me my account balances")
    s = "[tool:account_summary:v1]"
    question = "Is my Roth worth more than my joint account?"

    def findings(text: str) -> list[str]:
        report = check_grounding(
            text, find_citations(text), values.tools.results, values.draft.figures,
            schemas=values.schemas, subjects=values.subjects, question=question,
        )  # fmt: skip
        return [f.message for f in report.findings]

    wrong = f"Yes: your Roth IRA ($30,458.45) is worth more than Joint Brokerage ($33,578.70) {s}."
    assert findings(wrong) == [
        "The answer says roth_ira is more than joint, but its total_value is 30458.5 against "
        "33578.7."
    ]
    right = f"No: Joint Brokerage ($33,578.70) is worth more than your Roth IRA ($30,458.45) {s}."
    assert findings(right) == []


async def test_the_cost_of_n_shares_must_be_n_times_the_price(runtime: Runtime) -> None:
    """ "What would 25 shares of MSFT cost" answered with MSFT's price alone states a true
    figure that is not what was asked (issue 29, relevance): the answer must give 25 × the
    price, to its written precision or the rounding "about" allows."""
    question = "What would 25 shares of MSFT cost me?"
    quote = await answer(runtime, question)
    price = quote.tools.results[0].data["quotes"][0]["price"]
    s = f"[{quote.tools.results[0].source_id}]"

    def findings(text: str) -> list[str]:
        report = check_grounding(
            text, find_citations(text), quote.tools.results, quote.draft.figures,
            schemas=quote.schemas, subjects=quote.subjects, question=question,
        )  # fmt: skip
        return [f.message for f in report.findings if f.kind == "off_question"]

    cost = 25 * price
    assert findings(f"MSFT trades at ${price:,.2f} {s}.") == [
        f"The question asks the cost of 25 shares of MSFT; the answer states no figure equal "
        f"to 25 × its price ${price:,.2f} = ${cost:,.2f}."
    ]
    assert findings(f"25 shares of MSFT at ${price:,.2f} cost ${cost:,.2f} {s}.") == []
    assert findings(f"That comes to about ${round(cost, -2):,.0f} {s}.") == []
    assert findings(f"That comes to about ${round(cost, -2) + 300:,.0f} {s}.")
    own = check_grounding(
        quote.draft.markdown, quote.draft.citations, quote.tools.results, quote.draft.figures,
        schemas=quote.schemas, subjects=quote.subjects, question=question,
        claims=quote.draft.claims, bound=quote.draft.bound,
    )  # fmt: skip
    assert own.ok, own.findings  # the router's own answer: 25 × the price, bound


async def test_a_figure_two_records_back_must_say_which(runtime: Runtime) -> None:
    """Issue 29, 1b: a number accepted only when one reading is consistent with its sentence.
    VOO (individual) and JPM (joint) are 25 shares each: "25 shares" naming neither is
    ambiguous and the finding names both; naming the symbol or the account settles it."""
    holdings = await answer(runtime, "List all my holdings")
    s = f"[{holdings.tools.results[0].source_id}]"

    def findings(text: str) -> list[tuple[str, str]]:
        report = check_grounding(
            text, find_citations(text), holdings.tools.results, holdings.draft.figures,
            schemas=holdings.schemas, subjects=holdings.subjects,
        )  # fmt: skip
        return [(f.kind, f.message) for f in report.findings]

    [(kind, message)] = findings(f"You hold 25 shares {s}.")
    assert kind == "ambiguous_figure"
    assert "VOO" in message and "JPM" in message and message.endswith("name which in its sentence.")
    assert findings(f"You hold 25 shares of VOO {s}.") == []
    assert findings(f"Your joint account holds 25 shares {s}.") == []
    assert findings(f"You hold 42 shares {s}.") == []  # one record has 42: one reading
