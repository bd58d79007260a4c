"""Large registries: building and registering tools, and exporting them every turn.

    .venv/bin/python benchmarks/exporters.py [--quick]

(1) Build and register N tools two ways: ``@tool`` on a Python function (its JSON
    Schema written from the signature, ``core.signature_schema``; the Pydantic model
    is built at a tool's first call, not timed here) and ``JsonSchemaTool`` (a schema
    given, as an OpenAPI import or an MCP server's listing brings them). µs and KiB per tool; the
    target is 10,000 tools registered in ≤ 2 s.
(2) Export 100 of them per format, the first time (built) and every turn after
    (``exporters._common.exported``: cached per definition). Target: ≤ 1 ms cached.
Medians of repeated runs.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import time
import tracemalloc
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, Field

from tooldeck.core import JsonSchemaTool, ToolDefinition, tool
from tooldeck.exporters import FORMATS, export
from tooldeck.providers import ToolRegistry


class Address(BaseModel):
    """A postal address."""

    street: str
    city: str = Field(description="The city.")
    zip: str | None = None


def function_tool(i: int) -> Any:
    async def search(
        query: str,
        limit: int = 10,
        mode: Literal["exact", "fuzzy", "prefix"] = "exact",
        address: Address | None = None,
        tags: list[str] | None = None,
    ) -> dict[str, Any]:
        """Search the things for a query and return the best matches, ranked."""
        return {}

    return tool(name=f"search_{i}")(search)


SCHEMA = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "What to look for."},
        "limit": {"type": "integer", "default": 10},
        "mode": {"enum": ["exact", "fuzzy", "prefix"], "default": "exact"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["query"],
}


def schema_tool(i: int) -> Any:
    async def run(arguments: dict[str, Any]) -> dict[str, Any]:
        return {}

    return JsonSchemaTool(
        name=f"lookup_{i}",
        description="Look a thing up by query and return the matches.",
        input_schema=SCHEMA,
        function=run,
        pass_dict=True,
    )


def build(make: Callable[[int], Any], n: int) -> tuple[float, float, ToolRegistry]:
    """Microseconds and KiB per tool to build and register ``n`` tools."""
    gc.collect()
    start = time.perf_counter()
    registry = ToolRegistry([make(i) for i in range(n)])
    seconds = time.perf_counter() - start
    gc.collect()
    tracemalloc.start()
    kept = ToolRegistry([make(i) for i in range(min(n, 500))])
    size, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del kept
    return seconds / n * 1e6, size / min(n, 500) / 1024, registry


def export_ms(definitions: list[ToolDefinition], format: str, repeats: int) -> tuple[float, float]:
    """Milliseconds to export ``definitions`` the first time and (median) every time after."""
    fresh = [d.model_copy() for d in definitions]  # objects the cache has not seen
    start = time.perf_counter()
    export(fresh, format)
    first = (time.perf_counter() - start) * 1000
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        export(fresh, format)
        samples.append((time.perf_counter() - start) * 1000)
    return first, statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="1,000 tools instead of 10,000")
    n = 1000 if parser.parse_args().quick else 10_000
    print(f"(1) building and registering {n:,} tools")
    print(f"    {'kind':<28}{'µs/tool':>10}{'KiB/tool':>10}{'10k tools, s':>14}")
    registries = {}
    for kind, make in (("@tool on a function", function_tool), ("JsonSchemaTool", schema_tool)):
        us, kib, registries[kind] = build(make, n)
        print(f"    {kind:<28}{us:>10.0f}{kib:>10.1f}{us * 10_000 / 1e6:>14.1f}")
    definitions = asyncio.run(registries["@tool on a function"].definitions())[:100]
    print("(2) exporting 100 tools, ms")
    print(f"    {'format':<20}{'first':>10}{'every turn after':>18}")
    for format in FORMATS:
        first, cached = export_ms(definitions, format, repeats=20)
        print(f"    {format:<20}{first:>10.2f}{cached:>18.3f}")
    print("    target: ≤ 1 ms every turn; 10k tools registered in ≤ 2 s")


if __name__ == "__main__":
    main()
