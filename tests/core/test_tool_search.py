"""``ToolIndex`` and ``DeferredTools`` on real tool descriptions (600 BFCL functions)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tooldeck.core import JsonSchemaTool, ToolDefinition
from tooldeck.core.tool_search import SEARCH_TOOLS, DeferredTools, ToolIndex
from tooldeck.exporters import export

pytestmark = pytest.mark.anyio

CORPUS = json.loads((Path(__file__).parents[1] / "data" / "function_schemas.json").read_text())
TOOLS = [
    JsonSchemaTool(
        name=f"t{i}_{c['name']}"[:64],
        description=c["description"],
        input_schema=c["parameters"],
        function=lambda **kw: kw,
    ).definition
    for i, c in enumerate(CORPUS)
]


def names(found: list[ToolDefinition]) -> list[str]:
    return [d.name.split("_", 1)[1] for d in found]


def test_a_task_in_words_finds_its_tools_in_600_real_ones() -> None:
    index = ToolIndex.of(TOOLS)
    assert names(index.search("send an email", 1)) == ["send_email"]
    assert names(index.search("What's the factorial of 5?", 2)) == [
        "math_factorial",
        "math.factorial",
    ]
    weather = names(index.search("weather forecast for Paris", 5))
    assert all("weather" in n.lower() for n in weather), weather
    # names split at camelCase and underscores, words stemmed: "flights" finds *Flight*
    assert any("Flight" in n for n in names(index.search("flights", 5)))


def test_a_query_cannot_break_the_index() -> None:
    index = ToolIndex.of(TOOLS)
    for hostile in ['"', "NEAR(a b)", "a OR", "*", "-email", "col:email", "'); DROP", ""]:
        index.search(hostile)  # FTS5 syntax never reaches the engine unquoted
    assert index.search("the of and to what is") == []  # words that say nothing
    assert ToolIndex.of(TOOLS) is index  # the same list: the same index, not rebuilt


async def test_deferred_tools_show_search_and_what_was_found() -> None:
    assert DeferredTools.over(TOOLS[:10], threshold=40) is None
    assert DeferredTools.over(TOOLS, threshold=0) is None
    deferred = DeferredTools.over(TOOLS, threshold=40, always_visible=["t1_*"])
    assert deferred is not None
    visible = [d.name for d in deferred.visible()]
    assert visible[0] == SEARCH_TOOLS and all(n.startswith("t1") for n in visible[1:])
    result = deferred.note(await deferred.tool.execute({"query": "send an email", "limit": 2}))
    assert result.success
    found = [t["name"] for t in result.data["tools"]]  # type: ignore[index]
    assert len(found) == 2 and set(found) <= {d.name for d in deferred.visible()}
    bad = deferred.note(await deferred.tool.execute({"query": "", "limit": 99}))
    assert bad.error is not None and bad.error.type == "validation"
    fields = {e["field"] for e in bad.error.details["errors"]}  # type: ignore[index]
    assert fields == {"query", "limit"}


def test_export_with_a_query_sends_only_the_matches() -> None:
    exported = export(TOOLS, "openai", query="convert currency", limit=3)
    assert len(exported) == 3
    assert "currency" in json.dumps(exported[0]).lower()


def test_with_a_local_embedder_a_query_in_other_words_finds_the_tool() -> None:
    from tooldeck.packs.knowledge.embed import local_embedder

    embedder = local_embedder()
    assert embedder is not None, "the knowledge extra is part of dev"
    some = TOOLS[400:520]  # send_email (446) among 119 others, to keep the test short
    index = ToolIndex.of(some)
    query = "electronic mail to a colleague"
    assert "send_email" not in names(index.search(query, 3))  # no word in common
    vectors = index.vectors(embedder)
    assert index.search(query, 3, vectors=vectors) == index.search(query, 3)  # not ready yet
    assert vectors.wait(120) and index.vectors(embedder) is vectors  # made once
    assert "send_email" in names(index.search(query, 3, vectors=vectors))
    deferred = DeferredTools(some, embedder=embedder)
    assert deferred.tool.vectors is vectors and deferred.tool.blocking
