"""Regenerate the brokerage pack's data file, consistent by construction.

    python scripts/make_brokerage_data.py

Account values are positions at quote prices plus cash; each timeframe's end value
is today's account value; its net contributions are the completed transfers inside its
window (so the performance record and the transfers agree), and its start value
follows from the return: start = (end - contributions) / (1 + return_pct / 100).
"""

from __future__ import annotations

import json
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "src/tooldeck/packs/brokerage/data/brokerage.json"
AS_OF = "2026-11-20"

QUOTES = {  # symbol: (name, asset_class, price, previous_close)
    "AAPL": ("Apple Inc.", "stocks", 228.42, 225.91),
    "MSFT": ("Microsoft Corp.", "stocks", 431.18, 433.60),
    "NVDA": ("NVIDIA Corp.", "stocks", 146.75, 141.02),
    "AMZN": ("Amazon.com Inc.", "stocks", 201.37, 199.84),
    "GOOGL": ("Alphabet Inc. Class A", "stocks", 176.90, 178.12),
    "TSLA": ("Tesla Inc.", "stocks", 312.05, 305.44),
    "JPM": ("JPMorgan Chase & Co.", "stocks", 243.66, 242.10),
    "VOO": ("Vanguard S&P 500 ETF", "etf", 541.28, 538.75),
    "VTI": ("Vanguard Total Stock Market ETF", "etf", 296.14, 294.60),
    "QQQ": ("Invesco QQQ Trust", "etf", 505.83, 501.27),
    "VXUS": ("Vanguard Total International Stock ETF", "etf", 61.47, 61.80),
    "BND": ("Vanguard Total Bond Market ETF", "bonds", 72.18, 72.25),
    "TLT": ("iShares 20+ Year Treasury Bond ETF", "bonds", 88.64, 89.10),
    "SGOV": ("iShares 0-3 Month Treasury Bond ETF", "cash", 100.52, 100.51),
}

ACCOUNTS = [
    {
        "id": "individual",
        "name": "Individual Brokerage",
        "type": "taxable",
        "cash": 12340.10,
        "unsettled": 350.00,
    },
    {"id": "roth_ira", "name": "Roth IRA", "type": "roth_ira", "cash": 2150.75, "unsettled": 0.0},
    {
        "id": "joint",
        "name": "Joint Brokerage",
        "type": "joint",
        "cash": 8420.00,
        "unsettled": 1200.00,
    },
]

POSITIONS = {  # account: [(symbol, quantity, cost_basis per share)]
    "individual": [
        ("AAPL", 42, 150.25),
        ("MSFT", 12, 280.10),
        ("NVDA", 60, 48.30),
        ("TSLA", 15, 341.80),
        ("VOO", 25, 390.55),
        ("BND", 80, 74.90),
        ("SGOV", 50, 100.10),
    ],
    "roth_ira": [
        ("VTI", 40, 210.40),
        ("QQQ", 10, 365.00),
        ("VXUS", 120, 57.25),
        ("AMZN", 20, 135.60),
    ],
    "joint": [
        ("AAPL", 18, 182.40),
        ("GOOGL", 30, 139.75),
        ("JPM", 25, 168.20),
        ("TLT", 60, 98.35),
        ("VOO", 8, 472.10),
    ],
}

TRADES = [  # account, timestamp, symbol, side, quantity, price
    ("individual", "2026-11-18T15:42:00Z", "AAPL", "BUY", 10, 224.80),
    ("individual", "2026-11-12T14:05:00Z", "TSLA", "SELL", 5, 318.20),
    ("individual", "2026-11-03T16:20:00Z", "SGOV", "BUY", 50, 100.10),
    ("roth_ira", "2026-11-14T15:10:00Z", "VXUS", "BUY", 20, 61.05),
    ("roth_ira", "2026-10-28T13:55:00Z", "QQQ", "BUY", 2, 488.40),
    ("joint", "2026-11-19T19:30:00Z", "GOOGL", "BUY", 5, 177.35),
    ("joint", "2026-11-06T15:00:00Z", "TLT", "SELL", 10, 90.12),
]

TRANSFERS = [  # account, timestamp, type, method, amount, status: the whole history
    ("individual", "2026-11-12T10:15:00Z", "deposit", "ACH", 1500.00, "completed"),
    ("individual", "2026-10-01T09:00:00Z", "deposit", "ACH", 1500.00, "completed"),
    ("individual", "2026-09-15T12:30:00Z", "withdrawal", "ACH", 800.00, "completed"),
    ("individual", "2025-12-15T10:00:00Z", "deposit", "ACH", 1200.00, "completed"),
    ("individual", "2024-12-10T10:00:00Z", "deposit", "ACH", 5000.00, "completed"),
    ("individual", "2023-09-01T10:00:00Z", "deposit", "ACH", 8000.00, "completed"),
    ("individual", "2022-06-15T10:00:00Z", "deposit", "Wire", 10000.00, "completed"),
    ("individual", "2021-03-01T10:00:00Z", "deposit", "Wire", 15000.00, "completed"),
    ("roth_ira", "2026-04-10T11:00:00Z", "deposit", "ACH", 7000.00, "completed"),
    ("roth_ira", "2025-04-08T11:00:00Z", "deposit", "ACH", 7000.00, "completed"),
    ("roth_ira", "2024-04-02T11:00:00Z", "deposit", "ACH", 7000.00, "completed"),
    ("joint", "2026-11-19T08:45:00Z", "deposit", "Wire", 5000.00, "pending"),
    ("joint", "2026-07-02T14:20:00Z", "deposit", "ACH", 2500.00, "completed"),
    ("joint", "2023-02-14T14:20:00Z", "deposit", "ACH", 5000.00, "completed"),
    ("joint", "2020-05-01T14:20:00Z", "deposit", "Wire", 20000.00, "completed"),
]

WINDOWS = {  # timeframe: first day counted (ALL: every transfer)
    "1D": "2026-11-19",
    "1W": "2026-11-13",
    "1M": "2026-10-20",
    "3M": "2026-08-20",
    "YTD": "2026-01-01",
    "1Y": "2025-11-20",
    "ALL": "0000-01-01",
}

RETURNS = {  # account: {timeframe: return_pct}
    "individual": {"1D": 0.82, "1W": 1.9, "1M": 3.4, "3M": 6.8, "YTD": 14.6, "1Y": 17.9, "ALL": 61.3},
    "roth_ira": {"1D": 0.47, "1W": 1.1, "1M": 2.6, "3M": 5.2, "YTD": 12.3, "1Y": 15.8, "ALL": 48.7},
    "joint": {"1D": 0.21, "1W": 0.6, "1M": 1.8, "3M": 4.1, "YTD": 9.7, "1Y": 11.2, "ALL": 35.4},
}  # fmt: skip


def net_contributions(account: str, timeframe: str) -> float:
    """Completed deposits minus withdrawals of ``account`` since the window's first day."""
    first = WINDOWS[timeframe]
    total = 0.0
    for acct, timestamp, kind, _, amount, status in TRANSFERS:
        if acct == account and status == "completed" and first <= timestamp[:10] <= AS_OF:
            total += amount if kind == "deposit" else -amount
    return round(total, 2)


FACTS = [
    ("roth_ira", "Roth IRA", ["roth", "ira", "retirement", "after-tax", "tax-free"]),
    (
        "traditional_ira",
        "Traditional IRA",
        ["traditional", "ira", "retirement", "pre-tax", "deduction", "rmd"],
    ),
    ("etf_basics", "ETF basics", ["etf", "etfs", "exchange-traded", "fund", "index"]),
    ("rebalancing", "Rebalancing", ["rebalance", "rebalancing", "allocation", "drift", "target"]),
    (
        "diversification",
        "Diversification",
        ["diversify", "diversification", "risk", "concentration"],
    ),
    ("dividends", "Dividends", ["dividend", "dividends", "yield", "income", "payout"]),
    (
        "capital_gains",
        "Capital gains",
        ["capital", "gains", "tax", "taxes", "short-term", "long-term"],
    ),
    ("expense_ratios", "Expense ratios", ["expense", "ratio", "fees", "cost", "fund"]),
    ("bonds_basics", "Bond basics", ["bond", "bonds", "treasury", "duration", "interest", "rates"]),
    (
        "dollar_cost_averaging",
        "Dollar-cost averaging",
        ["dca", "dollar-cost", "averaging", "recurring"],
    ),
    (
        "settlement",
        "Trade settlement and cash",
        ["settled", "settlement", "unsettled", "cash", "t+1"],
    ),
]


def main(out: Path = OUT) -> None:
    """Write the data file (to ``out``)."""
    quotes = [
        {
            "symbol": s,
            "name": name,
            "asset_class": ac,
            "price": price,
            "previous_close": prev,
            "change": round(price - prev, 2),
            "change_pct": round((price - prev) / prev * 100, 2),
            "currency": "USD",
        }
        for s, (name, ac, price, prev) in QUOTES.items()
    ]
    positions, summaries, performance = [], [], []
    for acct in ACCOUNTS:
        market_value = 0.0
        for symbol, qty, cost in POSITIONS[acct["id"]]:
            positions.append(
                {
                    "account": acct["id"],
                    "symbol": symbol,
                    "quantity": qty,
                    "cost_basis": cost,
                    "asset_class": QUOTES[symbol][1],
                }
            )
            market_value += qty * QUOTES[symbol][2]
        market_value = round(market_value, 2)
        total = round(market_value + acct["cash"], 2)
        summaries.append(
            {
                "account": acct["id"],
                "market_value": market_value,
                "total_cash": acct["cash"],
                "settled_cash": round(acct["cash"] - acct["unsettled"], 2),
                "total_value": total,
            }
        )
        for tf, pct in RETURNS[acct["id"]].items():
            contrib = net_contributions(acct["id"], tf)
            start = round((total - contrib) / (1 + pct / 100), 2)
            performance.append(
                {
                    "account": acct["id"],
                    "timeframe": tf,
                    "return_pct": pct,
                    "return_amount": round(total - contrib - start, 2),
                    "start_value": start,
                    "end_value": total,
                    "net_contributions": contrib,
                }
            )
    data = {
        "as_of": AS_OF,
        "accounts": [{k: a[k] for k in ("id", "name", "type")} for a in ACCOUNTS],
        "quotes": {"as_of": f"{AS_OF}T21:00:00Z", "quotes": quotes},
        "positions": {"as_of": AS_OF, "positions": positions},
        "activity": {
            "as_of": AS_OF,
            "trades": [
                {"account": a, "timestamp": t, "symbol": s, "side": side, "quantity": q, "price": p}
                for a, t, s, side, q, p in TRADES
            ],
        },
        "transfers": {
            "as_of": AS_OF,
            "transfers": [
                {"account": a, "timestamp": t, "type": ty, "method": m, "amount": amt, "status": st}
                for a, t, ty, m, amt, st in TRANSFERS
            ],
        },
        "performance": {"as_of": AS_OF, "performance": performance},
        "account_summary": {"as_of": AS_OF, "accounts": summaries},
        "facts": {
            "as_of": AS_OF,
            "facts": [
                {"id": i, "title": title, "file": f"facts/{i}.md", "keywords": kw}
                for i, title, kw in FACTS
            ],
        },
    }
    out.write_text(json.dumps(data, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
