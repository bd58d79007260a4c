from __future__ import annotations

import json
import os
import runpy
import shutil
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest

from tooldeck.core import IntentRouter
from tooldeck.exceptions import DataPackError
from tooldeck.packs.brokerage import (
    DEFAULT_DATA_PATH,
    BrokerageDataSource,
    brokerage_intents,
    brokerage_tools,
    rank_positions,
    unrealized_pl,
)
from tooldeck.providers import ToolRegistry

pytestmark = pytest.mark.anyio


def registry(source: BrokerageDataSource | None = None) -> ToolRegistry:
    return ToolRegistry(brokerage_tools(source))


def test_shipped_data_is_rich_and_self_consistent() -> None:
    data = BrokerageDataSource().load()
    assert len(data.accounts) >= 3
    assert len(data.symbols()) >= 12
    assert {p.asset_class for p in data.positions.positions} == {"stocks", "etf", "bonds", "cash"}
    prices = {q.symbol: q.price for q in data.quotes.quotes}
    for summary in data.account_summary.accounts:
        held = [p for p in data.positions.positions if p.account == summary.account]
        market = round(sum(p.quantity * prices[p.symbol] for p in held), 2)
        assert summary.market_value == market
        assert summary.total_value == round(market + summary.total_cash, 2)
        points = {
            p.timeframe: p for p in data.performance.performance if p.account == summary.account
        }
        assert set(points) == {"1D", "1W", "1M", "3M", "YTD", "1Y", "ALL"}
        for p in points.values():
            assert p.end_value == summary.total_value
            assert p.return_amount == pytest.approx(p.start_value * p.return_pct / 100, abs=0.05)
    for quote in data.quotes.quotes:
        assert quote.change == pytest.approx(quote.price - quote.previous_close, abs=0.006)
    for fact in data.facts.facts:
        assert (DEFAULT_DATA_PATH.parent / fact.file).is_file()


def test_net_contributions_are_the_completed_transfers_of_each_window(tmp_path: Path) -> None:
    """The performance record and the transfers tell the same story (and the generator
    writes exactly the shipped file)."""
    data = BrokerageDataSource().load()
    as_of = date.fromisoformat(data.as_of)
    first = {  # the first day of each window (calendar months)
        "1D": as_of - timedelta(days=1),
        "1W": as_of - timedelta(days=7),
        "1M": as_of.replace(month=as_of.month - 1),
        "3M": as_of.replace(month=as_of.month - 3),
        "YTD": date(as_of.year, 1, 1),
        "1Y": as_of.replace(year=as_of.year - 1),
    }
    for p in data.performance.performance:
        since = first.get(p.timeframe, date.min)
        net = sum(
            t.amount if t.type == "deposit" else -t.amount
            for t in data.transfers.transfers
            if t.account == p.account
            and t.status == "completed"
            and since <= date.fromisoformat(t.timestamp[:10]) <= as_of
        )
        assert p.net_contributions == pytest.approx(net), (p.account, p.timeframe)
    generator = runpy.run_path(str(Path(__file__).parents[2] / "scripts/make_brokerage_data.py"))
    generator["main"](tmp_path / "out.json")
    assert json.loads((tmp_path / "out.json").read_text()) == json.loads(
        DEFAULT_DATA_PATH.read_text()
    )


async def test_every_tool_answers_with_its_source_id_and_as_of() -> None:
    calls = {
        "get_positions": {"symbol": "AAPL"},
        "get_positions_list": {},
        "get_quotes": {"symbol": "AAPL"},
        "get_activity": {},
        "get_transfers": {},
        "get_performance": {"timeframe": "YTD"},
        "get_account_summary": {},
        "get_facts": {"topic": "Roth IRA"},
    }
    reg = registry()
    for name, args in calls.items():
        result = await reg.execute(name, args)
        assert result.success, result.error
        assert result.source_id == f"tool:{name.removeprefix('get_')}:v1"
        assert result.as_of and result.as_of.startswith("2026-11-20")


async def test_symbol_and_account_filter() -> None:
    reg = registry()
    aapl = (await reg.execute("get_positions", {"symbol": "aapl"})).data
    assert {(p["account"], p["quantity"]) for p in aapl["positions"]} == {
        ("individual", 42),
        ("joint", 18),
    }
    joint = (
        await reg.execute("get_positions", {"symbol": "AAPL", "account": "Joint Brokerage"})
    ).data
    assert joint["account"] == "joint" and [p["quantity"] for p in joint["positions"]] == [18]
    roth = (
        await reg.execute("get_positions_list", {"account": "ROTH_IRA", "asset_class": "etf"})
    ).data
    assert sorted(p["symbol"] for p in roth["positions"]) == ["QQQ", "VTI", "VXUS"]
    quotes = (await reg.execute("get_quotes", {"symbols": ["voo", "AAPL"]})).data
    assert [q["symbol"] for q in quotes["quotes"]] == ["VOO", "AAPL"]
    not_held = (await reg.execute("get_positions", {"symbol": "AMZN", "account": "joint"})).data
    assert not_held["held"] is False and not_held["positions"] == []


@pytest.mark.parametrize(
    ("name", "args", "fragment"),
    [
        (
            "get_positions",
            {"symbol": "APPL"},
            "Unknown symbol 'APPL' (did you mean 'AAPL'?). Symbols: AAPL,",
        ),
        ("get_quotes", {"symbols": ["VOO", "XYZ"]}, "Unknown symbol 'XYZ'"),
        (
            "get_transfers",
            {"account": "savings"},
            "Unknown account 'savings'. Accounts: individual (Individual Brokerage)",
        ),
        (
            "get_performance",
            {"timeframe": "5Y"},
            "timeframe: Input should be '1D', '1W', '1M', '3M', 'YTD', '1Y' or 'ALL'",
        ),
        (
            "get_positions_list",
            {"asset_class": "crypto"},
            "asset_class: Input should be 'stocks', 'etf', 'bonds' or 'cash'",
        ),
        (
            "get_facts",
            {"topic": "quantum chromodynamics"},
            "No fact matches topic 'quantum chromodynamics'. Topics: Roth IRA",
        ),
        ("get_positions", {}, "symbol: Field required"),
    ],
)
async def test_bad_arguments_list_what_exists(
    name: str, args: dict[str, Any], fragment: str
) -> None:
    result = await registry().execute(name, args)
    assert result.error is not None and result.error.type == "validation"
    assert fragment in result.error.message


@pytest.mark.parametrize(
    ("topic", "fact_id"),
    [
        ("how do ETFs work", "etf_basics"),
        ("roth", "roth_ira"),
        ("what are expense ratios", "expense_ratios"),
        ("dividned yield", "dividends"),
        ("when does my cash settle", "settlement"),
        ("traditional ira rmd", "traditional_ira"),
    ],
)
async def test_facts_match_beyond_three_keywords(topic: str, fact_id: str) -> None:
    result = await registry().execute("get_facts", {"topic": topic})
    assert result.data["fact_id"] == fact_id
    assert result.data["snippet"] and not result.data["snippet"].startswith("#")


async def test_edits_hot_reload_and_malformed_files_name_section_and_field(tmp_path: Path) -> None:
    path = tmp_path / "brokerage.json"
    shutil.copy(DEFAULT_DATA_PATH, path)
    shutil.copytree(DEFAULT_DATA_PATH.parent / "facts", tmp_path / "facts")
    source = BrokerageDataSource(path)
    reg = registry(source)
    assert (await reg.execute("get_quotes", {"symbol": "AAPL"})).data["quotes"][0][
        "price"
    ] == 228.42

    raw = json.loads(path.read_text())
    raw["quotes"]["quotes"][0]["price"] = 300.0
    path.write_text(json.dumps(raw))
    os.utime(path, ns=(1, 1))  # a different mtime even on coarse clocks
    assert (await reg.execute("get_quotes", {"symbol": "AAPL"})).data["quotes"][0]["price"] == 300.0

    raw["positions"]["positions"][2]["quantity"] = "lots"
    path.write_text(json.dumps(raw))
    os.utime(path, ns=(2, 2))
    with pytest.raises(DataPackError, match=r"section 'positions', field 'positions\.2\.quantity'"):
        source.load()
    failed = await reg.execute("get_quotes", {"symbol": "AAPL"})
    assert failed.error is not None and failed.error.type == "execution"
    assert "malformed" in failed.error.message and str(path) in failed.error.message

    path.write_text("{not json")
    with pytest.raises(DataPackError, match="is not valid JSON"):
        source.load()
    path.unlink()
    with pytest.raises(DataPackError, match="cannot be read"):
        source.load()


async def test_context_builder_pl_and_ranking() -> None:
    reg = registry()
    positions = (await reg.execute("get_positions_list", {"account": "individual"})).data[
        "positions"
    ]
    quotes = (await reg.execute("get_quotes", {})).data["quotes"]
    rows = unrealized_pl(positions, quotes)
    aapl = next(r for r in rows if r.symbol == "AAPL")
    assert aapl.unrealized_pl == round(42 * (228.42 - 150.25), 2)
    assert aapl.market_value == round(42 * 228.42, 2)
    assert aapl.unrealized_pl_pct == round((228.42 - 150.25) / 150.25 * 100, 2)
    best = rank_positions(rows, "best", "unrealized_pl", top=1)[0]
    worst = rank_positions(rows, "worst", "unrealized_pl_pct", top=1)[0]
    assert best.unrealized_pl == max(r.unrealized_pl for r in rows)
    assert worst.symbol == "TSLA" and worst.unrealized_pl < 0


async def test_intents_single_and_composite() -> None:
    router = IntentRouter(registry(), brokerage_intents())
    symbol = await router.dispatch("symbol_performance", {"symbol": "AAPL", "account": None})
    assert symbol.success and symbol.source_ids == ["tool:positions:v1", "tool:quotes:v1"]
    ranking = await router.dispatch("portfolio_ranking", {"account": "roth_ira"})
    assert [q["symbol"] for q in ranking.results[1].data["quotes"]] == [
        "AMZN",
        "QQQ",
        "VTI",
        "VXUS",
    ]
    perf = await router.dispatch("performance", {"timeframe": "1Y", "account": "joint"})
    assert perf.source_ids == ["tool:performance:v1", "tool:transfers:v1"]
    cash = await router.dispatch("cash_balance", {})
    assert cash.results[0].source_id == "tool:account_summary:v1"

    missing = await router.dispatch("positions", {})
    assert missing.results[0].error.message == "Intent 'positions' needs symbol."  # type: ignore[union-attr]
    unknown = await router.dispatch("postions", {})
    assert "Did you mean 'positions'?" in unknown.results[0].error.message  # type: ignore[union-attr]
    failed = await router.dispatch("symbol_performance", {"symbol": "ZZZ"})
    assert not failed.success and len(failed.results) == 1


async def test_activity_and_transfers_filter_by_dates_type_method_status_and_limit() -> None:
    r = registry()
    last_ach = await r.execute("get_transfers", {"type": "deposit", "method": "ach", "limit": 1})
    assert [(t["timestamp"][:10], t["amount"]) for t in last_ach.data["transfers"]] == [
        ("2026-11-12", 1500.0)
    ]
    november = await r.execute("get_transfers", {"since": "2026-11-01", "until": "2026-11-30"})
    rows = november.data["transfers"]
    assert [t["status"] for t in rows] == ["pending", "completed"]  # newest first
    assert november.data["total_deposits"] == 1500.0  # the completed ones listed
    pending = await r.execute("get_transfers", {"status": "Pending"})
    assert [t["method"] for t in pending.data["transfers"]] == ["Wire"]
    buys = await r.execute("get_activity", {"since": "2026-11-13", "side": "buy"})
    assert [t["symbol"] for t in buys.data["trades"]] == ["GOOGL", "AAPL", "VXUS"]
    for tool, args, says in [
        ("get_transfers", {"since": "2026-11-10", "until": "2026-11-01"}, "is after until"),
        ("get_transfers", {"method": "paypal"}, "Methods: ACH, Wire"),
        ("get_transfers", {"since": "yesterday"}, "expected a day as YYYY-MM-DD"),
        ("get_activity", {"until": 0}, "expected a day as YYYY-MM-DD"),
        ("get_activity", {"side": "hold"}, "side: Input should be 'BUY' or 'SELL'"),
    ]:
        bad = await r.execute(tool, args)
        assert bad.error is not None and bad.error.type == "validation", args
        assert says in bad.error.message, bad.error.message
