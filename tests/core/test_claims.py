"""Bound claims: a figure's span, the pointer it comes from, and the check (issue 29)."""

from __future__ import annotations

import pytest

from tooldeck.core.claims import Claim, ClaimWriter, PointerError, check_claims, resolve_pointer
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


def test_a_claim_names_its_result_when_two_share_a_source() -> None:
    later = ToolResult.ok({"quotes": [{"price": 305.44}]}, source_id="tool:quotes:v1")
    results = [*RESULTS, later.with_metadata(request_id="r9")]
    first = Claim(span=(0, 7), source_id="tool:quotes:v1", pointer="/quotes/0/price", result="r0")
    assert check_claims("$228.42", [first], results) == []
    unnamed = first.model_copy(update={"result": None})  # the last one: 305.44
    assert "is 305.44" in check_claims("$228.42", [unnamed], results)[0]
