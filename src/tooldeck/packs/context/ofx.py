"""OFX/QFX statements read as banks and brokers really write them.

``ofxtools`` validates every element against the OFX specification and refuses the
whole file for one departure from it. Of 32 real statements in other projects'
packages (beancount-reds-importers 0.10.0, csv2ofx 0.34.2) it read 4: a header
without ``OFXHEADER:100`` (csv2ofx writes ``DATA:OFXSGML`` alone), no header at all,
a bank id longer than 9 characters, a server time of ``20230310048208``, no
``TRNUID``, elements out of the specification's order. None of these touch a
transaction, so this reader takes what a statement holds and leaves validation out:

- the body from ``<OFX>`` on, SGML (``<TAG>value`` with no closing tag) or XML, in the
  header's charset (``CHARSET:1252``, ``encoding="..."``), else UTF-8, else cp1252;
- bank and card statements (``STMTRS``, ``CCSTMTRS``): each ``STMTTRN``;
- transfers between accounts (``INTRARS``, ``INTERRS``) as transactions of the
  account they leave;
- investment statements (``INVSTMTRS``): each transaction of ``INVTRANLIST``
  (``BUYSTOCK``, ``SELLMF``, ``REINVEST``, ``INCOME``, ``TRANSFER``…) with its
  security (named from ``SECLIST``), units, unit price, total, fees and income type;
  cash lines (``INVBANKTRAN``) as bank transactions; ``INVPOSLIST``'s positions.

Entities are replaced as HTML's are; a ``DOCTYPE`` is never read (no entity of a
file's own is expanded: a "billion laughs" file is text). The parse runs in a
killable process (``statements.parse_statements``).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

__all__ = ["OfxNode", "OfxStatements", "parse_ofx", "read_statements"]

_TOKEN = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9.\-_]*)[^>]*>|([^<]+)|<[^>]*>?")
_CHARSET = re.compile(rb"(?:CHARSET:\s*|encoding=[\"'])([A-Za-z0-9_\-]+)", re.IGNORECASE)
_OFX_BYTES = re.compile(rb"<OFX>", re.IGNORECASE)
_OFX_TEXT = re.compile("<OFX>", re.IGNORECASE)
_CHARSETS = {"1252": "cp1252", "ISO-8859-1": "latin-1", "NONE": "utf-8", "UTF-8": "utf-8"}


@dataclass(slots=True)
class OfxNode:
    """One element: its tag (upper case), its text (a leaf) or its children."""

    tag: str
    text: str | None = None
    children: list[OfxNode] = field(default_factory=list)

    def find(self, *path: str) -> OfxNode | None:
        """The first descendant along ``path`` (each step a child's tag), else None."""
        node: OfxNode | None = self
        for tag in path:
            node = next((c for c in node.children if c.tag == tag), None) if node else None
        return node

    def value(self, *path: str) -> str | None:
        """The text at ``path`` (None when absent or empty)."""
        node = self.find(*path)
        return node.text if node is not None and node.text else None

    def walk(self, tag: str) -> list[OfxNode]:
        """Every descendant named ``tag``, in document order."""
        found: list[OfxNode] = []
        stack = list(reversed(self.children))
        while stack:
            node = stack.pop()
            if node.tag == tag:
                found.append(node)
            stack.extend(reversed(node.children))
        return found


def _decode(raw: bytes) -> str:
    body = _OFX_BYTES.search(raw)
    found = _CHARSET.search(raw, 0, body.start() if body else 400)
    declared = found.group(1).decode("ascii").upper() if found else None
    encodings = [_CHARSETS.get(declared, declared)] if declared else []
    for encoding in [*encodings, "utf-8"]:
        try:
            return raw.decode(encoding)
        except (LookupError, UnicodeDecodeError):
            continue
    return raw.decode("cp1252", errors="replace")


def parse_ofx(raw: bytes) -> OfxNode:
    """The ``<OFX>`` element of a statement file, SGML or XML, leniently.

    A tag followed by text is a leaf whether or not it is closed; a closing tag closes
    the elements opened since its own opening; a stray closing tag is ignored.

    Raises:
        ValueError: there is no ``<OFX>`` element in the file.
    """
    text = _decode(raw)
    body = _OFX_TEXT.search(text)
    if body is None:
        raise ValueError("no <OFX> element: this is not an OFX statement")
    root = OfxNode("(document)")
    stack = [root]
    for match in _TOKEN.finditer(text, body.start()):
        closing, tag, words = match.groups()
        top = stack[-1]
        if words is not None:
            words = words.strip()
            if words and len(stack) > 1 and not top.children:
                top.text = html.unescape(words) if top.text is None else top.text + words
            continue
        if tag is None:  # a comment, a processing instruction, a broken tag
            continue
        tag = tag.upper()
        if top.text is not None and (closing or tag != top.tag):
            stack.pop()  # an SGML leaf ends where the next tag starts
            if closing and tag == top.tag:
                continue
        if closing:
            for depth in range(len(stack) - 1, 0, -1):
                if stack[depth].tag == tag:
                    del stack[depth:]
                    break
            continue
        node = OfxNode(tag)
        stack[-1].children.append(node)
        stack.append(node)
    return root.children[0]  # the first token read was <OFX>


def _day(text: str | None) -> str | None:
    """``YYYYMMDD…`` as an ISO date; None when the first eight characters are no date."""
    if not text or len(text) < 8 or not text[:8].isdigit():
        return None
    year, month, day = text[:4], text[4:6], text[6:8]
    if not ("01" <= month <= "12" and "01" <= day <= "31"):
        return None
    return f"{year}-{month}-{day}"


def _number(text: str | None) -> float | None:
    """An OFX amount (``-12.50``, ``+3``, ``12,50`` with a decimal comma); None if absent."""
    if not text:
        return None
    cleaned = text.strip().replace(" ", "")
    if "," in cleaned and "." not in cleaned:
        cleaned = cleaned.replace(",", ".")
    try:
        return float(Decimal(cleaned.replace(",", "")))
    except InvalidOperation:
        return None


_INVESTMENT = {
    "BUYDEBT": "buy", "BUYMF": "buy", "BUYOPT": "buy", "BUYOTHER": "buy", "BUYSTOCK": "buy",
    "SELLDEBT": "sell", "SELLMF": "sell", "SELLOPT": "sell", "SELLOTHER": "sell",
    "SELLSTOCK": "sell", "REINVEST": "reinvest", "INCOME": "income", "TRANSFER": "transfer",
    "SPLIT": "split", "RETOFCAP": "return_of_capital", "MARGININTEREST": "margin_interest",
    "INVEXPENSE": "expense", "JRNLFUND": "journal", "JRNLSEC": "journal",
    "CLOSUREOPT": "option_closure",
}  # fmt: skip
"""Investment transaction aggregates (OFX 2.2 §13.9.2.4) and what each is."""

_POSITIONS = ("POSDEBT", "POSMF", "POSOPT", "POSOTHER", "POSSTOCK")


@dataclass(slots=True)
class OfxStatements:
    """What one file holds: transactions, investment transactions, positions, accounts.

    ``transactions`` have the finance pack's shape without ``category`` (``{id, date,
    amount, currency, payee, memo, account}``); ``investments`` are ``{id, date,
    account, action, type, security, ticker, units, unit_price, total, fees,
    income_type, currency, memo}``; ``positions`` ``{account, security, ticker, type,
    units, unit_price, market_value, as_of, currency}``; ``balances`` ``{account, kind,
    balance, available, as_of, currency}`` (``LEDGERBAL`` and ``AVAILBAL`` of a bank or
    card statement, ``INVBAL``'s ``AVAILCASH`` of an investment one: its cash).
    ``skipped`` names each entry that could not be read (no date, no amount) and why.
    """

    transactions: list[dict[str, Any]] = field(default_factory=list)
    investments: list[dict[str, Any]] = field(default_factory=list)
    positions: list[dict[str, Any]] = field(default_factory=list)
    accounts: list[str] = field(default_factory=list)
    balances: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def read_statements(raw: bytes, name: str) -> OfxStatements:
    """Every statement of an OFX/QFX file (see the module's docstring).

    Raises:
        ValueError: the file has no ``<OFX>`` element.
    """
    ofx = parse_ofx(raw)
    out = OfxStatements()
    securities = {
        info.value("SECID", "UNIQUEID"): (info.value("SECNAME"), info.value("TICKER"))
        for info in ofx.walk("SECINFO")
    }
    for tag in ("STMTRS", "CCSTMTRS", "INVSTMTRS"):
        for statement in ofx.walk(tag):
            account = (
                statement.value("BANKACCTFROM", "ACCTID")
                or statement.value("CCACCTFROM", "ACCTID")
                or statement.value("INVACCTFROM", "ACCTID")
                or "(no account id)"
            )
            out.accounts.append(account)
            currency = statement.value("CURDEF") or "USD"
            for tx in statement.walk("STMTTRN"):
                _bank(tx, account, currency, name, out)
            if tag == "INVSTMTRS":
                _investments(statement, account, currency, securities, name, out)
            _balance(statement, tag, account, currency, out)
    for transfer in [*ofx.walk("INTRARS"), *ofx.walk("INTERRS")]:
        _transfer(transfer, name, out)
    return out


def _transfer(transfer: OfxNode, name: str, out: OfxStatements) -> None:
    """A transfer between accounts (``INTRARS``: csv2ofx writes split lines as these)."""
    info = transfer.find("XFERINFO") or OfxNode("XFERINFO")
    account = info.value("BANKACCTFROM", "ACCTID") or info.value("CCACCTFROM", "ACCTID")
    target = info.value("BANKACCTTO", "ACCTID") or info.value("CCACCTTO", "ACCTID")
    day = _day(transfer.value("DTPOSTED") or transfer.value("DTXFERPRJ"))
    amount = _number(info.value("TRNAMT"))
    srvrtid = transfer.value("SRVRTID") or ""
    if account is None or day is None or amount is None:
        out.skipped.append(
            f"{name}: transfer {srvrtid or '(no SRVRTID)'}: no account, date or amount"
        )
        return
    if account not in out.accounts:
        out.accounts.append(account)
    out.transactions.append({
        "id": srvrtid or f"{name}:{len(out.transactions) + 1}",
        "date": day,
        "amount": amount,
        "currency": (transfer.value("CURDEF") or "USD").upper(),
        "payee": f"transfer to {target}" if target else "transfer",
        "memo": "",
        "account": account,
    })  # fmt: skip


_KINDS = {"STMTRS": "bank", "CCSTMTRS": "credit card", "INVSTMTRS": "investment cash"}


def _balance(statement: OfxNode, tag: str, account: str, currency: str, out: OfxStatements
             ) -> None:  # fmt: skip
    """The statement's closing balance, if it states one (OFX 2.2 §11.4.2.2, §13.9.2.2)."""
    if tag == "INVSTMTRS":
        balance, available = _number(statement.value("INVBAL", "AVAILCASH")), None
        day = _day(statement.value("INVTRANLIST", "DTEND") or statement.value("DTASOF"))
    else:
        balance = _number(statement.value("LEDGERBAL", "BALAMT"))
        available = _number(statement.value("AVAILBAL", "BALAMT"))
        day = _day(statement.value("LEDGERBAL", "DTASOF"))
    if balance is None:
        return
    out.balances.append({
        "account": account, "kind": _KINDS[tag], "balance": balance,
        "available": available, "as_of": day, "currency": currency.upper(),
    })  # fmt: skip


def _currency(node: OfxNode, default: str) -> str:
    return (
        node.value("CURRENCY", "CURSYM") or node.value("ORIGCURRENCY", "CURSYM") or default
    ).upper()


def _bank(tx: OfxNode, account: str, currency: str, name: str, out: OfxStatements) -> None:
    day = _day(tx.value("DTPOSTED") or tx.value("DTUSER"))
    amount = _number(tx.value("TRNAMT"))
    fitid = tx.value("FITID") or ""
    if day is None or amount is None:
        out.skipped.append(f"{name}: transaction {fitid or '(no FITID)'}: no date or amount")
        return
    memo = tx.value("MEMO") or ""
    out.transactions.append({
        "id": fitid or f"{name}:{len(out.transactions) + 1}",
        "date": day,
        "amount": amount,
        "currency": _currency(tx, currency),
        "payee": tx.value("NAME") or tx.value("PAYEE", "NAME") or memo or tx.value("TRNTYPE") or "",
        "memo": memo,
        "account": account,
    })  # fmt: skip


def _investments(
    statement: OfxNode,
    account: str,
    currency: str,
    securities: dict[str | None, tuple[str | None, str | None]],
    name: str,
    out: OfxStatements,
) -> None:
    listing = statement.find("INVTRANLIST")
    for tx in listing.children if listing is not None else []:
        action = _INVESTMENT.get(tx.tag)
        if action is None:
            continue  # DTSTART, DTEND; INVBANKTRAN's STMTTRN is read as a bank line
        trade = tx.find("INVBUY") or tx.find("INVSELL") or tx
        invtran = trade.find("INVTRAN") or tx.find("INVTRAN")
        fitid = invtran.value("FITID") if invtran else None
        day = _day(invtran.value("DTTRADE") if invtran else None)
        if day is None:
            out.skipped.append(f"{name}: {tx.tag} {fitid or '(no FITID)'}: no trade date")
            continue
        unique = trade.value("SECID", "UNIQUEID") or tx.value("SECID", "UNIQUEID")
        security, ticker = securities.get(unique, (None, None))
        fees = [_number(trade.value(f)) for f in ("FEES", "COMMISSION", "TAXES", "LOAD")]
        out.investments.append({
            "id": fitid or f"{name}:{tx.tag}:{len(out.investments) + 1}",
            "date": day,
            "account": account,
            "action": action,
            "type": tx.tag,
            "security": security or unique,
            "ticker": ticker,
            "units": _number(trade.value("UNITS") or tx.value("UNITS")),
            "unit_price": _number(trade.value("UNITPRICE") or tx.value("UNITPRICE")),
            "total": _number(trade.value("TOTAL") or tx.value("TOTAL")),
            "fees": round(sum(f for f in fees if f is not None), 2),
            "income_type": tx.value("INCOMETYPE"),
            "currency": _currency(trade, currency),
            "memo": (invtran.value("MEMO") if invtran else None) or "",
        })  # fmt: skip
    positions = statement.find("INVPOSLIST")
    for holding in positions.children if positions is not None else []:
        if holding.tag not in _POSITIONS:
            continue
        pos = holding.find("INVPOS") or holding
        unique = pos.value("SECID", "UNIQUEID")
        security, ticker = securities.get(unique, (None, None))
        out.positions.append({
            "account": account,
            "security": security or unique,
            "ticker": ticker,
            "type": holding.tag,
            "units": _number(pos.value("UNITS")),
            "unit_price": _number(pos.value("UNITPRICE")),
            "market_value": _number(pos.value("MKTVAL")),
            "as_of": _day(pos.value("DTPRICEASOF")),
            "currency": _currency(pos, currency),
        })  # fmt: skip
