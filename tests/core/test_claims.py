"""Bound claims: a figure's span, the pointer it comes from, and the check (issue 29)."""

from __future__ import annotations

import pytest

from tooldeck.core.claims import (
    Claim,
    ClaimWriter,
    Formula,
    PointerError,
    check_claims,
    resolve_pointer,
)
from tooldeck.core.result import ToolResult

DATA = {
    "tool:quotes:v1": {"quotes": [{"symbol": "AAPL", "price": 228.4217}]},
    "tool:positions:v1": {
        "positions": [
            {"symbol": "AAPL", "account": "individual", "quantity": 42, "cost_basis": 150.25},
            {"symbol": "AAPL", "account": "joint", "quantity": 8, "cost_basis": 171.0},
        ],
        "a/b": {"~x": 7},
    },
}
RESULTS = [
    ToolResult.ok(data, source_id=source).with_metadata(request_id=f"r{i}")
    for i, (source, data) in enumerate(DATA.items())
]


def test_a_pointer_follows_keys_indexes_and_escapes() -> None:
    positions = DATA["tool:positions:v1"]
    assert resolve_pointer(positions, "/positions/1/quantity") == 8
    assert resolve_pointer(positions, "/a~1b/~0x") == 7
    assert resolve_pointer(positions, "") is positions
    with pytest.raises(PointerError, match="index 2 of a list of 2"):
        resolve_pointer(positions, "/positions/2/quantity")
    with pytest.raises(PointerError, match="no 'qty' in dict"):
        resolve_pointer(positions, "/positions/0/qty")
    with pytest.raises(PointerError, match="starts with /"):
        resolve_pointer(positions, "positions")


def test_the_writer_records_each_figures_span_in_the_finished_text() -> None:
    writer = ClaimWriter()
    price = writer.figure("$228.42", "tool:quotes:v1", "/quotes/0/price", kind="money")
    held = writer.figure("50", "tool:positions:v1", op="sum",
                         inputs=("/positions/0/quantity", "/positions/1/quantity"))  # fmt: skip
    markdown, claims = writer.finish(f"**AAPL** is at {price}; you hold {held} shares.")
    assert markdown == "**AAPL** is at $228.42; you hold 50 shares."
    assert [markdown[slice(*c.span)] for c in claims] == ["$228.42", "50"]
    assert claims[0].pointer == "/quotes/0/price" and claims[1].op == "sum"
    assert check_claims(markdown, claims, RESULTS) == []


@pytest.mark.parametrize(
    ("text", "claim", "says"),
    [
        ("AAPL is at $230.00", Claim(span=(11, 18), source_id="tool:quotes:v1",
         pointer="/quotes/0/price"), "says 230; tool:quotes:v1/quotes/0/price is 228.422"),
        ("AAPL is at $228.4", Claim(span=(11, 17), source_id="tool:quotes:v1",
         pointer="/quotes/0/price"), ""),  # one decimal written: 228.35 to 228.45
        ("AAPL is at $228.5", Claim(span=(11, 17), source_id="tool:quotes:v1",
         pointer="/quotes/0/price"), "says 228.5"),
        ("You hold 42 shares", Claim(span=(9, 11), source_id="tool:positions:v1",
         pointer="/positions/1/quantity"), "says 42; tool:positions:v1/positions/1/quantity is 8"),
        ("You hold 42 shares", Claim(span=(9, 11), source_id="tool:news:v1",
         pointer="/x"), "tool:news:v1 is not a result of this run"),
        ("You hold 42 shares", Claim(span=(0, 3), source_id="tool:positions:v1",
         pointer="/positions/0/quantity"), "states no number"),
        ("You hold 42", Claim(span=(9, 40), source_id="tool:positions:v1",
         pointer="/positions/0/quantity"), "outside the answer"),
        ("Worth -$23.40", Claim(span=(6, 13), source_id="tool:positions:v1",
         op="difference", inputs=("/positions/0/quantity", "/positions/1/cost_basis")),
         "says -23.4"),
        ("Cost 6,310.50", Claim(span=(5, 13), source_id="tool:positions:v1",
         op="product", inputs=("/positions/0/quantity", "/positions/0/cost_basis")), ""),
    ],
)  # fmt: skip
def test_a_claim_is_checked_against_the_value_at_its_pointer(
    text: str, claim: Claim, says: str
) -> None:
    problems = check_claims(text, [claim], RESULTS)
    if not says:
        assert problems == []
    else:
        assert len(problems) == 1 and says in problems[0], problems


def test_a_claim_of_a_source_called_twice_holds_in_the_result_it_names_or_in_any() -> None:
    later = ToolResult.ok({"quotes": [{"price": 305.44}]}, source_id="tool:quotes:v1")
    results = [*RESULTS, later.with_metadata(request_id="r9")]
    first = Claim(span=(0, 7), source_id="tool:quotes:v1", pointer="/quotes/0/price", result="r0")
    assert check_claims("$228.42", [first], results) == []
    assert "is 228.42" in check_claims("$305.44", [first], results)[0]  # r0 is named
    unnamed = first.model_copy(update={"result": None})  # any result of the source
    assert check_claims("$228.42", [unnamed], results) == []
    assert check_claims("$305.44", [unnamed], results) == []
    assert "is 305.44" in check_claims("$999.99", [unnamed], results)[0]  # the last, named


P_L = Formula(  # 42 × 228.4217 − 42 × 150.25, each rounded to cents, as the router writes it
    op="difference",
    inputs=(
        Formula(op="product", inputs=("/positions/0/quantity", "tool:quotes:v1#/quotes/0/price"),
                decimals=2),
        Formula(op="product", inputs=("/positions/0/quantity", "/positions/0/cost_basis"),
                decimals=2),
    ),
    decimals=2,
)  # fmt: skip


@pytest.mark.parametrize(
    ("text", "claim", "says"),
    [
        ("P/L +$3,283.21", Claim(span=(4, 14), source_id="tool:positions:v1", op=P_L.op,
         inputs=P_L.inputs, decimals=2), ""),
        ("P/L +$3,283.20", Claim(span=(4, 14), source_id="tool:positions:v1", op=P_L.op,
         inputs=P_L.inputs, decimals=2), "says 3283.2; tool:positions:v1difference(product("),
        ("2 positions", Claim(span=(0, 1), source_id="tool:positions:v1", op="count",
         inputs=("/positions",)), ""),
        ("3 positions", Claim(span=(0, 1), source_id="tool:positions:v1", op="count",
         inputs=("/positions",)), "says 3"),
        ("Joint Account holds", Claim(span=(0, 13), source_id="tool:positions:v1",
         pointer="/positions/1/account"), ""),  # through its display name
        ("Individual holds", Claim(span=(0, 10), source_id="tool:positions:v1",
         pointer="/positions/1/account"), "says 'Individual'; the value is 'joint'"),
        ("a BUY of", Claim(span=(2, 5), source_id="tool:activity:v1",
         pointer="/trades/0/side"), ""),
        ("a SELL of", Claim(span=(2, 6), source_id="tool:activity:v1",
         pointer="/trades/0/side"), "says 'SELL'; the value is 'BUY'"),
        ("on 2026-11-14.", Claim(span=(3, 13), source_id="tool:activity:v1",
         pointer="/trades/0/timestamp", kind="date"), ""),
        ("on 2026-11-13.", Claim(span=(3, 13), source_id="tool:activity:v1",
         pointer="/trades/0/timestamp", kind="date"), "the date is 2026-11-14"),
        ("it rose", Claim(span=(3, 7), source_id="tool:activity:v1",
         pointer="/trades/0/change", kind="sign"), "says 'rose'; the value is -1.5"),
        ("it fell", Claim(span=(3, 7), source_id="tool:activity:v1",
         pointer="/trades/0/change", kind="sign"), ""),
        ("the price is BUY", Claim(span=(13, 16), source_id="tool:activity:v1",
         pointer="/trades/0/change"), "states no number"),
        ("P/L $3", Claim(span=(4, 6), source_id="tool:positions:v1", op="sum",
         inputs=("tool:news:v1#/x",)), "tool:news:v1 is not a result of this run"),
    ],
)  # fmt: skip
def test_derived_categorical_date_and_sign_claims(text: str, claim: Claim, says: str) -> None:
    activity = ToolResult.ok(
        {"trades": [{"side": "BUY", "timestamp": "2026-11-14T15:30:00Z", "change": -1.5}]},
        source_id="tool:activity:v1",
    )
    problems = check_claims(text, [claim], [*RESULTS, activity], {"Joint Account": "joint"})
    if not says:
        assert problems == []
    else:
        assert len(problems) == 1 and says in problems[0], problems


def test_a_claim_lists_every_source_its_formula_reads() -> None:
    claim = Claim(span=(0, 1), source_id="tool:positions:v1", op=P_L.op, inputs=P_L.inputs)
    assert claim.sources() == {"tool:positions:v1", "tool:quotes:v1"}
