"""Finance: bank statements as transactions, and the query over them.

Sources: OFX/QFX statements (``ofx.py``, read as banks write them) and bank CSV exports
with a column mapping.
Every transaction becomes ``{id, date (YYYY-MM-DD), amount (negative: money out),
currency, payee, memo, category, account, kind}``. A payee is given a category by the
``categories`` map of the configuration (a word of the payee → a category) when the
source has none. ``kind`` is ``bank`` (a payment, a deposit, a card purchase) or
``investment`` (a statement's buy, sell, income, reinvestment…: ``trade_record``), so
that one query reads both and spending can leave the trades out.
"""

from __future__ import annotations

import asyncio
import csv
import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tooldeck.core.isolated import IsolatedProcesses, ProcessLimits
from tooldeck.packs.context.adapter import ContextAdapter, SourceError
from tooldeck.packs.context.statements import StatementParses

__all__ = [
    "OFX_PARSERS",
    "CsvAdapter",
    "CsvColumns",
    "CsvStatement",
    "FinanceQuery",
    "OfxAdapter",
    "categorized",
    "normalize_finance",
    "query_transactions",
    "trade_record",
]


OFX_PARSERS = ("tooldeck.packs.context.ofx", "tooldeck.packs.context.statements")
"""Modules a statement's parsing process imports (preloaded by the fork server)."""


def _categorize(payee: str, categories: Mapping[str, str]) -> str:
    lowered = payee.lower()
    for word, category in categories.items():
        if word.lower() in lowered:
            return category
    return "uncategorized"


_CASH = {
    "buy": -1, "expense": -1, "margin_interest": -1,
    "sell": 1, "income": 1, "return_of_capital": 1,
}  # fmt: skip
"""The direction of an investment transaction's cash; the others move none (a
reinvestment spends the income it receives, a transfer or a split moves units)."""
_INCOME = {"DIV": "dividend", "INTEREST": "interest", "CGLONG": "capital gains",
           "CGSHORT": "capital gains", "MISC": "investment income"}  # fmt: skip


def trade_record(trade: Mapping[str, Any]) -> dict[str, Any]:
    """An investment transaction (``ofx.OfxStatements.investments``) as a transaction.

    ``amount`` is the cash it moved, by its action, whatever sign the broker wrote on
    ``TOTAL`` (OFX 2.2 §13.9.2.4.3 wants buys negative; not every broker does): money
    out for a buy, an expense or margin interest, money in for a sell, income or a
    return of capital, none for a reinvestment, a transfer, a split or a journal entry.
    ``payee`` is the ticker (or the security), ``memo`` the security's name and the
    broker's memo, ``category`` ``investment <action>`` or the income's type
    (``dividend``, ``interest``, ``capital gains``). The trade's own fields (``action``,
    ``security``, ``ticker``, ``units``, ``unit_price``, ``total``, ``fees``) stay.
    """
    direction = _CASH.get(trade["action"], 0)
    total, units, price = trade.get("total"), trade.get("units"), trade.get("unit_price")
    size = abs(total) if total is not None else abs((units or 0.0) * (price or 0.0))
    ticker, security = trade.get("ticker"), trade.get("security") or "(unnamed security)"
    category = (
        _INCOME.get(trade.get("income_type") or "", "investment income")
        if trade["action"] == "income"
        else f"investment {trade['action'].replace('_', ' ')}"
    )
    named = security if ticker else ""
    return {
        **trade,
        "amount": round(direction * size, 2) + 0.0,  # never -0.0
        "payee": ticker or security,
        "memo": " ".join(part for part in (named, trade.get("memo") or "") if part),
        "category": category,
        "kind": "investment",
    }


class _FinanceAdapter(ContextAdapter):
    """What finance sources share: the category map, and how transactions are shaped.

    Args:
        categories: Payee word → category, for transactions the source gives none.
        alert_over: An expense of this much or more is an alert.
    """

    category = "finance"

    def __init__(self, categories: Mapping[str, str], alert_over: float) -> None:
        self.categories = dict(categories)
        self.alert_over = alert_over

    def normalize_for_tools(
        self, records: Sequence[Mapping[str, Any]], *, include_alerts: bool = True
    ) -> dict[str, Any]:
        """The latest month's money in and out (``normalize_finance``)."""
        return normalize_finance(records, include_alerts=include_alerts, large=self.alert_over)


class OfxAdapter(_FinanceAdapter):
    """Transactions of OFX or QFX statement files (every statement in each file).

    Statements are parsed in a killable process (``core.isolated``): a file built to
    exhaust the parser (billion laughs in its DTD) costs at most ``timeout_s``. Parses
    are kept by content for every process of the project, and the files not yet parsed
    are parsed in one process (``statements.StatementParses``).

    Args:
        paths: The statement files.
        categories: Payee word → category.
        alert_over: An expense of this much or more is an alert.
        timeout_s: Seconds one file (or one batch of files) may take to parse.
        processes: Where parsing runs; None: a pool of the adapter's own.
        cache_dir: Where parses are kept for other processes; None: this one only.
    """

    platform = "ofx"

    def __init__(
        self,
        paths: Sequence[Path],
        categories: Mapping[str, str],
        alert_over: float = 500.0,
        timeout_s: float = 60.0,
        processes: IsolatedProcesses | None = None,
        cache_dir: Path | None = None,
    ) -> None:
        super().__init__(categories, alert_over)
        self.paths = list(paths)
        self.processes = processes
        limits = ProcessLimits(timeout_s=timeout_s, memory_mb=1024)
        self.parses = StatementParses(cache_dir, self._pool, limits)

    def _pool(self) -> IsolatedProcesses:
        if self.processes is None:
            self.processes = IsolatedProcesses(1, OFX_PARSERS)
        return self.processes

    async def read(self) -> tuple[list[dict[str, Any]], int, dict[str, Any]]:
        """Every statement's transactions.

        The bank transactions, then the investment ones (``trade_record``). ``metadata``
        has the positions, accounts and balances, and in ``skipped`` each file that
        could not be read.

        Raises:
            SourceError: no file could be read (missing, not OFX, past the parse's limits).
        """
        return await asyncio.to_thread(self._read)

    def _read(self) -> tuple[list[dict[str, Any]], int, dict[str, Any]]:
        """Every readable file's statements; an unreadable file is named in ``skipped``.

        A parse that outlives the bridge's timeout is still kept, so the next fetch of
        a large statement is immediate.

        Raises:
            SourceError: no file could be read (each file's reason, in the message).
        """
        records: list[dict[str, Any]] = []
        metadata: dict[str, list[Any]] = {
            "accounts": [], "positions": [], "balances": [], "skipped": []
        }  # fmt: skip
        failed: list[str] = []
        for parse in self.parses.read(self.paths):
            if isinstance(parse, SourceError):
                failed.append(str(parse))
                continue
            records += categorized(parse, self.categories)
            for key in metadata:
                metadata[key] += parse[key]
        if failed and len(failed) == len(self.paths):
            raise SourceError("; ".join(failed))
        metadata["skipped"] = failed + metadata["skipped"]
        return records, len(records), metadata


def categorized(parse: Mapping[str, Any], categories: Mapping[str, str]) -> list[dict[str, Any]]:
    """A file's transactions (``statements.parse_statements``) as the finance query reads them.

    The bank ones (``kind: bank``, with their ``category`` from ``categories``), then
    the investment ones (``trade_record``). The parse itself is not changed.
    """
    bank = [
        {**tx, "category": _categorize(tx["payee"], categories), "kind": "bank"}
        for tx in parse["transactions"]
    ]
    return bank + [trade_record(t) for t in parse["investments"]]


class CsvColumns(BaseModel):
    """Which column of a bank's CSV holds what (header names, as written)."""

    model_config = ConfigDict(extra="forbid")

    date: str
    payee: str
    amount: str | None = None
    """One signed amount column; or ``debit`` and ``credit``."""
    debit: str | None = None
    """Money out, a positive number (its sign is made negative)."""
    credit: str | None = None
    category: str | None = None
    memo: str | None = None


class CsvStatement(BaseModel):
    """``[[context.finance.csv]]``: one bank CSV export and how to read it."""

    model_config = ConfigDict(extra="forbid")

    path: Path
    account: str = Field(min_length=1, description="The account's name in answers.")
    columns: CsvColumns
    date_format: str = "%Y-%m-%d"
    """``strptime`` format of the date column, e.g. ``%m/%d/%Y``."""
    currency: str = "USD"
    delimiter: str = Field(",", min_length=1, max_length=1)


_MONEY = re.compile(r"^\(?-?[$€£]?\s*-?[\d,]*\.?\d+\)?$")


def _amount(text: str) -> Decimal:
    """A bank's amount: ``1,234.56``, ``-12.00``, ``(12.00)`` (negative), ``$5``."""
    cleaned = text.strip().replace(" ", "")
    if not cleaned or not _MONEY.match(cleaned):
        raise ValueError(f"not an amount: {text!r}")
    negative = cleaned.startswith("(") or "-" in cleaned
    digits = re.sub(r"[^\d.]", "", cleaned)
    value = Decimal(digits)
    return -value if negative else value


class CsvAdapter(_FinanceAdapter):
    """Transactions of bank CSV exports, each read through its column mapping.

    A row that cannot be read (a bad date or amount) is skipped and counted in
    ``metadata["skipped"]`` with its line; the rest is read.
    """

    platform = "csv"

    def __init__(
        self,
        statements: Sequence[CsvStatement],
        categories: Mapping[str, str],
        alert_over: float = 500.0,
    ) -> None:
        super().__init__(categories, alert_over)
        self.statements = list(statements)

    async def read(self) -> tuple[list[dict[str, Any]], int, dict[str, Any]]:
        """Every statement's rows as transactions.

        Raises:
            SourceError: a file is missing, or a mapped column is not in its header.
        """
        return await asyncio.to_thread(self._read)

    def _read(self) -> tuple[list[dict[str, Any]], int, dict[str, Any]]:
        records: list[dict[str, Any]] = []
        skipped: list[str] = []
        raw = 0
        for statement in self.statements:
            path = statement.path
            if not path.is_file():
                raise SourceError(f"statement not found: {path}")
            text = path.read_bytes().decode("utf-8-sig", errors="replace")
            reader = csv.DictReader(io.StringIO(text), delimiter=statement.delimiter)
            mapping = statement.columns
            wanted = [c for c in mapping.model_dump().values() if c]
            missing = [c for c in wanted if c not in (reader.fieldnames or [])]
            if missing:
                raise SourceError(
                    f"{path.name}: no column {', '.join(map(repr, missing))}; its columns: "
                    f"{', '.join(reader.fieldnames or [])}"
                )
            for line, row in enumerate(reader, start=2):
                raw += 1
                try:
                    records.append(self._row(row, statement, f"{path.name}:{line}"))
                except (ValueError, InvalidOperation) as exc:
                    skipped.append(f"{path.name}:{line}: {exc}")
        return records, raw, {"skipped": skipped}

    def _row(self, row: Mapping[str, str], statement: CsvStatement, where: str) -> dict[str, Any]:
        columns = statement.columns
        day = datetime.strptime(row[columns.date].strip(), statement.date_format).date()
        if columns.amount:
            amount = _amount(row[columns.amount])
        else:
            out = _amount(row[columns.debit]) if columns.debit and row[columns.debit].strip() else 0
            into = (
                _amount(row[columns.credit])
                if columns.credit and row[columns.credit].strip()
                else 0
            )
            amount = Decimal(into) - abs(Decimal(out))
        payee = row[columns.payee].strip()
        given = row[columns.category].strip() if columns.category else ""
        return {
            "id": where,
            "date": day.isoformat(),
            "amount": float(amount),
            "currency": statement.currency,
            "payee": payee,
            "memo": row[columns.memo].strip() if columns.memo else "",
            "category": given or _categorize(payee, self.categories),
            "account": statement.account,
            "kind": "bank",
        }


def normalize_finance(
    records: Sequence[Mapping[str, Any]], *, include_alerts: bool = True, large: float = 500.0
) -> dict[str, Any]:
    """The month of the latest bank transaction: money in and out, by category.

    Also its largest expense; alerts for expenses of ``large`` or more in that month.
    Investment transactions (``kind: investment``) are not spending: they are counted
    in ``investment_transactions`` only. Amounts in different currencies are never
    added: with several, ``spent``, ``received``, ``net`` and ``currency`` are None,
    ``by_currency`` has each one's totals, and there are no top categories nor a
    largest expense.
    """
    trades = sum(r.get("kind") == "investment" for r in records)
    records = [r for r in records if r.get("kind") != "investment"]
    if not records:
        return {"summary": {"transactions": 0, "investment_transactions": trades}}
    month = max(r["date"] for r in records)[:7]
    current = [r for r in records if r["date"].startswith(month)]
    totals = _totals(current)
    by_category: dict[str, float] = {}
    for r in current:
        if r["amount"] < 0:
            by_category[r["category"]] = by_category.get(r["category"], 0.0) - r["amount"]
    top = sorted(by_category.items(), key=lambda kv: -kv[1])[:5]
    largest = min(current, key=lambda r: r["amount"])
    summary = {
        "month": month,
        "transactions": len(current),
        "spent": totals["spent"],
        "received": totals["received"],
        "net": totals["net"],
        "top_categories": [{"category": c, "spent": round(v, 2)} for c, v in top]
        if totals["currency"]
        else [],  # a category's spending across currencies is no amount
        "largest_expense": _brief(largest)
        if largest["amount"] < 0 and totals["currency"]
        else None,
        "currency": totals["currency"],
        "by_currency": totals["by_currency"],
        "investment_transactions": trades,
    }
    shaped: dict[str, Any] = {"summary": summary}
    if include_alerts:
        shaped["alerts"] = [
            f"{r['payee']}: {-r['amount']:,.2f} {r['currency']} on {r['date']}"
            for r in current
            if r["amount"] <= -large
        ]
    return shaped


def _brief(r: Mapping[str, Any]) -> dict[str, Any]:
    return {k: r[k] for k in ("date", "payee", "amount", "category", "account")}


@dataclass(frozen=True, slots=True)
class FinanceQuery:
    """A query over transactions (seed 000's ``query_finance`` parameters).

    ``search`` matches payee, memo or category (any case: "groceries" finds what the
    ``categories`` map to groceries); ``category`` the transaction's category
    (any case); ``kind`` ``bank`` or ``investment`` transactions only (None: both);
    dates are inclusive; ``page`` counts from 1.
    """

    search: str | None = None
    category: str | None = None
    kind: Literal["bank", "investment"] | None = None
    date_from: date | None = None
    date_to: date | None = None
    sort: Literal["date", "amount", "payee"] = "date"
    sort_dir: Literal["asc", "desc"] = "desc"
    page: int = 1
    per_page: int = 10
    group_by: Literal["category", "payee", "month"] | None = None


def query_transactions(records: Sequence[Mapping[str, Any]], query: FinanceQuery) -> dict[str, Any]:
    """The page of transactions matching ``query``, its totals, and groups.

    Returns:
        ``{"total": matches, "page", "per_page", "pages", "transactions": [...],
        "totals": {"spent", "received", "net", "count"}, "groups": [...]}`` where a
        group is ``{"key", "count", "spent", "received", "net"}``, largest spending
        first (months in order). Totals cover every match, not only the page.
    """
    needle = query.search.lower() if query.search else None
    wanted = query.category.lower() if query.category else None
    since = query.date_from.isoformat() if query.date_from else None
    until = query.date_to.isoformat() if query.date_to else None
    matches = [
        r
        for r in records
        if (
            needle is None
            or needle in r["payee"].lower()
            or needle in r["memo"].lower()
            or needle in r["category"].lower()
        )  # "groceries": ALDI, mapped to it
        and (wanted is None or r["category"].lower() == wanted)
        and (query.kind is None or r.get("kind", "bank") == query.kind)
        and (since is None or r["date"] >= since)
        and (until is None or r["date"] <= until)
    ]
    key = {"date": "date", "amount": "amount", "payee": "payee"}[query.sort]
    ordered = sorted(
        matches,
        key=(lambda r: r[key].lower()) if key == "payee" else (lambda r: r[key]),
        reverse=query.sort_dir == "desc",
    )
    start = (query.page - 1) * query.per_page
    pages = max(1, -(-len(matches) // query.per_page))
    out: dict[str, Any] = {
        "total": len(matches),
        "page": query.page,
        "per_page": query.per_page,
        "pages": pages,
        "transactions": [dict(r) for r in ordered[start : start + query.per_page]],
        "totals": _totals(matches),
    }
    if query.group_by is not None:
        groups: dict[str, list[Mapping[str, Any]]] = {}
        for r in matches:
            group = r["date"][:7] if query.group_by == "month" else r[query.group_by]
            groups.setdefault(group, []).append(r)
        rows = [{"key": k, **_totals(v)} for k, v in groups.items()]
        if query.group_by == "month":
            rows.sort(key=lambda g: g["key"])
        else:
            rows.sort(key=lambda g: (-g["spent"], g["key"]))
        out["groups"] = rows
    return out


def _totals(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``{count, currency, spent, received, net, by_currency}``, never adding currencies.

    With one currency (or none) the totals are its own; with several, ``spent``,
    ``received``, ``net`` and ``currency`` are None and ``by_currency`` has each one's.
    """
    by_currency: dict[str, list[Mapping[str, Any]]] = {}
    for r in records:
        by_currency.setdefault(r["currency"], []).append(r)
    each = [{"currency": c, **_sums(rs)} for c, rs in sorted(by_currency.items())]
    sums = _sums(records) if len(each) <= 1 else dict.fromkeys(("spent", "received", "net"))
    currency = each[0]["currency"] if len(each) == 1 else None
    return {**sums, "count": len(records), "currency": currency, "by_currency": each}


def _sums(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    spent = round(-sum(r["amount"] for r in records if r["amount"] < 0), 2)
    received = round(sum(r["amount"] for r in records if r["amount"] > 0), 2)
    return {"count": len(records), "spent": spent, "received": received,
            "net": round(received - spent, 2)}  # fmt: skip
