"""Tool search over real tool descriptions: recall@5, latency at 10,000 tools, tokens per turn.

    .venv/bin/python benchmarks/tool_search.py [--limit N]

The tools are the function documents of the Berkeley Function Calling Leaderboard in
``bfcl-eval`` 2026.3.23 (Apache-2.0), fetched with ``pip download`` as
``retrieval.py`` does: every distinct function of the single-turn categories is one
tool (its name, description and parameters). The queries are the user turns of the
entries whose answer calls one function (``simple_*``, ``multiple``, ``live_simple``,
``live_multiple``); the relevant tool is that function. ``ToolIndex.search(query, 5)``
over all the tools at once, as a model's ``search_tools`` call would.

Prints recall@1 and @5 (target @5 ≥ 0.9; with ``--dense`` also BM25 fused with the
local embedder's ranking, ``core.tool_vectors``), over every document and over one
document per function name (a registry's names are unique), search p50 at the corpus size and at 10,000
tools (target ≤ 5 ms), the build time, and the tool list a model is sent per turn: every
tool's OpenAI definition vs ``search_tools`` plus five found tools (target: ≥ 85% fewer
at 200+ tools), in bytes of JSON and in tokens estimated at 4 bytes each.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

from retrieval import QUERY_SETS, VERSION, bfcl_wheel, json_lines, single_turn_functions
from tooldeck.core.definition import ToolDefinition
from tooldeck.core.tool_search import DeferredTools, ToolIndex
from tooldeck.core.tool_vectors import ToolVectors
from tooldeck.exporters import export


def _key(function: dict[str, Any]) -> str:
    return json.dumps(function, sort_keys=True)


def collection(
    wheel: Path,
) -> tuple[list[ToolDefinition], list[tuple[str, str]], dict[str, str]]:
    """(tools, [(query, name of the relevant tool)], tool name → function name).

    Functions of one name with different documents are each a tool (a suffix tells
    them apart).
    """
    functions: dict[str, dict[str, Any]] = {}
    with zipfile.ZipFile(wheel) as zf:
        for function in single_turn_functions(zf):
            functions.setdefault(_key(function), function)
        names: dict[str, str] = {}
        original: dict[str, str] = {}
        tools: list[ToolDefinition] = []
        for key, function in functions.items():
            name = function["name"]
            unique = name if name not in names.values() else f"{name}_{len(tools)}"
            names[key] = unique
            original[unique] = name
            schema = dict(function.get("parameters") or {})
            schema["type"] = "object"
            tools.append(
                ToolDefinition(
                    name=unique,
                    description=function.get("description", ""),
                    input_schema=schema,
                )
            )
        queries: list[tuple[str, str]] = []
        for category in QUERY_SETS:
            answers = {
                a["id"]: a["ground_truth"]
                for a in json_lines(zf, f"bfcl_eval/data/possible_answer/BFCL_v4_{category}.json")
            }
            for entry in json_lines(zf, f"bfcl_eval/data/BFCL_v4_{category}.json"):
                called = {next(iter(call)) for call in answers.get(entry["id"], [])}
                turn = [m for m in entry["question"][0] if m["role"] == "user"]
                relevant = [names[_key(f)] for f in entry["function"] if f["name"] in called]
                if len(called) == 1 and turn and len(relevant) == 1:
                    queries.append((turn[-1]["content"], relevant[0]))
    return tools, queries, original


def one_per_name(
    tools: list[ToolDefinition], queries: list[tuple[str, str]], original: dict[str, str]
) -> tuple[list[ToolDefinition], list[tuple[str, str]]]:
    """The first document of each function name, and the queries pointed at it.

    BFCL documents one function name up to 30 ways (``find_restaurants`` with other
    parameters in other entries); a registry holds one tool per name.
    """
    first: dict[str, ToolDefinition] = {}
    for tool in tools:
        first.setdefault(original[tool.name], tool)
    return list(first.values()), [(q, first[original[r]].name) for q, r in queries]


def p50_ms(index: ToolIndex, queries: list[str], vectors: ToolVectors | None = None) -> float:
    times = []
    for query in queries:
        begin = time.perf_counter()
        index.search(query, 5, vectors=vectors)
        times.append((time.perf_counter() - begin) * 1000)
    return statistics.median(times)


def report(
    label: str,
    index: ToolIndex,
    queries: list[tuple[str, str]],
    original: dict[str, str],
    vectors: ToolVectors | None,
) -> None:
    at1 = at5 = same5 = 0
    for query, relevant in queries:
        found = [d.name for d in index.search(query, 5, vectors=vectors)]
        at1 += found[:1] == [relevant]
        at5 += relevant in found
        same5 += original[relevant] in {original[n] for n in found}
    n = len(queries)
    print(f"{label}: recall@1 {at1 / n:.3f}   recall@5 {at5 / n:.3f} (target ≥ 0.9)")
    print(f"  recall@5 counting a same-named variant as found: {same5 / n:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, help="only the first N queries")
    parser.add_argument(
        "--dense", action="store_true", help="also BM25 fused with the local embedder's ranking"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tools, queries, original = collection(bfcl_wheel(tmp))
    queries = queries[: args.limit] if args.limit else queries
    print(f"bfcl-eval {VERSION}: {len(tools)} tools, {len(queries)} queries")
    begin = time.perf_counter()
    index = ToolIndex.of(tools)
    print(f"index built in {(time.perf_counter() - begin) * 1000:.0f} ms")
    texts = [q for q, _ in queries]
    report("BM25", index, queries, original, None)
    unique, renamed = one_per_name(tools, queries, original)
    unique_index = ToolIndex.of(unique)
    print(f"\none document per name, as a registry's names are ({len(unique)} tools):")
    report("BM25", unique_index, renamed, original, None)
    print(f"search p50 at {len(tools)} tools: {p50_ms(index, texts):.2f} ms")
    if args.dense:
        from tooldeck.packs.knowledge.embed import local_embedder

        embedder = local_embedder()
        if embedder is None:
            raise SystemExit("--dense needs the knowledge extra (the local embedder)")
        begin = time.perf_counter()
        vectors = index.vectors(embedder)
        vectors.wait()
        print(f"\nvectors of {len(tools)} tools made in {time.perf_counter() - begin:.0f} s")
        report("BM25 + dense (RRF)", index, queries, original, vectors)
        unique_vectors = unique_index.vectors(embedder)
        unique_vectors.wait()
        print(f"one document per name ({len(unique)} tools):")
        report("BM25 + dense (RRF)", unique_index, renamed, original, unique_vectors)
        print(
            f"search p50: {p50_ms(index, texts[:300], vectors):.2f} ms (the query's vector included)"
        )
    copies = -(-10_000 // len(tools))
    big = [d.model_copy(update={"name": f"{d.name}_{n}"}) for n in range(copies) for d in tools][
        :10_000
    ]
    begin = time.perf_counter()
    large = ToolIndex.of(big)
    built = (time.perf_counter() - begin) * 1000
    print(
        f"search p50 at {len(big)} tools: {p50_ms(large, texts):.2f} ms (target ≤ 5 ms; built in {built:.0f} ms)"
    )
    print("\ntool list sent per turn (OpenAI chat format, strict)")
    print(
        f"  {'tools':>6}  {'all: bytes':>11}  {'~tokens':>8}  {'search: bytes':>13}  {'~tokens':>8}  fewer"
    )
    for count in (50, 200, 1000):
        chosen = tools[:count]
        every = len(json.dumps(export(chosen, "openai")))
        deferred = DeferredTools(chosen)
        deferred.found.update(d.name for d in deferred.tool.index.search(texts[0], 5))
        sent = deferred.visible()
        searched = len(json.dumps(export(sent, "openai")))
        print(
            f"  {count:>6}  {every:>11,}  {every // 4:>8,}  {searched:>13,}  {searched // 4:>8,}"
            f"  {1 - searched / every:.0%}"
        )


if __name__ == "__main__":
    main()
