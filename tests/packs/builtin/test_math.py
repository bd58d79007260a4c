"""``math``: SymPy operations and an injection suite that must never execute."""

from __future__ import annotations

import pytest

from tooldeck.packs.builtin import MathTool

pytestmark = pytest.mark.anyio

sympy = pytest.importorskip("sympy")


@pytest.fixture
def math() -> MathTool:
    return MathTool()


async def test_solve_with_steps(math: MathTool) -> None:
    result = await math.execute({"action": "solve", "expression": "x^2 - 5x + 6 = 0"})
    assert result.success, result.error
    assert result.data["solutions"] == ["2", "3"] and result.data["variable"] == "x"
    assert any("factor: (x - 3)*(x - 2)" in step for step in result.data["steps"])


async def test_evaluate_simplify_differentiate_integrate(math: MathTool) -> None:
    evaluated = await math.execute(
        {"action": "evaluate", "expression": "2x + y^2", "values": {"x": 1.5, "y": 2}}
    )
    assert evaluated.data["numeric"] == 7.0
    exact = await math.execute(
        {"action": "evaluate", "expression": "1/3 + 1/6", "show_steps": False}
    )
    assert exact.data["result"] == "1/2" and exact.data["steps"] == []
    simplified = await math.execute({"action": "simplify", "expression": "(x^2 - 1)/(x - 1)"})
    assert simplified.data["result"] == "x + 1"
    derivative = await math.execute({"action": "differentiate", "expression": "sin(x)*exp(x)"})
    assert derivative.data["result"] == "exp(x)*sin(x) + exp(x)*cos(x)"
    assert derivative.data["simplified"] == "sqrt(2)*exp(x)*sin(x + pi/4)"
    second = await math.execute({"action": "differentiate", "expression": "x^3", "order": 2})
    assert second.data["result"] == "6*x"
    area = await math.execute(
        {"action": "integrate", "expression": "x^2", "lower": "0", "upper": "3"}
    )
    assert area.data["result"] == "9" and area.data["numeric"] == 9.0
    antiderivative = await math.execute({"action": "integrate", "expression": "cos(t)"})
    assert antiderivative.data["result"] == "sin(t)"


async def test_ambiguous_variable_and_missing_values_are_named(math: MathTool) -> None:
    both = await math.execute({"action": "solve", "expression": "x + y = 3"})
    assert both.error is not None and "several variables (x, y)" in both.error.message
    missing = await math.execute({"action": "evaluate", "expression": "x + 1"})
    assert missing.error is not None and "no value given for x" in missing.error.message


INJECTIONS = [
    "__import__('os').system('id')",
    "().__class__.__bases__[0].__subclasses__()",
    "eval('1+1')",
    "exec('import os')",
    "open('/etc/passwd').read()",
    "x.__class__",
    "lambda: 1",
    "[c for c in ().__class__.__mro__]",
    "sympy.sympify('1')",
    "getattr(x, 'evalf')",
    "os.system('id')",
    "'a' * 10",
    "x[0]",
    "sin(x, evaluate=False)",
    "(lambda f: f)(1)",
    "9**9**9**9",
    "factorial(10**9)",
    "globals()",
    "breakpoint()",
    "x if 1 else y",
]


@pytest.mark.parametrize("expression", INJECTIONS)
async def test_injections_are_validation_errors(math: MathTool, expression: str) -> None:
    result = await math.execute({"action": "simplify", "expression": expression})
    assert result.error is not None and result.error.type == "validation", result
    assert result.error.message.startswith("expression:")
