from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, Field

from tooldeck.core import ActionStrategy, CompositeTool, ToolContext
from tooldeck.core.schema import flatten_root_union
from tooldeck.exceptions import RegistrationError

pytestmark = pytest.mark.anyio


class SearchArgs(BaseModel):
    query: str = Field(description="What to look for.")
    num_results: int = Field(5, ge=1, le=20)


class FetchArgs(BaseModel):
    url: str
    max_chars: int = 8000


class Search(ActionStrategy):
    name = "search"
    description = "Search the web."
    RequestModel = SearchArgs
    blocking = False

    def run(self, request: SearchArgs, ctx: ToolContext) -> dict[str, Any]:
        return {"query": request.query, "n": request.num_results}


class Fetch(ActionStrategy):
    name = "fetch"
    description = "Fetch one page."
    RequestModel = FetchArgs

    async def run(self, request: FetchArgs, ctx: ToolContext) -> dict[str, Any]:
        return {"url": request.url, "max_chars": request.max_chars}


class Web(CompositeTool):
    name = "web"
    description = "Search the web or fetch a page."
    actions = (Search(), Fetch())


async def test_dispatches_to_the_action_and_validates_with_its_model() -> None:
    web = Web()
    assert (await web.execute({"action": "search", "query": "etf"})).data == {
        "query": "etf",
        "n": 5,
    }
    assert (await web.execute('{"action": "fetch", "url": "https://x"}')).data == {
        "url": "https://x",
        "max_chars": 8000,
    }
    bad = await web.execute({"action": "search", "query": "etf", "num_results": 99})
    assert bad.error is not None and bad.error.type == "validation"
    assert "num_results: Input should be less than or equal to 20" in bad.error.message


async def test_unknown_or_missing_action_lists_the_actions() -> None:
    web = Web()
    unknown = await web.execute({"action": "serch", "query": "x"})
    assert unknown.error is not None and unknown.error.type == "validation"
    assert unknown.error.message == (
        "Invalid arguments for web: action: unknown ('serch'). Actions: search, fetch. Did you mean 'search'?"
    )
    missing = await web.execute({"query": "x"})
    assert missing.error is not None and "action: missing" in missing.error.message


def test_schema_is_a_union_with_every_action_and_its_parameters() -> None:
    schema = Web().definition.input_schema
    assert schema["type"] == "object"
    variants = schema["oneOf"]
    assert [v["properties"]["action"]["const"] for v in variants] == ["search", "fetch"]
    assert variants[0]["required"] == ["action", "query"]
    assert variants[1]["required"] == ["action", "url"]
    assert variants[0]["description"] == "Search the web."


def test_flattened_schema_keeps_every_action_visible_to_a_model() -> None:
    flat = flatten_root_union(Web().definition.input_schema)
    assert flat["required"] == ["action"]
    assert flat["properties"]["action"]["enum"] == ["search", "fetch"]
    assert "search: Search the web." in flat["properties"]["action"]["description"]
    assert flat["properties"]["query"]["description"] == (
        "What to look for. Used by actions: search; required for search."
    )
    assert set(flat["properties"]) == {"action", "query", "num_results", "url", "max_chars"}


def test_duplicate_or_no_actions_are_refused() -> None:
    with pytest.raises(RegistrationError, match="two actions named 'search'"):
        Web(actions=[Search(), Search()])
    with pytest.raises(RegistrationError, match="no actions"):
        Web(actions=[])


def test_output_schema_is_an_object_and_each_typed_action_s_result() -> None:
    assert Web().definition.output_schema == {
        "type": "object",
        "description": "The chosen action's result.",
    }

    class Hit(BaseModel):
        """A search hit."""

        query: str

    class TypedSearch(Search):
        ResponseModel = Hit

    class TypedFetch(Fetch):
        ResponseModel = Hit

    typed = Web([TypedSearch(), TypedFetch()])
    schema = typed.definition.output_schema
    assert schema is not None and schema["type"] == "object" and len(schema["anyOf"]) == 2
