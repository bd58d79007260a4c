"""OFX/QFX statements written by banks, brokers and other tools, read whole (issue 30).

The 32 files come from two pinned sdists (``tests/data/real_files.py``): the test
data of beancount-reds-importers (Ally, Capital One, E*TRADE and Vanguard exports)
and csv2ofx's converted statements. ofxtools, which the pack used before, read 4 of
them: the rest have no header or csv2ofx's short one, a bank id past 9 characters,
a server time of ``20230310048208``, no ``TRNUID``, or elements out of order.
"""

from __future__ import annotations

import re
import sys
import warnings
from pathlib import Path

import pytest

from tooldeck.packs.context.finance import OfxAdapter
from tooldeck.packs.context.ofx import read_statements
from tooldeck.packs.context.statements import parse_statements

sys.path.insert(0, str(Path(__file__).parents[1] / "data"))
from real_files import real_files

pytestmark = pytest.mark.anyio

INVESTMENT_TAGS = (
    "BUYDEBT|BUYMF|BUYOPT|BUYOTHER|BUYSTOCK|SELLDEBT|SELLMF|SELLOPT|SELLOTHER|SELLSTOCK|"
    "REINVEST|INCOME|TRANSFER|SPLIT|RETOFCAP|MARGININTEREST|INVEXPENSE|JRNLFUND|JRNLSEC|"
    "CLOSUREOPT"
)


def _opened(text: str, tags: str) -> int:
    """How many elements named by the ``tags`` alternation the text opens (an oracle
    independent of the reader: a count of opening tags)."""
    return len(re.findall(rf"<(?:{tags})>", text, flags=re.IGNORECASE))


def _float(aggregate: object, name: str) -> float | None:
    value = getattr(aggregate, name, None)  # a TRANSFER has no total
    return None if value is None else float(value)


@pytest.fixture(scope="module")
def files() -> list[Path]:
    found = real_files("ofx")
    assert len(found) == 32
    return found


def test_every_real_statement_is_read_whole(files: list[Path]) -> None:
    totals = {"transactions": 0, "investments": 0, "positions": 0}
    for path in files:
        text = path.read_text(errors="replace")
        read = read_statements(path.read_bytes(), path.name)
        assert len(read.transactions) == _opened(text, "STMTTRN|INTRARS|INTERRS"), path.name
        assert len(read.investments) == _opened(text, INVESTMENT_TAGS), path.name
        assert len(read.positions) == _opened(text, "POSSTOCK|POSMF|POSDEBT|POSOPT|POSOTHER")
        assert read.skipped == [] and read.accounts, path.name
        for tx in read.transactions:
            assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", tx["date"]) and tx["payee"], tx
        for key in totals:
            totals[key] += len(getattr(read, key))
    assert totals == {"transactions": 103, "investments": 11, "positions": 4}


def test_what_ofxtools_reads_is_read_the_same(files: list[Path]) -> None:
    """The files ofxtools accepts: the same ids, days, amounts, units and totals."""
    from ofxtools.Parser import OFXTree

    compared = 0
    for path in files:
        tree = OFXTree()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # its warnings on private INTU.* tags
                tree.parse(str(path))
                ofx = tree.convert()
        except Exception:
            continue  # a file it refuses (28 of 32)
        compared += 1
        ours = read_statements(path.read_bytes(), path.name)
        bank = [
            (str(tx.fitid), tx.dtposted.date().isoformat(), float(tx.trnamt))
            for s in ofx.statements
            if type(s).__name__ != "INVSTMTRS"
            for tx in s.transactions
        ]
        assert [(t["id"], t["date"], t["amount"]) for t in ours.transactions] == bank
        trades = [
            (str(tx.invtran.fitid), tx.invtran.dttrade.date().isoformat(), _float(tx, "total"))
            for s in ofx.statements
            if type(s).__name__ == "INVSTMTRS"
            for tx in s.transactions
        ]
        assert [(t["id"], t["date"], t["total"]) for t in ours.investments] == trades
        units = [
            float(p.units)
            for s in ofx.statements
            if type(s).__name__ == "INVSTMTRS" and s.invposlist
            for p in s.invposlist
        ]
        assert [p["units"] for p in ours.positions] == units
    assert compared == 4


def test_an_etrade_statement_names_its_trades() -> None:
    path = next(p for p in real_files("ofx") if p.name == "etrade_09092023.QFX")
    [read] = parse_statements([path])
    assert isinstance(read, dict)
    buy = read["investments"][0]
    assert buy == {
        "id": "230714_B_0", "date": "2023-07-14", "account": "555555555", "action": "buy",
        "type": "BUYSTOCK", "security": "TAIWAN SEMICONDUCTOR MFG LTD SPONSORED ADS",
        "ticker": "TSM", "units": 0.76817, "unit_price": 107.1895, "total": -82.34,
        "fees": 0, "income_type": None, "currency": "USD",
        "memo": "TAIWAN SEMICONDUCTOR MFG COLTD-SPONSORED ADR REPSTG 5 COM",
    }  # fmt: skip
    assert {(p["ticker"], p["units"], p["market_value"]) for p in read["positions"]} == {
        ("TSM", 55.55, 4979.5),
        ("V", 500.0, 13736.96),
    }


async def test_one_unreadable_file_does_not_hide_the_others(tmp_path: Path) -> None:
    broken = tmp_path / "broken.qfx"
    broken.write_text("this is a PDF saved as .qfx")
    paths = [*real_files("ofx"), broken, tmp_path / "gone.ofx"]
    got = await OfxAdapter(paths, {"amazon": "shopping"}, timeout_s=30).fetch()
    assert got.success and got.transformed_count == 103 + 11  # bank and investment
    assert got.metadata["skipped"][:2] == [
        "broken.qfx is not a readable OFX statement: no <OFX> element: "
        "this is not an OFX statement",
        f"statement not found: {tmp_path / 'gone.ofx'}",
    ]
    assert sum(r["kind"] == "investment" for r in got.data) == 11
    assert len(got.metadata["positions"]) == 4
    assert {"USD", "EUR", "CAD"} <= {r["currency"] for r in got.data}
    alone = await OfxAdapter([broken], {}, timeout_s=30).fetch()
    assert not alone.success and alone.error is not None and "broken.qfx" in alone.error


async def test_totals_across_currencies_are_given_per_currency() -> None:
    """USD, EUR and CAD statements: no sum of them, each currency's own (query and chat)."""
    from tooldeck.agent.contracts import ChatRequest
    from tooldeck.config import load_settings
    from tooldeck.runtime import build_runtime

    files = [str(p) for p in real_files("ofx")]
    table = {"finance": {"ofx": files}, "owners": ["anonymous", "t"]}
    rt = build_runtime(
        load_settings(builtin={"enabled": False}, audit={"enabled": False}, context=table)
    )
    try:
        args = {"action": "query", "kind": "bank", "per_page": 1}
        got = await rt.provider.execute("user_context", args)
        assert got.success, got.error
        totals = got.data["query"]["totals"]
        assert totals["count"] == 103
        assert (totals["currency"], totals["spent"], totals["net"]) == (None, None, None)
        each = {t["currency"]: t for t in totals["by_currency"]}
        assert sorted(each) == ["CAD", "EUR", "USD"]
        assert sum(t["count"] for t in each.values()) == 103
        run = await rt.runs.start(ChatRequest(question="how much did I spend?"), user="t")
        answer = (await rt.runs.wait(run.run_id)).answer
        assert answer is not None
        text = answer.answer_markdown
        assert all(f"in {c}" in text for c in each), text
        assert answer.grounding.verdict == "grounded", answer.grounding
    finally:
        await rt.aclose()


async def test_a_finance_source_in_error_states_no_totals(tmp_path: Path) -> None:
    """Issue 30: when every statement fails, ``query`` gives no figures (it gave zero
    totals, "you spent nothing"); the category says why, and the chat says it could not
    read the transactions instead of stating amounts."""
    from tooldeck.agent.contracts import ChatRequest
    from tooldeck.config import load_settings
    from tooldeck.runtime import build_runtime

    broken = tmp_path / "broken.qfx"
    broken.write_text("this is a PDF saved as .qfx")
    table = {"finance": {"ofx": [str(broken)]}, "owners": ["anonymous", "t"]}
    rt = build_runtime(
        load_settings(builtin={"enabled": False}, audit={"enabled": False}, context=table)
    )
    try:
        got = await rt.provider.execute("user_context", {"action": "query"})
        assert got.success, got.error
        assert got.data["query"] is None
        [finance] = got.data["categories"]
        assert finance["status"] == "error" and "broken.qfx" in finance["sources"][0]["error"]
        run = await rt.runs.start(ChatRequest(question="how much did I spend?"), user="t")
        answer = (await rt.runs.wait(run.run_id)).answer
        assert answer is not None
        assert "$" not in answer.answer_markdown and "spent" not in answer.answer_markdown
    finally:
        await rt.aclose()


async def test_the_positions_of_real_statements_are_the_users_holdings() -> None:
    """Every position of the 32 files (E*TRADE's two among them) in the finance summary,
    largest value first, each citing its source."""
    from tooldeck.config import load_settings
    from tooldeck.runtime import build_runtime

    table = {"finance": {"ofx": [str(p) for p in real_files("ofx")]}}
    rt = build_runtime(
        load_settings(builtin={"enabled": False}, audit={"enabled": False}, context=table)
    )
    try:
        got = await rt.provider.execute("user_context", {"category": "finance"})
        assert got.success, got.error
        holdings = got.data["categories"][0]["summary"]["holdings"]
        assert len(holdings) == 4  # the files' own count of POS* elements (test above)
        values = [h["market_value"] for h in holdings]
        assert values == sorted(values, reverse=True)
        visa = next(h for h in holdings if h["ticker"] == "V")
        assert (visa["units"], visa["market_value"], visa["as_of"], visa["source_id"]) == (
            500.0, 13736.96, "2023-09-08", "context:finance:ofx"
        )  # fmt: skip
    finally:
        await rt.aclose()


BUYS = re.compile(r"<BUY(?:STOCK|MF|DEBT|OPT|OTHER)>.*?<TOTAL>\s*(-?[\d.]+)", re.S | re.I)
SELLS = re.compile(r"<SELL(?:STOCK|MF|DEBT|OPT|OTHER)>.*?<TOTAL>\s*(-?[\d.]+)", re.S | re.I)


async def test_investment_transactions_are_queried_beside_the_bank_ones() -> None:
    """Issue 54 item 6: the trades of the statements (11 of the 114 transactions an
    independent count of their elements finds) are served by the finance query: each
    buy moves money out and each sell money in, whatever sign the broker wrote, and the
    chat answers questions about them from them (the totals checked against a regex
    count of the files' <BUY*>/<SELL*> totals, not against the reader)."""
    from tooldeck.agent.contracts import ChatRequest
    from tooldeck.config import load_settings
    from tooldeck.runtime import build_runtime

    files = real_files("ofx")
    texts = [p.read_text(errors="replace") for p in files]
    bought = round(sum(abs(float(t)) for x in texts for t in BUYS.findall(x)), 2)
    sold = round(sum(abs(float(t)) for x in texts for t in SELLS.findall(x)), 2)
    table = {"finance": {"ofx": [str(p) for p in files]}, "owners": ["anonymous", "t"]}
    rt = build_runtime(
        load_settings(builtin={"enabled": False}, audit={"enabled": False}, context=table)
    )
    try:
        both = await rt.provider.execute("user_context", {"action": "query", "per_page": 1})
        assert both.success, both.error
        assert both.data["query"]["total"] == sum(
            _opened(x, "STMTTRN|INTRARS|INTERRS|" + INVESTMENT_TAGS) for x in texts
        )
        args = {"action": "query", "kind": "investment", "per_page": 100}
        got = await rt.provider.execute("user_context", args)
        trades = got.data["query"]["transactions"]
        assert len(trades) == sum(_opened(x, INVESTMENT_TAGS) for x in texts) == 11
        for t in trades:
            assert t["kind"] == "investment" and t["payee"], t
            if t["action"] == "buy":
                assert t["amount"] < 0, t
            if t["action"] in ("sell", "income"):
                assert t["amount"] > 0, t
        buys = {"finance_category": "investment buy", **args}
        got = await rt.provider.execute("user_context", buys)
        assert got.data["query"]["totals"]["spent"] == bought
        sells = {"finance_category": "investment sell", **args}
        got = await rt.provider.execute("user_context", sells)
        assert got.data["query"]["totals"]["received"] == sold

        async def ask(question: str) -> str:
            run = await rt.runs.start(ChatRequest(question=question), user="t")
            answer = (await rt.runs.wait(run.run_id)).answer
            assert answer is not None and answer.grounding.verdict == "grounded", answer
            return answer.answer_markdown

        assert f"${sold:,.2f}" in await ask("Did I sell any stock?")
        tsm = await ask("How many shares of TSM did I buy?")
        assert "0.76817" in tsm and "$82.34" in tsm and "104.23" not in tsm  # not the dividend
        dividend = await ask("What dividends did I get in July 2023?")
        assert "$104.23" in dividend and "82.34" not in dividend
        spent = await ask("What did I spend in July 2023?")  # bank lines only
        assert "TSM" not in spent and "1,344.27" not in spent, spent
    finally:
        await rt.aclose()


async def test_parses_are_kept_for_every_process_by_content(tmp_path: Path) -> None:
    """One process parses (all its files in one child); another reads the kept parses
    without parsing; categories apply to kept parses anew. The name is part of the key
    (a parse names its file), so a copy under another name is parsed for itself."""
    from tooldeck.core.isolated import IsolatedProcesses

    paths = real_files("ofx")
    kept = tmp_path / "cache"
    first = await OfxAdapter(paths, {"amazon": "shopping"}, cache_dir=kept).fetch()
    assert first.success and first.transformed_count == 103 + 11
    closed = IsolatedProcesses(1)
    closed.close()  # any parse now fails: "the server is stopping"
    again = OfxAdapter(paths, {"amazon": "books"}, processes=closed, cache_dir=kept)
    second = await again.fetch()
    assert second.success and second.metadata["skipped"] == [], second.metadata["skipped"]
    assert len(second.data) == len(first.data)
    categories = {r["category"] for r in second.data}
    assert "books" in categories and "shopping" not in categories
    assert len(list(kept.rglob("*.json"))) == len({(p.name, p.read_bytes()) for p in paths})
    renamed = tmp_path / "renamed.qfx"
    renamed.write_bytes(paths[0].read_bytes())
    copy = await OfxAdapter([renamed], {}, processes=closed, cache_dir=kept).fetch()
    assert not copy.success and "stopping" in str(copy.error)  # not another file's parse
    (next(kept.rglob("*.json"))).write_text('{"transactions": []}')  # not a parse's shape
    reparsed = await OfxAdapter(paths, {}, cache_dir=kept).fetch()
    assert reparsed.success and reparsed.transformed_count == 103 + 11


async def test_only_regular_files_are_read(tmp_path: Path) -> None:
    """A FIFO named as a statement would block a read for ever: it is refused, named."""
    import os

    fifo = tmp_path / "statement.ofx"
    os.mkfifo(fifo)
    got = await OfxAdapter([fifo, real_files("ofx")[0]], {}).fetch()
    assert got.success
    assert got.metadata["skipped"] == [f"statement {fifo} is not a regular file"]
