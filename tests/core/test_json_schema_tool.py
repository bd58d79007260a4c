from __future__ import annotations

from typing import Any

import pytest

from tooldeck.core import JsonSchemaTool, ToolContext
from tooldeck.exceptions import RegistrationError

pytestmark = pytest.mark.anyio

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "City name."},
        "units": {"type": "string", "enum": ["metric", "imperial"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
    },
    "required": ["city"],
    "additionalProperties": False,
}


async def forecast(
    city: str, units: str = "metric", days: int = 3, ctx: ToolContext | None = None
) -> dict[str, Any]:
    return {"city": city, "units": units, "days": days, "user": ctx.user if ctx else None}


async def test_valid_arguments_reach_the_function() -> None:
    weather = JsonSchemaTool(
        name="forecast", description="Weather.", input_schema=SCHEMA, function=forecast
    )
    result = await weather.execute('{"city": "Oslo", "days": 2}', ToolContext(user="u1"))
    assert result.data == {"city": "Oslo", "units": "metric", "days": 2, "user": "u1"}
    assert weather.definition.input_schema == SCHEMA


async def test_errors_read_like_pydantic_tools() -> None:
    weather = JsonSchemaTool(
        name="forecast", description="Weather.", input_schema=SCHEMA, function=forecast
    )
    result = await weather.execute({"units": "kelvin", "days": 30, "zz": 1})
    assert result.error is not None and result.error.type == "validation"
    fields = {e["field"]: e["type"] for e in result.error.details["errors"]}  # type: ignore[index]
    assert fields == {
        "city": "missing",
        "units": "enum",
        "days": "maximum",
        "zz": "extra_forbidden",
    }
    assert "city: Field required" in result.error.message
    assert "units: 'kelvin' is not one of ['metric', 'imperial']" in result.error.message
    assert result.error.message.endswith(
        "Arguments: city (string, required), units (one of metric/imperial), days (integer)."
    )


async def test_pass_dict_and_sync_function() -> None:
    seen = []
    tool = JsonSchemaTool(
        name="record",
        description="Record.",
        input_schema={"type": "object", "properties": {"x": {"type": "number"}}},
        function=lambda args: seen.append(args) or len(seen),
        pass_dict=True,
    )
    assert (await tool.execute({"x": 1.5})).data == 1
    assert seen == [{"x": 1.5}]


def test_bad_schemas_are_refused_at_construction() -> None:
    with pytest.raises(RegistrationError, match='must have "type": "object"'):
        JsonSchemaTool(name="t", description="", input_schema={"type": "array"}, function=forecast)
    with pytest.raises(RegistrationError, match="invalid JSON Schema at properties/x"):
        JsonSchemaTool(
            name="t",
            description="",
            input_schema={"type": "object", "properties": {"x": {"type": "nope"}}},
            function=forecast,
        )
