"""``math``: evaluate, simplify, solve, differentiate and integrate with SymPy (seed 000).

Expressions never reach ``eval``: ``parse_math`` walks Python's ``ast`` of the text
and builds the SymPy expression itself from an allow-list of nodes (numbers, names,
arithmetic, calls of known functions), so ``__import__('os').system('id')`` is a
``validation`` error, not a process.

Symbolic math can run away (``(9^9999)^9999``, ``factorial(x)`` with ``x = 1e9``) and
holds the GIL while it does, so given a ``Sandbox`` the tool computes in the
sandbox's forked process, killed at its time or CPU limit, or when the caller's
policy timeout cancels the call; the server stays responsive. ``run_action`` is what
that process runs.

Example::

    await tool.execute({"action": "solve", "expression": "x^2 - 5x + 6 = 0"})
    # data: {"solutions": ["2", "3"], "steps": [...], ...}
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from tooldeck.core.composite import ActionStrategy, CompositeTool
from tooldeck.core.context import EMPTY_CONTEXT, ToolContext
from tooldeck.core.definition import ToolAnnotations
from tooldeck.core.result import ToolResult
from tooldeck.exceptions import InvalidArgumentsError, ToolFailure, ToolUnavailableError

if TYPE_CHECKING:
    from tooldeck.isolation.sandbox import Sandbox, SandboxLimits

__all__ = ["MathTool", "parse_math", "run_action"]

MAX_CHARS = 1000
MAX_NODES = 400
MAX_EXPONENT = 10_000
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,30}$")
_IMPLICIT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?![eE][+-]?\d)\s*(?=[A-Za-z(])")


def _sympy() -> Any:
    try:
        import sympy
    except ImportError:
        raise ToolUnavailableError(
            "math needs SymPy: pip install 'tooldeck[builtin]'", retryable=False
        ) from None
    return sympy


def _names(sp: Any) -> tuple[dict[str, Callable[..., Any]], dict[str, Any]]:
    functions = {
        name: getattr(sp, name)
        for name in (
            "sin",
            "cos",
            "tan",
            "cot",
            "sec",
            "csc",
            "asin",
            "acos",
            "atan",
            "atan2",
            "sinh",
            "cosh",
            "tanh",
            "asinh",
            "acosh",
            "atanh",
            "exp",
            "log",
            "sqrt",
            "factorial",
            "floor",
            "ceiling",
            "gamma",
            "binomial",
            "Abs",
            "Min",
            "Max",
            "sign",
            "re",
            "im",
            "conjugate",
        )
    }
    functions.update({"ln": sp.log, "abs": sp.Abs, "min": sp.Min, "max": sp.Max})
    constants = {"pi": sp.pi, "E": sp.E, "e": sp.E, "I": sp.I, "oo": sp.oo, "inf": sp.oo}
    return functions, constants


def parse_math(text: str, field: str = "expression") -> Any:
    """Parse one expression or equation (``lhs = rhs``) into SymPy, without ``eval``.

    Accepts numbers, variable names, ``+ - * / // % **`` (``^`` means power), unary
    signs, implicit products of a number and a name (``2x``), calls of the functions
    ``sin, cos, …, sqrt, log/ln, exp, factorial, Abs …`` and the constants ``pi, E/e,
    I, oo``. Anything else (attributes, subscripts, strings, lambdas, keywords,
    dunder names) is refused.

    Raises:
        InvalidArgumentsError: the text is empty, too long, not an expression, uses
            anything outside the list above, or asks for a number too large to compute
            (an exponent or factorial argument over 10,000).
        ToolUnavailableError: SymPy is not installed.
    """
    sp = _sympy()
    text = text.strip()
    if not text:
        raise InvalidArgumentsError.for_field(field, "the expression is empty")
    if len(text) > MAX_CHARS:
        raise InvalidArgumentsError.for_field(
            field, f"the expression is longer than {MAX_CHARS} characters"
        )
    if "__" in text:
        raise InvalidArgumentsError.for_field(
            field, "double underscores are not allowed in expressions"
        )
    source = _IMPLICIT.sub(r"\1*", text.replace("^", "**"))
    sides = re.split(r"(?<![=<>!])=(?!=)", source)
    if len(sides) > 2:
        raise InvalidArgumentsError.for_field(field, "an equation has one '=' sign")
    built = [_build(side, field, sp) for side in sides]
    if len(built) == 2:
        return sp.Eq(built[0], built[1], evaluate=False)
    return built[0]


def _build(source: str, field: str, sp: Any) -> Any:
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError as exc:
        raise InvalidArgumentsError.for_field(
            field, f"not a valid expression ({exc.msg} at column {exc.offset})"
        ) from None
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise InvalidArgumentsError.for_field(
            field, f"the expression has more than {MAX_NODES} parts"
        )
    functions, constants = _names(sp)
    binary: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
        ast.Add: lambda a, b: a + b,
        ast.Sub: lambda a, b: a - b,
        ast.Mult: lambda a, b: a * b,
        ast.Div: lambda a, b: a / b,
        ast.FloorDiv: lambda a, b: sp.floor(a / b),
        ast.Mod: lambda a, b: sp.Mod(a, b),
    }

    def power(base: Any, exponent: Any) -> Any:
        if exponent.is_number and base.is_number and abs(exponent) > MAX_EXPONENT:
            raise InvalidArgumentsError.for_field(
                field, f"the exponent {exponent} is too large (limit {MAX_EXPONENT})"
            )
        return base**exponent

    def build(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return build(node.body)
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise InvalidArgumentsError.for_field(field, f"{value!r} is not a number")
            if isinstance(value, int) and len(str(abs(value))) > 100:
                raise InvalidArgumentsError.for_field(
                    field, "integers longer than 100 digits are not accepted"
                )
            return sp.Integer(value) if isinstance(value, int) else sp.Float(repr(value))
        if isinstance(node, ast.Name):
            if node.id in constants:
                return constants[node.id]
            if node.id in functions:
                raise InvalidArgumentsError.for_field(
                    field, f"{node.id} is a function; call it, e.g. {node.id}(x)"
                )
            if not _NAME.match(node.id):
                raise InvalidArgumentsError.for_field(
                    field, f"{node.id!r} is not an accepted variable name"
                )
            return sp.Symbol(node.id)
        if isinstance(node, ast.BinOp):
            left, right = build(node.left), build(node.right)
            if isinstance(node.op, ast.Pow):
                return power(left, right)
            operation = binary.get(type(node.op))
            if operation is None:
                raise InvalidArgumentsError.for_field(
                    field, f"the operator {type(node.op).__name__} is not allowed"
                )
            return operation(left, right)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            operand = build(node.operand)
            return -operand if isinstance(node.op, ast.USub) else operand
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in functions:
                shown = ast.unparse(node.func)
                raise InvalidArgumentsError.for_field(
                    field,
                    f"{shown!r} is not an allowed function; allowed: "
                    f"{', '.join(sorted(functions))}",
                )
            if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
                raise InvalidArgumentsError.for_field(
                    field, "functions take plain positional arguments only"
                )
            args = [build(a) for a in node.args]
            if (
                node.func.id == "factorial"
                and args
                and args[0].is_number
                and abs(args[0]) > MAX_EXPONENT
            ):
                raise InvalidArgumentsError.for_field(
                    field, f"factorial of more than {MAX_EXPONENT} is not computed"
                )
            try:
                return functions[node.func.id](*args)
            except (TypeError, ValueError) as exc:
                raise InvalidArgumentsError.for_field(field, f"{node.func.id}: {exc}") from None
        raise InvalidArgumentsError.for_field(
            field,
            f"{type(node).__name__} ({ast.unparse(node)!r}) is not allowed; use numbers, "
            "variables, + - * / ^ and functions such as sin, sqrt, log",
        )

    return build(tree)


class _MathRequest(BaseModel):
    expression: str = Field(
        max_length=MAX_CHARS,
        description="Math in plain notation, e.g. `x^2 - 5x + 6 = 0`, `sin(x)*exp(x)`.",
    )
    show_steps: bool = Field(True, description="Explain the steps taken.")


class EvaluateRequest(_MathRequest):
    """Arguments of ``evaluate``."""

    values: dict[str, float] = Field(
        default_factory=dict, description='Values of variables, e.g. {"x": 2}.'
    )
    precision: int = Field(15, ge=1, le=100, description="Significant digits of the number.")


class VariableRequest(_MathRequest):
    """Arguments of ``solve``, ``differentiate`` and ``integrate``."""

    variable: str | None = Field(
        None, description="The variable; default: the only one in the expression."
    )


class DifferentiateRequest(VariableRequest):
    """Arguments of ``differentiate``."""

    order: int = Field(1, ge=1, le=10, description="How many times to differentiate.")


class IntegrateRequest(VariableRequest):
    """Arguments of ``integrate``."""

    lower: str | None = Field(
        None, max_length=MAX_CHARS, description="Lower bound of a definite integral."
    )
    upper: str | None = Field(
        None, max_length=MAX_CHARS, description="Upper bound of a definite integral."
    )


def _variable(expr: Any, name: str | None, sp: Any) -> Any:
    free = sorted(expr.free_symbols, key=str)
    if name is not None:
        if not _NAME.match(name):
            raise InvalidArgumentsError.for_field("variable", f"{name!r} is not a variable name")
        return sp.Symbol(name)
    if len(free) == 1:
        return free[0]
    if not free:
        raise InvalidArgumentsError.for_field("variable", "the expression has no variable")
    raise InvalidArgumentsError.for_field(
        "variable", f"the expression has several variables ({', '.join(map(str, free))}); name one"
    )


def _answer(
    sp: Any, expr: Any, result: Any, steps: list[str], show: bool, **extra: Any
) -> dict[str, Any]:
    numeric = None
    if getattr(result, "is_number", False):
        try:
            value = complex(sp.N(result))
            numeric = value.real if value.imag == 0 else None
        except (TypeError, ValueError):
            numeric = None
    return {
        "expression": str(expr),
        "result": str(result),
        "latex": sp.latex(result),
        "numeric": numeric,
        "steps": steps if show else [],
        **extra,
    }


class Evaluate(ActionStrategy):
    """Compute a value."""

    name = "evaluate"
    description = "Compute the value of an expression, with variables substituted."
    RequestModel = EvaluateRequest

    def run(self, request: EvaluateRequest, ctx: ToolContext) -> dict[str, Any]:
        """Return the exact and numeric value."""
        sp = _sympy()
        expr = parse_math(request.expression)
        subs = {sp.Symbol(k): sp.nsimplify(v) for k, v in request.values.items() if _NAME.match(k)}
        steps = [f"parse: {expr}"]
        value = expr.subs(subs) if subs else expr
        if subs:
            steps.append(
                f"substitute {', '.join(f'{k}={v}' for k, v in request.values.items())}: {value}"
            )
        exact = sp.simplify(value)
        steps.append(f"simplify: {exact}")
        missing = sorted(map(str, exact.free_symbols))
        if missing:
            raise InvalidArgumentsError.for_field(
                "values", f"no value given for {', '.join(missing)}"
            )
        number = sp.N(exact, request.precision)
        steps.append(f"numeric value: {number}")
        return _answer(sp, expr, exact, steps, request.show_steps, value=str(number))


class Simplify(ActionStrategy):
    """Simplify an expression."""

    name = "simplify"
    description = "Simplify an expression (also shows its expanded and factored forms)."
    RequestModel = _MathRequest

    def run(self, request: _MathRequest, ctx: ToolContext) -> dict[str, Any]:
        """Return the simplest form found."""
        sp = _sympy()
        expr = parse_math(request.expression)
        expanded, factored, simplest = sp.expand(expr), sp.factor(expr), sp.simplify(expr)
        steps = [
            f"parse: {expr}",
            f"expand: {expanded}",
            f"factor: {factored}",
            f"simplify: {simplest}",
        ]
        return _answer(
            sp,
            expr,
            simplest,
            steps,
            request.show_steps,
            expanded=str(expanded),
            factored=str(factored),
        )


class Solve(ActionStrategy):
    """Solve an equation."""

    name = "solve"
    description = "Solve an equation (`lhs = rhs`, or `expr` meaning `expr = 0`) for a variable."
    RequestModel = VariableRequest

    def run(self, request: VariableRequest, ctx: ToolContext) -> dict[str, Any]:
        """Return the solutions."""
        sp = _sympy()
        parsed = parse_math(request.expression)
        equation = parsed if isinstance(parsed, sp.Equality) else sp.Eq(parsed, 0)
        if not isinstance(equation, sp.Equality):  # sympy decided it outright: 1/0 = 0
            raise InvalidArgumentsError.for_field(
                "expression",
                f"{request.expression!r} is {equation} for every value: nothing to solve",
            )
        zero = sp.simplify(equation.lhs - equation.rhs)
        variable = _variable(zero, request.variable, sp)
        solutions = sp.solve(zero, variable)
        steps = [
            f"equation: {equation.lhs} = {equation.rhs}",
            f"move every term to one side: {zero} = 0",
            f"factor: {sp.factor(zero)} = 0",
            f"solutions for {variable}: {', '.join(map(str, solutions)) or 'none'}",
        ]
        return _answer(
            sp,
            equation,
            sp.FiniteSet(*solutions),
            steps,
            request.show_steps,
            variable=str(variable),
            solutions=[str(s) for s in solutions],
        )


class Differentiate(ActionStrategy):
    """Differentiate an expression."""

    name = "differentiate"
    description = "Differentiate an expression with respect to a variable."
    RequestModel = DifferentiateRequest

    def run(self, request: DifferentiateRequest, ctx: ToolContext) -> dict[str, Any]:
        """Return the derivative."""
        sp = _sympy()
        expr = parse_math(request.expression)
        variable = _variable(expr, request.variable, sp)
        steps = [f"f({variable}) = {expr}"]
        current = expr
        for n in range(1, request.order + 1):
            current = sp.diff(current, variable)
            steps.append(
                f"d^{n}/d{variable}^{n}: {current}" if n > 1 else f"d/d{variable}: {current}"
            )
        simplest = sp.simplify(current)
        if simplest != current:
            steps.append(f"simplified: {simplest}")
        return _answer(
            sp,
            expr,
            current,
            steps,
            request.show_steps,
            variable=str(variable),
            simplified=str(simplest),
        )


class Integrate(ActionStrategy):
    """Integrate an expression."""

    name = "integrate"
    description = "Integrate an expression (definite with `lower` and `upper`)."
    RequestModel = IntegrateRequest

    def run(self, request: IntegrateRequest, ctx: ToolContext) -> dict[str, Any]:
        """Return the antiderivative or the definite integral."""
        sp = _sympy()
        expr = parse_math(request.expression)
        variable = _variable(expr, request.variable, sp)
        antiderivative = sp.integrate(expr, variable)
        steps = [f"∫ {expr} d{variable} = {antiderivative} + C"]
        if (request.lower is None) != (request.upper is None):
            raise InvalidArgumentsError.for_field(
                "upper" if request.upper is None else "lower", "give both bounds or neither"
            )
        if request.lower is None or request.upper is None:
            return _answer(
                sp, expr, antiderivative, steps, request.show_steps, variable=str(variable)
            )
        lower, upper = parse_math(request.lower, "lower"), parse_math(request.upper, "upper")
        value = sp.simplify(
            antiderivative.subs(variable, upper) - antiderivative.subs(variable, lower)
        )
        if antiderivative.has(sp.Integral) or value.has(sp.nan):
            value = sp.integrate(expr, (variable, lower, upper))
        steps.append(f"evaluate from {lower} to {upper}: {value}")
        return _answer(sp, expr, value, steps, request.show_steps, variable=str(variable))


class MathTool(CompositeTool):
    """Exact math on SymPy: evaluate, simplify, solve, differentiate, integrate.

    Semantics:
        Every expression goes through ``parse_math`` (no ``eval``). Results carry the
        SymPy text, LaTeX, a float when the result is a real number, and the steps
        when ``show_steps`` is true. Bad input is a ``validation`` error naming the
        field and what is allowed.
    """

    name = "math"
    source_id = "tool:math:v1"
    description = (
        "Exact math with SymPy. Actions: evaluate (expression, values), simplify, solve "
        "(an equation like `x^2 - 4 = 0`), differentiate (order), integrate (lower, "
        "upper for a definite integral). Use it instead of doing arithmetic yourself."
    )
    annotations = ToolAnnotations(title="Math", read_only=True, idempotent=True, open_world=False)
    tags = ("builtin", "math")
    actions = (Evaluate(), Simplify(), Solve(), Differentiate(), Integrate())

    def __init__(self, sandbox: Sandbox | None = None, limits: SandboxLimits | None = None) -> None:
        super().__init__()
        self.sandbox = sandbox
        self.limits = limits

    async def execute_internal(
        self, request: tuple[ActionStrategy, BaseModel], ctx: ToolContext
    ) -> Any:
        """Compute in the sandbox's killable process when there is one, else here."""
        if self.sandbox is None or self.limits is None:
            return await super().execute_internal(request, ctx)
        strategy, params = request
        try:
            outcome = await self.sandbox.run(
                f"import {__name__} as _math\nresult = _math.run_action(action, arguments)",
                context={"action": strategy.name, "arguments": params.model_dump(mode="json")},
                cwd=None,
                limits=self.limits,
            )
        except RuntimeError as exc:
            raise ToolUnavailableError(f"math: {exc}") from None
        error = outcome.error
        if error is not None:
            kind = "timeout" if error.kind in ("timeout", "cpu") else "execution"
            return ToolResult.fail(
                kind,
                f"math: {error.message}; simplify the expression or use smaller numbers",
                details={"kind": error.kind, "limit": error.limit},
            )
        answer = outcome.result
        if "error" in answer:
            failure = answer["error"]
            return ToolResult.fail(failure["type"], failure["message"], details=failure["details"])
        return answer["data"]


def run_action(action: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Run one ``math`` action in this process (the sandbox's child calls it).

    Returns:
        ``{"data": ...}``, or ``{"error": {"type", "message", "details"}}`` for a
        ``ToolFailure`` (a missing value, an unparsable expression).
    """
    strategy: ActionStrategy = next(s for s in MathTool.actions if s.name == action)
    try:
        return {
            "data": strategy.run(strategy.RequestModel.model_validate(arguments), EMPTY_CONTEXT)
        }
    except ToolFailure as exc:
        return {"error": {"type": exc.error_type, "message": exc.message, "details": exc.details}}
