"""Per-call overhead of the provider stack and of MCP through tooldeck.

    .venv/bin/python benchmarks/providers.py [--quick]

(1) A local async tool called with JSON argument text through the full stack a
    profile uses (Observed → Receipts → Confirming → Filtered → Policy → Composite →
    registry, receipts in a scratch SQLite file, the call unkeyed as most are;
    the audit sink is a no-op so only the wrappers are measured) against the bare
    registry. Target: stack / bare ≤ 1.5.
(2) An MCP tool (``echo`` of tests/integration/mcp_fixture_server.py, a real stdio
    process) called through ``MCPToolsProvider`` inside the same stack, against the
    same call through the ``mcp`` SDK ``Client`` directly. Target: ≤ 1.2.
Cases alternate within each repeat; figures are medians.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from tooldeck.core import ToolContext, tool
from tooldeck.providers import (
    CompositeToolsProvider,
    MCPServerConfig,
    MCPToolsProvider,
    PolicyConfig,
    ReceiptFile,
    ReceiptsProvider,
    ToolRegistry,
    ToolsProvider,
)

FIXTURE = Path(__file__).parents[1] / "tests" / "integration" / "mcp_fixture_server.py"


@tool(name="get_price")
async def get_price(symbol: str) -> dict[str, Any]:
    """A price."""
    return {"symbol": symbol, "price": 228.42}


class NullSink:
    """An audit sink that keeps nothing: measures the wrapper, not the store."""

    healthy = True
    durability = "batch"

    def record(self, *args: Any) -> None:
        """Drop the record."""


def profile_stack(*providers: ToolsProvider) -> ToolsProvider:
    root = CompositeToolsProvider(providers)
    confirming = (
        root.with_policies(PolicyConfig())
        .filtered(tools=["get_*"], servers=["fx"])
        .confirming(["delete_*"])
    )
    receipts = ReceiptFile(Path(tempfile.mkdtemp()) / "receipts.db")
    return ReceiptsProvider(confirming, receipts).observed(NullSink())


async def median_us(
    cases: dict[str, Callable[[], Awaitable[Any]]], n: int, repeats: int
) -> dict[str, float]:
    samples: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(repeats):
        for name, call in cases.items():
            start = time.perf_counter()
            for _ in range(n):
                await call()
            samples[name].append((time.perf_counter() - start) / n * 1e6)
    return {k: statistics.median(v) for k, v in samples.items()}


async def local_case(quick: bool) -> None:
    registry = ToolRegistry([get_price])
    stack = profile_stack(registry)
    ctx = ToolContext(profile="bench")
    args = '{"symbol": "AAPL"}'
    assert (await stack.execute("get_price", args, ctx)).success
    figures = await median_us(
        {
            "bare registry": lambda: registry.execute("get_price", args, ctx),
            "full stack": lambda: stack.execute("get_price", args, ctx),
        },
        n=2000 if quick else 20000,
        repeats=5 if quick else 9,
    )
    ratio = figures["full stack"] / figures["bare registry"]
    print("(1) local tool, µs per call")
    for name, us in figures.items():
        print(f"    {name:<14} {us:8.2f}")
    print(f"    stack / bare   {ratio:8.2f}   (target ≤ 1.5)")


async def mcp_case(quick: bool) -> None:
    from mcp import Client, StdioServerParameters

    config = MCPServerConfig(command=sys.executable, args=[str(FIXTURE)])
    provider = MCPToolsProvider("fx", config)
    stack = profile_stack(ToolRegistry([get_price]), provider)
    params = StdioServerParameters(command=sys.executable, args=[str(FIXTURE)])
    async with Client(params) as client, provider:
        assert (await stack.execute("echo", {"text": "hi"})).success
        await client.call_tool("echo", {"text": "hi"})
        figures = await median_us(
            {
                "mcp SDK direct": lambda: client.call_tool("echo", {"text": "hi"}),
                "via tooldeck": lambda: stack.execute("echo", {"text": "hi"}),
            },
            n=100 if quick else 500,
            repeats=5 if quick else 9,
        )
    ratio = figures["via tooldeck"] / figures["mcp SDK direct"]
    print("(2) MCP tool over stdio, µs per call")
    for name, us in figures.items():
        print(f"    {name:<14} {us:8.1f}")
    print(f"    tooldeck / SDK {ratio:8.2f}   (target ≤ 1.2)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer iterations (CI smoke run)")
    quick = parser.parse_args().quick
    asyncio.run(local_case(quick))
    asyncio.run(mcp_case(quick))


if __name__ == "__main__":
    main()
