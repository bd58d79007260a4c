"""One argument step for every tool kind: strict nulls, maps as pairs, undeclared names."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from tooldeck.core import ActionStrategy, BaseTool, CompositeTool, JsonSchemaTool, ToolContext, tool
from tooldeck.core.arguments import ArgumentShape, check_arguments
from tooldeck.core.validation import compile_schema
from tooldeck.exceptions import InvalidArgumentsError
from tooldeck.exporters import export

pytestmark = pytest.mark.anyio


@tool
def positions(symbol: str, account: str | None = None, limit: int = 10) -> dict[str, Any]:
    """Positions of a symbol, optionally in one account."""
    return {"symbol": symbol, "account": account, "limit": limit}


class Filters(BaseModel):
    """Nested filters."""

    side: str = "long"
    min_value: float = 0.0


class ScanArgs(BaseModel):
    """Arguments of scan."""

    query: str
    filters: Filters | None = None
    weights: dict[str, float] = {}


class Scan(BaseTool[ScanArgs, dict[str, Any]]):
    name = "scan"
    description = "Scan positions."
    RequestModel = ScanArgs
    blocking = False

    def execute_internal(self, request: ScanArgs, ctx: ToolContext) -> dict[str, Any]:
        return request.model_dump()


class OpenArgs(BaseModel):
    """A model that accepts extra arguments."""

    model_config = ConfigDict(extra="allow")
    name: str


class Open(BaseTool[OpenArgs, dict[str, Any]]):
    name = "open"
    description = "Accepts extras."
    RequestModel = OpenArgs
    blocking = False

    def execute_internal(self, request: OpenArgs, ctx: ToolContext) -> dict[str, Any]:
        return request.model_dump()


CONVERT = JsonSchemaTool(
    name="convert",
    description="Convert a number.",
    input_schema={
        "type": "object",
        "properties": {
            "base": {"type": "integer"},
            "unit": {"type": "string", "minLength": 1},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        },
        "required": ["base"],
    },
    function=lambda **kw: kw,
)


class ReadArgs(BaseModel):
    """Read arguments."""

    path: str
    head: int | None = None


class WriteArgs(BaseModel):
    """Write arguments."""

    path: str
    content: str
    overwrite: bool = False


class Read(ActionStrategy):
    name = "read"
    RequestModel = ReadArgs
    blocking = False

    def run(self, request: ReadArgs, ctx: ToolContext) -> dict[str, Any]:
        return request.model_dump()


class Write(ActionStrategy):
    name = "write"
    RequestModel = WriteArgs
    blocking = False

    def run(self, request: WriteArgs, ctx: ToolContext) -> dict[str, Any]:
        return request.model_dump()


class Files(CompositeTool):
    name = "files"
    description = "Read or write."
    actions = (Read(), Write())


async def test_strict_nulls_mean_not_given_for_every_tool_kind() -> None:
    result = await positions.execute('{"symbol": "AAPL", "account": null, "limit": null}')
    assert result.data == {"symbol": "AAPL", "account": None, "limit": 10}
    result = await CONVERT.execute({"base": 10, "unit": None, "labels": None})
    assert result.success and result.data == {"base": 10}
    # a strict model sends every merged property of a composite: the other action's are null
    result = await Files().execute(
        {"action": "read", "path": "a.txt", "head": None, "content": None, "overwrite": None}
    )
    assert result.data == {"action": "read", "path": "a.txt", "head": None}
    result = await Scan().execute(
        {"query": "q", "filters": {"side": None, "min_value": 5}, "weights": None}
    )
    assert result.data == {
        "query": "q",
        "filters": {"side": "long", "min_value": 5.0},
        "weights": {},
    }


async def test_a_map_sent_as_key_value_pairs_is_the_map() -> None:
    pairs = [{"key": "AAPL", "value": 0.5}, {"key": "MSFT", "value": 0.25}]
    result = await Scan().execute({"query": "q", "weights": pairs})
    assert result.data["weights"] == {"AAPL": 0.5, "MSFT": 0.25}  # type: ignore[index]
    result = await CONVERT.execute({"base": 2, "labels": [{"key": "a", "value": "b"}]})
    assert result.data == {"base": 2, "labels": {"a": "b"}}
    # a client that is not strict sends the map itself
    result = await Scan().execute({"query": "q", "weights": {"AAPL": 1}})
    assert result.data["weights"] == {"AAPL": 1.0}  # type: ignore[index]


@pytest.mark.parametrize(
    ("make", "arguments", "field", "hint"),
    [
        (lambda: positions, {"symbol": "AAPL", "acount": "joint"}, "acount", "account"),
        (lambda: Scan(), {"query": "q", "filters": {"sid": "short"}}, "filters.sid", "side"),
        (lambda: CONVERT, {"base": 1, "units": "m"}, "units", "unit"),
        (lambda: Files(), {"action": "read", "path": "x", "haed": 3}, "haed", "head"),
        (lambda: Files(), {"action": "read", "path": "x", "content": "hi"}, "content", None),
    ],
)
async def test_an_undeclared_argument_is_a_validation_error_with_a_hint(
    make: Any, arguments: dict[str, Any], field: str, hint: str | None
) -> None:
    result = await make().execute(arguments)
    assert result.error is not None and result.error.type == "validation"
    errors = result.error.details["errors"]  # type: ignore[index]
    assert {"field": field, "type": "extra_forbidden"}.items() <= errors[0].items()
    assert f"{field}: unexpected argument" in result.error.message
    if hint:
        assert f"did you mean {hint!r}?" in result.error.message


async def test_undeclared_names_are_reported_with_the_other_errors() -> None:
    result = await positions.execute({"acount": "joint"})
    assert result.error is not None
    fields = {e["field"]: e["type"] for e in result.error.details["errors"]}  # type: ignore[index]
    assert fields == {"acount": "extra_forbidden", "symbol": "missing"}


async def test_a_tool_that_declares_extras_accepts_them() -> None:
    result = await Open().execute({"name": "n", "colour": "red"})
    assert result.data == {"name": "n", "colour": "red"}
    open_schema = JsonSchemaTool(
        name="open_json",
        description="Open.",
        input_schema={
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "additionalProperties": True,
        },
        function=lambda **kw: kw,
    )
    assert (await open_schema.execute({"a": "x", "b": 2})).data == {"a": "x", "b": 2}


def test_nulls_the_schema_allows_are_kept() -> None:
    shape = ArgumentShape.of(
        {
            "type": "object",
            "properties": {"a": {"type": ["string", "null"]}, "b": {"type": "string"}},
            "required": ["b"],
        }
    )
    assert shape.normalize({"a": None, "b": "x"}) == ({"a": None, "b": "x"}, [])


def test_recursive_schemas_compile_and_normalize() -> None:
    schema = {
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/node"}},
        "$defs": {
            "node": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
                },
            }
        },
    }
    shape = ArgumentShape.of(schema)
    value = {"root": {"name": None, "children": [{"name": "a", "nmae": "b"}]}}
    out, errors = shape.normalize(value)
    assert out == {"root": {"children": [{"name": "a"}]}}
    assert [e.field for e in errors] == ["root.children.0.nmae"]


def test_strict_export_never_gives_a_closed_empty_object() -> None:
    (exported,) = export([Scan().definition], "openai")
    weights = exported["function"]["parameters"]["properties"]["weights"]
    assert weights["type"] == ["array", "null"]
    assert weights["items"]["properties"]["value"] == {"type": "number"}
    (convert,) = export([CONVERT.definition], "openai")
    unit = convert["function"]["parameters"]["properties"]["unit"]
    assert unit == {"type": ["string", "null"], "description": "Not empty."}
    (gemini,) = export([CONVERT.definition], "gemini")
    labels = gemini["parameters"]["properties"]["labels"]
    assert labels["type"] == "array" and labels["items"]["properties"]["key"] == {"type": "string"}


def test_data_deeper_than_a_recursive_schema_can_walk_is_a_validation_error() -> None:
    """The path MCP upstream tools and JsonSchemaTool share never raises RecursionError."""
    schema = {
        "type": "object",
        "properties": {"n": {"$ref": "#/$defs/node"}},
        "$defs": {"node": {"type": "object", "properties": {"c": {"$ref": "#/$defs/node"}}}},
    }
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(900):
        node["c"] = {}
        node = node["c"]
    with pytest.raises(InvalidArgumentsError, match="nested too deeply"):
        check_arguments("t", schema, compile_schema(schema), {"n": deep})
