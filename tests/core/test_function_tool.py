from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from tooldeck.core import FunctionTool, ToolContext, tool
from tooldeck.exceptions import RegistrationError

pytestmark = pytest.mark.anyio


def google(symbol: str, days: int = 7) -> dict[str, Any]:
    """Price history of a symbol.

    Uses closing prices.

    Args:
        symbol: Ticker symbol, e.g. AAPL.
        days: How many days back.
    """
    return {"symbol": symbol, "days": days}


def numpy_style(symbol: str, days: int = 7) -> dict[str, Any]:
    """Price history of a symbol.

    Parameters
    ----------
    symbol : str
        Ticker symbol, e.g. AAPL.
    days : int
        How many days back.
    """
    return {"symbol": symbol, "days": days}


def sphinx_style(symbol: str, days: int = 7) -> dict[str, Any]:
    """Price history of a symbol.

    :param symbol: Ticker symbol, e.g. AAPL.
    :param days: How many days back.
    """
    return {"symbol": symbol, "days": days}


@pytest.mark.parametrize("function", [google, numpy_style, sphinx_style])
def test_parameter_descriptions_come_from_any_docstring_style(function: Any) -> None:
    definition = FunctionTool(function).definition
    props = definition.input_schema["properties"]
    assert props["symbol"]["description"] == "Ticker symbol, e.g. AAPL."
    assert props["days"]["description"] == "How many days back."
    assert props["days"]["default"] == 7
    assert definition.input_schema["required"] == ["symbol"]
    assert definition.description.startswith("Price history of a symbol.")


def test_google_long_description_is_kept() -> None:
    assert (
        FunctionTool(google).definition.description
        == "Price history of a symbol.\n\nUses closing prices."
    )


class Out(BaseModel):
    total: float


async def test_context_is_injected_and_hidden_from_the_schema() -> None:
    @tool(name="sum_values", source_id="tool:sum:v1")
    async def add(values: list[float], ctx: ToolContext | None = None) -> Out:
        """Add numbers."""
        assert ctx is not None
        return Out(total=sum(values) + (1000 if ctx.user == "admin" else 0))

    assert list(add.definition.input_schema["properties"]) == ["values"]
    assert add.definition.output_schema == {
        "properties": {"total": {"type": "number"}},
        "required": ["total"],
        "type": "object",
    }
    result = await add.execute({"values": [1, 2.5]}, ToolContext(user="admin"))
    assert result.data == {"total": 1003.5}
    assert result.source_id == "tool:sum:v1"


async def test_sync_function_tool_and_bare_decorator() -> None:
    @tool
    def shout(text: str) -> str:
        """Upper-case text."""
        return text.upper()

    assert shout.name == "shout"
    assert (await shout.execute({"text": "hi"})).data == "HI"
    assert shout.definition.output_schema == {"type": "string"}
    bad = await shout.execute({"text": "hi", "loud": True})
    assert bad.error is not None and "loud: unexpected argument" in bad.error.message


def test_star_args_are_refused() -> None:
    def variadic(*values: int) -> int:
        return sum(values)

    with pytest.raises(RegistrationError, match=r"\*args/\*\*kwargs \(values\)"):
        FunctionTool(variadic)


def test_unschemable_annotation_is_a_registration_error() -> None:
    class Opaque:
        pass

    def takes(thing: Opaque) -> None:
        return None

    with pytest.raises(RegistrationError, match="takes"):
        FunctionTool(takes)


async def test_a_field_as_default_gives_its_examples_bounds_and_default() -> None:
    from pydantic import Field

    @tool
    def quote(symbol: str = Field(examples=["ACME"]), days: int = Field(7, ge=1)) -> str:
        """A quote.

        Args:
            symbol: Ticker symbol.
        """
        return f"{symbol}:{days}"

    schema = quote.definition.input_schema
    assert schema["properties"]["symbol"]["examples"] == ["ACME"]
    assert schema["properties"]["symbol"]["description"] == "Ticker symbol."
    assert schema["required"] == ["symbol"]
    assert (await quote.execute({"symbol": "X"})).data == "X:7"
    bad = await quote.execute({"symbol": "X", "days": 0})
    assert bad.error is not None and "days" in bad.error.message


def test_a_docstring_without_sections_is_read_as_docstring_parser_reads_it() -> None:
    """The fast reading of plain docstrings, on the standard library's own docstrings."""
    import importlib
    import inspect
    import warnings

    import docstring_parser

    from tooldeck.core.function_tool import _SECTION_LINE, _read_docstring

    compared = plain = 0
    modules = ("json", "shutil", "os.path", "textwrap", "statistics", "difflib", "csv", "random")
    modules += (
        "pathlib",
        "inspect",
        "typing",
        "asyncio",
        "subprocess",
        "email.utils",
        "urllib.parse",
    )
    for module_name in modules:
        module = importlib.import_module(module_name)
        for member in [m for m in vars(module).values() if callable(m)]:
            with warnings.catch_warnings():  # a deprecated alias's own lookup warns
                warnings.simplefilter("ignore")
                text = inspect.getdoc(member) or ""
            summary, params = _read_docstring(text)
            doc = docstring_parser.parse(text)
            expected = "\n\n".join(p for p in (doc.short_description, doc.long_description) if p)
            assert (summary, params) == (
                expected,
                {p.arg_name: p.description for p in doc.params},
            ), text
            compared += 1
            plain += not _SECTION_LINE.search(text)
    assert plain > 300, f"{plain} of {compared} docstrings were read the fast way"
