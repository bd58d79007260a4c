from __future__ import annotations

import copy
from typing import Literal

import pytest
from openai.lib._pydantic import _ensure_strict_json_schema, to_strict_json_schema
from pydantic import BaseModel, Field

from tooldeck.core.schema import INLINED_NODES, inline_refs, model_schema, strip_titles, to_strict
from tooldeck.exceptions import RegistrationError


class Filter(BaseModel):
    field: str
    op: Literal["eq", "lt", "gt"] = "eq"


class Query(BaseModel):
    symbol: str = Field(description="Ticker.")
    limit: int = Field(10, description="Max rows.")
    account: str | None = None
    filters: list[Filter] = []
    title: str = "property named title stays"


class Node(BaseModel):
    name: str
    children: list[Node] = []


def _openai_accepts(schema: dict) -> bool:
    """The openai package's strict conversion changes nothing: the schema is already strict."""
    return (
        _ensure_strict_json_schema(copy.deepcopy(schema), path=(), root=copy.deepcopy(schema))
        == schema
    )


def test_strict_schema_is_accepted_by_openai_unchanged() -> None:
    strict = to_strict(model_schema(Query))
    assert _openai_accepts(strict)
    assert strict["required"] == ["symbol", "limit", "account", "filters", "title"]
    assert strict["additionalProperties"] is False
    assert strict["properties"]["limit"] == {
        "description": "Max rows. Default: 10.",
        "type": ["integer", "null"],
    }
    assert strict["properties"]["account"]["anyOf"] == [{"type": "string"}, {"type": "null"}]
    assert strict["properties"]["filters"]["type"] == ["array", "null"]
    item = strict["properties"]["filters"]["items"]
    assert item["additionalProperties"] is False and item["required"] == ["field", "op"]
    assert "$defs" not in strict


def test_strict_schema_matches_openai_for_all_required_models() -> None:
    class AllRequired(BaseModel):
        symbol: str
        quantity: float
        side: Literal["buy", "sell"]

    assert to_strict(model_schema(AllRequired)) == strip_titles(to_strict_json_schema(AllRequired))


def test_titles_are_stripped_but_not_property_names() -> None:
    schema = model_schema(Query)
    assert "title" not in schema
    assert "title" in schema["properties"]
    assert "title" not in schema["properties"]["symbol"]


def test_inline_refs_and_recursion() -> None:
    inlined = inline_refs(model_schema(Query))
    assert inlined["properties"]["filters"]["items"]["properties"]["op"]["enum"] == [
        "eq",
        "lt",
        "gt",
    ]
    with pytest.raises(RegistrationError, match="recursive schema"):
        inline_refs(model_schema(Node))
    cut = inline_refs(model_schema(Node), cut_recursion=True)  # what strict and Gemini get
    child = cut["properties"]["children"]["items"]  # a Node inside a Node
    assert child["type"] == "object" and "not expanded" in child["description"]
    assert "$defs" not in cut


def test_refs_that_double_at_every_level_inline_to_a_bounded_schema() -> None:
    levels = 30  # 2^30 objects if every ref were inlined
    defs: dict[str, object] = {
        f"L{i}": {
            "type": "object",
            "properties": {"a": {"$ref": f"#/$defs/L{i + 1}"}, "b": {"$ref": f"#/$defs/L{i + 1}"}},
        }
        for i in range(levels)
    }
    defs[f"L{levels}"] = {"type": "integer"}
    schema = {"type": "object", "properties": {"tree": {"$ref": "#/$defs/L0"}}, "$defs": defs}
    with pytest.raises(RegistrationError, match="more than 20,000 objects"):
        inline_refs(schema)
    cut = inline_refs(schema, cut_recursion=True)
    text = str(cut)
    assert text.count("'description': 'A L") > 0 and "$defs" not in cut
    assert text.count("{") < 3 * INLINED_NODES
    strict = to_strict(schema)  # what OpenAI strict mode gets: the same cut, then closed
    assert strict["properties"]["tree"]["properties"]["a"]["additionalProperties"] is False
