"""The grounding validator on real tool results of the brokerage pack."""

from __future__ import annotations

import pytest

from portfolio import user_portfolio
from tooldeck.agent.grounding import check_grounding, find_citations
from tooldeck.core.intents import Figure
from tooldeck.core.result import ToolResult
from tooldeck.packs.brokerage import BrokerageDataSource, brokerage_tools
from tooldeck.providers import ToolRegistry

pytestmark = pytest.mark.anyio


@pytest.fixture
async def results() -> list[ToolResult]:
    registry = ToolRegistry(brokerage_tools(BrokerageDataSource(user_portfolio())))
    return [
        await registry.execute("get_positions", {"symbol": "AAPL", "account": "individual"}),
        await registry.execute("get_quotes", {"symbol": "AAPL"}),
        await registry.execute("get_performance", {"timeframe": "YTD"}),
    ]


def kinds(report: object) -> list[tuple[str, str]]:
    return [(f.kind, f.text) for f in report.findings]  # type: ignore[attr-defined]


async def test_figures_from_the_cited_data_pass_in_any_usual_format(
    results: list[ToolResult],
) -> None:
    answer = (
        "AAPL is at $228.42 (+1.11%, +$2.51), previous close $225.91. You hold 42 shares "
        "bought at $150.25. [tool:positions:v1] [tool:quotes:v1] Data as of 2026-11-20."
    )
    schemas = {
        t.name: t.definition.output_schema
        for t in brokerage_tools(BrokerageDataSource(user_portfolio()))
    }
    report = check_grounding(answer, find_citations(answer), results, schemas=schemas)
    assert report.ok, report.findings
    assert (report.numbers_checked, report.citations_checked) == (7, 2)
    # without the schemas, kinds come from the field names: "change" names none (money? a
    # percentage?), so a figure only it holds is unverifiable, never grounded (issue 29)
    report = check_grounding(answer, find_citations(answer), results)
    assert kinds(report) == [("unverifiable_number", "+$2.51")]


async def test_rounding_to_the_stated_precision_is_tolerated_and_no_more(
    results: list[ToolResult],
) -> None:
    cited = ["tool:quotes:v1"]
    assert check_grounding("AAPL: $228.4, $228, 1.1%", cited, results).ok
    assert kinds(check_grounding("AAPL: $228.52", cited, results)) == [
        ("untraced_number", "$228.52")
    ]
    assert kinds(check_grounding("AAPL: $230", cited, results)) == [("untraced_number", "$230")]


async def test_a_citation_of_a_source_the_run_never_called_is_caught(
    results: list[ToolResult],
) -> None:
    report = check_grounding("AAPL is at $228.42", ["tool:quotes:v1", "tool:news:v1"], results)
    assert kinds(report) == [("unknown_citation", "tool:news:v1")]
    assert "tool:positions:v1" in report.findings[0].message  # lists the real sources


async def test_a_number_must_be_in_a_cited_result_not_just_any_result(
    results: list[ToolResult],
) -> None:
    # 228.42 is a quote, but only positions is cited
    report = check_grounding("AAPL is at $228.42", ["tool:positions:v1"], results)
    assert kinds(report) == [("untraced_number", "$228.42")]
    assert "tool:positions:v1" in report.findings[0].message


async def test_a_failed_result_is_no_source(results: list[ToolResult]) -> None:
    failed = await ToolRegistry(brokerage_tools(BrokerageDataSource(user_portfolio()))).execute(
        "get_quotes", {"symbol": "NOPE"}
    )
    report = check_grounding("No quote.", ["tool:quotes:v1"], [failed])
    assert kinds(report) == [("unknown_citation", "tool:quotes:v1")]


async def test_identifiers_citations_and_list_markers_are_not_numbers(
    results: list[ToolResult],
) -> None:
    answer = (
        "1. Your 1Y and 3M returns [tool:performance:v1] are in the table; see tool:quotes:v1.\n"
        "2. A 401k is not covered."
    )
    report = check_grounding(answer, ["tool:performance:v1"], results)
    assert report.ok and report.numbers_checked == 0


async def test_dates_must_be_in_the_cited_results(results: list[ToolResult]) -> None:
    cited = ["tool:quotes:v1"]
    assert check_grounding("Prices as of 2026-11-20T21:00:00Z.", cited, results).ok
    assert kinds(check_grounding("Prices as of 2026-11-19.", cited, results)) == [
        ("untraced_date", "2026-11-19")
    ]


async def test_counts_of_listed_items_and_scaled_amounts(results: list[ToolResult]) -> None:
    cited = ["tool:performance:v1"]
    rows = results[2].data["performance"]  # type: ignore[index]
    total = rows[0]["end_value"]
    assert check_grounding(f"{len(rows)} accounts", cited, results).ok
    assert check_grounding(f"${total / 1000:.1f}k", cited, results).ok
    assert not check_grounding(f"{len(rows) + 4} accounts", cited, results).ok


async def test_derived_figures_count_only_when_their_sources_are_cited(
    results: list[ToolResult],
) -> None:
    worth = Figure(
        9593.64, "AAPL market value", ("tool:positions:v1", "tool:quotes:v1"), kind="money"
    )
    both = ["tool:positions:v1", "tool:quotes:v1"]
    assert check_grounding("worth $9,593.64", both, results, [worth]).ok
    assert not check_grounding("worth $9,593.64", ["tool:positions:v1"], results, [worth]).ok


def test_citations_are_read_from_square_brackets_in_order() -> None:
    text = "A [tool:quotes:v1], b [tool:positions:v1] and again [tool:quotes:v1]; [not one]"
    assert find_citations(text) == ["tool:quotes:v1", "tool:positions:v1"]


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("AAPL is at [$228.42](claim:tool:quotes:v1#/quotes/0/price) [tool:quotes:v1].", ""),
        ("AAPL closed yesterday at [$225.91](claim:tool:quotes:v1#/quotes/0/previous_close) "
         "[tool:quotes:v1].", ""),
        # the right value at the right pointer, but the words say another field
        ("AAPL's previous close was [$228.42](claim:tool:quotes:v1#/quotes/0/price) "
         "[tool:quotes:v1].", "the words around it name previous close"),
        # ... another subject (MSFT's price is not in the results: AAPL's is)
        ("MSFT is at [$228.42](claim:tool:quotes:v1#/quotes/0/price) [tool:quotes:v1].",
         "the sentence states it for MSFT"),
        # ... another kind: a share count stated as money
        ("You hold [$42](claim:tool:positions:v1#/positions/0/quantity) of AAPL "
         "[tool:positions:v1].", "it is stated as money"),
        # ... a direction: "down" for a positive change
        ("AAPL is down [$2.51](claim:tool:quotes:v1#/quotes/0/change) today [tool:quotes:v1].",
         "stated as a change down"),
        # the wrong value at its pointer
        ("AAPL is at [$225.91](claim:tool:quotes:v1#/quotes/0/price) [tool:quotes:v1].",
         "says 225.91; tool:quotes:v1/quotes/0/price is 228.42"),
    ],
)  # fmt: skip
async def test_a_models_bound_figure_is_held_to_the_words_of_its_sentence(
    results: list[ToolResult], answer: str, why: str
) -> None:
    """Issue 29: a figure a model binds to a field must be that field's value, and its
    sentence must say that field: its kind, field words, subject and direction."""
    from tooldeck.core.claims import read_marked

    schemas = {
        t.name: t.definition.output_schema
        for t in brokerage_tools(BrokerageDataSource(user_portfolio()))
    }
    subjects = {"Apple Inc.": ("symbol", "AAPL"), "Microsoft Corp.": ("symbol", "MSFT")}
    markdown, claims = read_marked(answer)
    report = check_grounding(
        markdown, find_citations(markdown), results, schemas=schemas, subjects=subjects,
        claims=claims,
    )  # fmt: skip
    if not why:
        assert report.ok, report.findings
    else:
        assert [f.kind for f in report.findings] == ["claim_mismatch"], report.findings
        assert why in report.findings[0].message, report.findings[0].message


@pytest.mark.parametrize(
    ("sentence", "holds"),
    [
        ("You have $22,910.85 in cash, about a sixth of your portfolio.", True),  # no such word
        ("You have $22,910.85 in cash, about a third of your portfolio.", False),  # 17.8 %
        ("Your Roth IRA is just under a quarter of your money: 23.6%.", True),
        ("Your Roth IRA is about half of your accounts: 23.6%.", False),
        ("Individual Brokerage's $64,926.05 is about twice the Roth IRA's $30,458.45.", True),
        ("Individual Brokerage's $64,926.05 is three times the Roth IRA's $30,458.45.", False),
        ("Individual Brokerage's $64,926.05 is more than twice the Roth IRA's $30,458.45.", True),
    ],
)
async def test_a_ratio_in_words_must_be_the_figures_ratio(sentence: str, holds: bool) -> None:
    """Issue 54: "three times your Roth IRA", "half of your total" passed every check."""
    tools = brokerage_tools(BrokerageDataSource(user_portfolio()))
    summary = await ToolRegistry(tools).execute("get_account_summary", {})
    schemas = {t.name: t.definition.output_schema for t in tools}
    report = check_grounding(sentence, ["tool:account_summary:v1"], [summary], schemas=schemas)
    ratio = [f for f in report.findings if "is a ratio of" in f.message]
    assert (not ratio) is holds, report.findings
