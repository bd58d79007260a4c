"""``signature_schema`` writes exactly what Pydantic writes, or declines.

Each case compares the JSON text (so key order counts) with
``strip_titles(create_model(...).model_json_schema())``, the schema ``@tool`` built
before, on a grid of types and defaults and on the annotated functions of libraries
installed here (written by other people, for other purposes).
"""

from __future__ import annotations

import importlib
import inspect
import itertools
import json
import typing
from datetime import date
from typing import Any, Literal, Optional

import pytest
from pydantic import BaseModel, ConfigDict, Field, create_model

from tooldeck.core import tool
from tooldeck.core.schema import strip_titles
from tooldeck.core.signature_schema import REQUIRED, Parameter, signature_schema


class Address(BaseModel):
    """A postal address."""

    street: str
    city: str = Field(description="The city.")
    zip: str | None = None


class Country(BaseModel):
    code: Literal["FR", "DE"]


class Shipment(BaseModel):
    """Where it goes, with a model inside a model."""

    to: Address
    country: Country | None = None
    model_config = ConfigDict(json_schema_extra={"examples": [{"to": {"street": "x"}}]})


def pydantic_schema(parameters: list[Parameter]) -> str:
    fields: dict[str, Any] = {
        name: (annotation, Field(... if default is REQUIRED else default, description=doc))
        for name, annotation, default, doc in parameters
    }
    model = create_model("Args", __config__=ConfigDict(extra="forbid"), **fields)
    return json.dumps(strip_titles(model.model_json_schema()))


TYPES_AND_DEFAULTS: list[tuple[Any, list[Any]]] = [
    (str, [REQUIRED, "exact"]),
    (int, [REQUIRED, 10, 0, -3]),
    (float, [REQUIRED, 1.5]),
    (bool, [REQUIRED, False]),
    (Any, [REQUIRED, None, "x", 3]),
    (None, [None]),
    (Literal["exact", "fuzzy", "prefix"], [REQUIRED, "fuzzy"]),
    (Literal["only"], [REQUIRED, "only"]),
    (Literal[1, 2, 3], [REQUIRED, 2]),
    (list[str], [REQUIRED]),
    (list[int] | None, [None]),
    (list, [REQUIRED]),
    (list[Any], [REQUIRED]),
    (typing.List[float], [REQUIRED]),  # noqa: UP006 - the typing alias on purpose
    (dict[str, int], [REQUIRED]),
    (dict[str, Any], [REQUIRED]),
    (dict, [REQUIRED]),
    (dict[str, list[str]], [REQUIRED]),
    (str | None, [REQUIRED, None, "x"]),
    (Optional[int], [None, 5]),  # noqa: UP045 - the typing spelling on purpose
    (None | float, [None]),
    (Literal["a", "b"] | None, [None, "b"]),
    (Address, [REQUIRED]),
    (Address | None, [None]),
    (list[Address], [REQUIRED]),
    (dict[str, Address], [REQUIRED]),
    (Shipment, [REQUIRED]),
    (Shipment | None, [None]),
]


@pytest.mark.parametrize(
    ("annotation", "default", "doc"),
    [
        (annotation, default, doc)
        for annotation, defaults in TYPES_AND_DEFAULTS
        for default in defaults
        for doc in (None, "What it is.")
    ],
)
def test_one_parameter_is_written_as_pydantic_writes_it(
    annotation: Any, default: Any, doc: str | None
) -> None:
    parameters: list[Parameter] = [("value", annotation, default, doc)]
    written = signature_schema(parameters)
    assert written is not None, "a recognised type must not decline"
    assert json.dumps(written) == pydantic_schema(parameters)


def test_whole_signatures_are_written_as_pydantic_writes_them() -> None:
    """Every pair of grid entries, in both orders, with and without descriptions."""
    singles = [
        (annotation, default)
        for annotation, defaults in TYPES_AND_DEFAULTS
        for default in defaults[:2]
    ]
    compared = 0
    for (a, da), (b, db) in itertools.permutations(singles[::3], 2):
        parameters: list[Parameter] = [("first", a, da, None), ("second", b, db, "The second.")]
        written = signature_schema(parameters)
        assert written is not None
        assert json.dumps(written) == pydantic_schema(parameters), parameters
        compared += 1
    assert signature_schema([]) is not None
    assert json.dumps(signature_schema([])) == pydantic_schema([])
    assert compared > 50


@pytest.mark.parametrize(
    ("annotation", "default"),
    [
        (int, True),  # a bool where an int is declared
        (float, 1),  # Pydantic may write an int default of a float field differently
        (str, None),  # a sloppy ``x: str = None``
        (float, float("nan")),
        (list[str], ["a"]),  # container defaults
        (Literal[True, False], True),
        (Literal[1, "a"], 1),
        (tuple[int, str], REQUIRED),
        (set[str], REQUIRED),
        (dict[int, str], REQUIRED),
        (int | str, REQUIRED),
        (typing.Annotated[int, Field(gt=0)], REQUIRED),
        (Literal["a"], "b"),
    ],
)
def test_what_it_does_not_know_it_declines(annotation: Any, default: Any) -> None:
    assert signature_schema([("value", annotation, default, None)]) is None


def test_two_models_of_one_name_decline() -> None:
    other = create_model("Address", line=(str, ...))
    assert signature_schema([("a", Address, REQUIRED, None), ("b", other, REQUIRED, None)]) is None


def _installed_functions(modules: list[str]) -> list[tuple[str, list[Parameter]]]:
    found = []
    for module_name in modules:
        module = importlib.import_module(module_name)
        for qualname, function in inspect.getmembers(module):
            if not inspect.isfunction(function) and not inspect.ismethod(function):
                continue
            try:
                hints = typing.get_type_hints(function)
                signature = inspect.signature(function)
            except Exception:
                continue
            parameters: list[Parameter] = []
            for param in signature.parameters.values():
                if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or param.name in (
                    "self",
                    "cls",
                ):
                    break
                parameters.append((param.name, hints.get(param.name, Any), param.default, None))
            else:
                found.append((f"{module_name}.{qualname}", parameters))
    return found


def test_the_annotated_functions_of_installed_libraries_are_written_as_pydantic_writes_them() -> (
    None
):
    """Signatures nobody here wrote: when the writer accepts one, Pydantic agrees."""
    functions = _installed_functions(
        [
            "httpx",
            "typer.main",
            "rich.console",
            "pydantic.json_schema",
            "sqlalchemy.sql.expression",
            "docstring_parser.common",
            "mcp.types",
            "fastapi.routing",
            "anyio",
        ]
    )
    written = 0
    for name, parameters in functions:
        ours = signature_schema(parameters)
        if ours is None:
            continue
        try:
            theirs = pydantic_schema(parameters)
        except Exception:  # Pydantic refuses it (a name it reserves): nothing to compare
            continue
        assert json.dumps(ours) == theirs, name
        written += 1
    print(f"{written} of {len(functions)} signatures written")
    assert written >= 20, f"only {written} of {len(functions)} signatures were recognised"


@pytest.mark.anyio
async def test_a_tool_whose_schema_is_written_builds_its_model_at_the_first_call() -> None:
    @tool
    def search(query: str, limit: int = 10, address: Address | None = None) -> dict[str, Any]:
        """Search.

        Args:
            query: What to look for.
        """
        return {"query": query, "limit": limit, "city": address.city if address else None}

    schema = search.definition.input_schema
    assert schema["properties"]["query"] == {"description": "What to look for.", "type": "string"}
    assert "_request_model" not in search.__dict__  # listed, never called: no model yet
    ok = await search.execute({"query": "q", "address": {"street": "s", "city": "Lyon"}})
    assert ok.data == {"query": "q", "limit": 10, "city": "Lyon"}
    bad = await search.execute({"query": "q", "limit": "many"})
    assert bad.error is not None and bad.error.type == "validation"
    assert "limit" in bad.error.message
    assert search.RequestModel.model_json_schema()["properties"]["limit"]["default"] == 10


def test_a_type_the_writer_does_not_know_takes_pydantics_path_at_registration() -> None:
    @tool
    def on(day: date) -> str:
        return day.isoformat()

    assert "_request_model" in on.__dict__
    assert on.definition.input_schema["properties"]["day"] == {"format": "date", "type": "string"}
