"""user_context's finance query over a large statement: parse time and query latency.

    .venv/bin/python benchmarks/context.py [--transactions 50000] [--queries 200]

Writes an OFX 2.2 statement of ``--transactions`` transactions (payees, amounts and
days drawn from a fixed seed over two years), configures it as ``[context.finance]``,
then times ``user_context`` through the runtime's provider stack (validation,
policies, the bridge's cache): the first call reads and parses the file, the next
ones query the cached transactions. Each query mixes search, a category, a date range,
sorting, a page and a grouping. Target: p50 ≤ 50 ms at 50,000 transactions.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from tooldeck.config import load_settings
from tooldeck.runtime import build_runtime

PAYEES = ["UBER *TRIP", "UBER EATS", "WHOLE FOODS MARKET", "SHELL OIL", "NETFLIX.COM",
          "OAKWOOD APARTMENTS", "AMAZON MKTPLACE", "STARBUCKS", "CITY PARKING", "ACME PAYROLL",
          "TRADER JOES", "DELTA AIR LINES", "SPOTIFY", "CVS PHARMACY", "HOME DEPOT"]  # fmt: skip
CATEGORIES = {"uber eats": "food", "uber": "transport", "whole foods": "groceries",
              "trader": "groceries", "shell": "gas", "netflix": "entertainment",
              "spotify": "entertainment", "oakwood": "rent", "payroll": "income",
              "starbucks": "food", "delta": "travel"}  # fmt: skip
QUERIES: list[dict[str, Any]] = [
    {"action": "query", "search": "uber", "group_by": "month"},
    {"action": "query", "finance_category": "groceries", "sort": "amount", "sort_dir": "asc"},
    {"action": "query", "date_from": "2026-01-01", "date_to": "2026-03-31", "per_page": 50},
    {"action": "query", "group_by": "category", "page": 3},
    {"action": "query", "search": "pharmacy", "sort": "payee", "date_from": "2025-06-01"},
]


def statement(path: Path, count: int, seed: int = 11) -> None:
    """An OFX 2.2 checking statement of ``count`` transactions."""
    rng = random.Random(seed)
    first = date(2025, 1, 1)
    rows = []
    for n in range(count):
        payee = rng.choice(PAYEES)
        amount = 3200.0 if payee == "ACME PAYROLL" else -round(rng.uniform(2, 400), 2)
        day = first + timedelta(days=rng.randrange(700))
        rows.append(
            f"<STMTTRN><TRNTYPE>{'CREDIT' if amount > 0 else 'DEBIT'}</TRNTYPE>"
            f"<DTPOSTED>{day:%Y%m%d}120000</DTPOSTED><TRNAMT>{amount:.2f}</TRNAMT>"
            f"<FITID>{n}</FITID><NAME>{payee}</NAME><MEMO>card {n % 97}</MEMO></STMTTRN>"
        )
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n'
        '<?OFX OFXHEADER="200" VERSION="220" SECURITY="NONE" OLDFILEUID="NONE" '
        'NEWFILEUID="NONE"?>\n<OFX><SIGNONMSGSRSV1><SONRS><STATUS><CODE>0</CODE>'
        "<SEVERITY>INFO</SEVERITY></STATUS><DTSERVER>20261120120000</DTSERVER>"
        "<LANGUAGE>ENG</LANGUAGE></SONRS></SIGNONMSGSRSV1><BANKMSGSRSV1><STMTTRNRS>"
        "<TRNUID>1</TRNUID><STATUS><CODE>0</CODE><SEVERITY>INFO</SEVERITY></STATUS><STMTRS>"
        "<CURDEF>USD</CURDEF><BANKACCTFROM><BANKID>121000248</BANKID><ACCTID>42</ACCTID>"
        "<ACCTTYPE>CHECKING</ACCTTYPE></BANKACCTFROM><BANKTRANLIST>"
        "<DTSTART>20250101</DTSTART><DTEND>20261201</DTEND>"
        + "\n".join(rows)
        + "</BANKTRANLIST><LEDGERBAL><BALAMT>0.00</BALAMT><DTASOF>20261120</DTASOF>"
        "</LEDGERBAL></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>\n"
    )


async def run(count: int, queries: int, folder: Path) -> None:
    path = folder / "statement.ofx"
    statement(path, count)
    context = {"finance": {"ofx": [str(path)], "categories": CATEGORIES}, "ttl_s": 3600,
               "timeout_s": 600}  # fmt: skip
    settings = load_settings(builtin={"enabled": False}, audit={"enabled": False}, context=context)
    runtime = build_runtime(settings)
    try:
        begin = time.perf_counter()
        first = await runtime.provider.execute("user_context", QUERIES[0])
        parse_s = time.perf_counter() - begin
        assert first.success, first.error
        print(f"{count:>7} transactions: first call (read + parse the OFX) {parse_s:.1f} s, "
              f"{path.stat().st_size / 1e6:.1f} MB")  # fmt: skip
        times = []
        for n in range(queries):
            begin = time.perf_counter()
            result = await runtime.provider.execute("user_context", QUERIES[n % len(QUERIES)])
            times.append((time.perf_counter() - begin) * 1000)
            assert result.success, result.error
        ordered = sorted(times)
        print(f"         query through the tool: p50 {statistics.median(times):.1f} ms, "
              f"p95 {ordered[int(0.95 * len(ordered))]:.1f} ms")  # fmt: skip
    finally:
        await runtime.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--transactions", type=int, default=50_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(run(args.transactions, args.queries, Path(folder)))


if __name__ == "__main__":
    main()
