"""One tool call, JSON argument text in, through tooldeck and through its peers.

    .venv/bin/python benchmarks/peers.py            # every case, each in its own process
    .venv/bin/python benchmarks/peers.py CASE       # one case (what the table runs)

The same tool everywhere: ``price(symbol) -> {"symbol", "price"}``, called with the
text ``{"symbol": "AAPL"}`` the way a model sends it. Each case runs in a fresh
interpreter, which also measures the floor (Pydantic ``model_validate_json`` and a
direct call), so a ratio compares a path with the floor of the same process.

The peers (``pip install -e '.[bench]'``, pinned versions): pydantic-ai's
``ToolManager.handle_call``, the OpenAI Agents SDK's ``FunctionTool.on_invoke_tool``
(async, and a sync function, which it runs on a thread), LangChain's
``StructuredTool.ainvoke``, the MCP SDK's ``MCPServer.call_tool`` and FastMCP's
``FastMCP.call_tool`` (the server side: no transport). Then tooldeck's tool inside pydantic-ai and the
Agents SDK through ``tooldeck.adapters`` (the stack, audit off), against each
framework's native path (target ≤ 1.2x). A peer that is not installed is reported
as such. Medians of repeated runs; µs per call. Each target (``TARGETS``) is printed
as a ratio with met or MISSED; the thread hop is compared here, each path in its own
process, because in ``overhead.py`` the audit stores' writer threads share the GIL.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

ARGS = '{"symbol": "AAPL"}'
Call = Callable[[], Awaitable[Any]]


class Args(BaseModel):
    """The tool's arguments."""

    symbol: str


async def price(symbol: str) -> dict[str, Any]:
    """A price."""
    return {"symbol": symbol, "price": 228.42}


def price_sync(symbol: str) -> dict[str, Any]:
    """A price."""
    return {"symbol": symbol, "price": 228.42}


async def floor() -> Any:
    return await price(**Args.model_validate_json(ARGS).model_dump())


async def tooldeck_registry() -> Call:
    from tooldeck.core import tool
    from tooldeck.providers import ToolRegistry

    registry = ToolRegistry([tool(name="price")(price)])
    return lambda: registry.execute("price", ARGS)


async def tooldeck_thread() -> Call:
    from tooldeck.core import tool
    from tooldeck.providers import ToolRegistry

    registry = ToolRegistry([tool(name="price")(price_sync)])  # blocking: a worker thread
    return lambda: registry.execute("price", ARGS)


def _runtime(**audit: Any) -> Any:
    from tooldeck.config import load_settings
    from tooldeck.core import tool
    from tooldeck.runtime import build_runtime

    data = tempfile.mkdtemp(prefix="tooldeck-bench-")
    runtime = build_runtime(load_settings(data_dir=data, builtin={"enabled": False}, audit=audit))
    runtime.registry.register(tool(name="price")(price))
    return runtime


async def tooldeck_stack_audit_off() -> Call:
    runtime = _runtime(enabled=False)
    return lambda: runtime.provider.execute("price", ARGS)


async def tooldeck_stack_defaults() -> Call:
    runtime = _runtime()  # audit on, durability ack (journalled)
    return lambda: runtime.provider.execute("price", ARGS)


async def pydantic_ai() -> Call:
    from pydantic_ai import FunctionToolset, RunContext
    from pydantic_ai.messages import ToolCallPart
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.tool_manager import ToolManager
    from pydantic_ai.usage import RunUsage

    context = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    manager = await ToolManager(FunctionToolset([price])).for_run_step(context)
    return lambda: manager.handle_call(ToolCallPart(tool_name="price", args=ARGS, tool_call_id="c"))


def agents_call(function: Callable[..., Any]) -> Call:
    from agents import function_tool
    from agents.tool_context import ToolContext

    made = function_tool(function, name_override="price")
    context = ToolContext(context=None, tool_name="price", tool_call_id="c", tool_arguments=ARGS)
    return lambda: made.on_invoke_tool(context, ARGS)


async def openai_agents() -> Call:
    return agents_call(price)


async def openai_agents_thread() -> Call:
    return agents_call(price_sync)


async def langchain() -> Call:
    from langchain_core.tools import StructuredTool

    made = StructuredTool.from_function(coroutine=price, name="price", description="A price.")
    return lambda: made.ainvoke(json.loads(ARGS))


async def mcp_sdk() -> Call:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("bench")
    server.tool()(price)
    return lambda: server.call_tool("price", json.loads(ARGS))


async def fastmcp() -> Call:
    from fastmcp import FastMCP

    server = FastMCP("bench")
    server.tool(price)
    return lambda: server.call_tool("price", json.loads(ARGS))


async def tooldeck_in_pydantic_ai() -> Call:
    from pydantic_ai import RunContext
    from pydantic_ai.messages import ToolCallPart
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.tool_manager import ToolManager
    from pydantic_ai.usage import RunUsage

    from tooldeck.adapters.pydantic_ai import ToolDeckToolset

    toolset = ToolDeckToolset(_runtime(enabled=False).provider)
    context = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    manager = await ToolManager(toolset).for_run_step(context)
    return lambda: manager.handle_call(ToolCallPart(tool_name="price", args=ARGS, tool_call_id="c"))


async def tooldeck_in_openai_agents() -> Call:
    from agents.tool_context import ToolContext

    from tooldeck.adapters.openai_agents import openai_agents_tools

    tools = await openai_agents_tools(_runtime(enabled=False).provider)
    made = next(t for t in tools if t.name == "price")
    context = ToolContext(context=None, tool_name="price", tool_call_id="c", tool_arguments=ARGS)
    return lambda: made.on_invoke_tool(context, ARGS)


CASES: dict[str, Callable[[], Awaitable[Call]]] = {
    "tooldeck registry": tooldeck_registry,
    "tooldeck stack, audit off": tooldeck_stack_audit_off,
    "tooldeck stack, defaults (audit ack)": tooldeck_stack_defaults,
    "tooldeck sync tool, worker thread": tooldeck_thread,
    "pydantic-ai handle_call": pydantic_ai,
    "openai-agents on_invoke_tool": openai_agents,
    "openai-agents sync tool, thread": openai_agents_thread,
    "langchain-core ainvoke": langchain,
    "mcp SDK MCPServer.call_tool": mcp_sdk,
    "fastmcp FastMCP.call_tool": fastmcp,
    "tooldeck in pydantic-ai (adapter)": tooldeck_in_pydantic_ai,
    "tooldeck in openai-agents (adapter)": tooldeck_in_openai_agents,
}
TARGETS = [
    ("tooldeck stack, defaults (audit ack)", "tooldeck stack, audit off", 1.5),
    ("tooldeck sync tool, worker thread", "openai-agents sync tool, thread", 1.0),
    ("tooldeck in pydantic-ai (adapter)", "pydantic-ai handle_call", 1.2),
    ("tooldeck in openai-agents (adapter)", "openai-agents on_invoke_tool", 1.2),
]
"""(path, baseline, most the path may take × the baseline): the default audit against
none for a caller that makes calls one by one, the thread hop against the fastest peer's
(issue #27), each adapter against the framework's native path for the same tool."""


async def measure(case: str, n: int, repeats: int) -> dict[str, float]:
    """Median µs per call of ``case`` and of the floor, alternating within each repeat."""
    call = await CASES[case]()
    for _ in range(min(n, 500)):  # warm up (the first call of a peer builds its caches)
        await call()
        await floor()
    samples: dict[str, list[float]] = {"us": [], "floor_us": []}
    for _ in range(repeats):
        for key, run in (("us", call), ("floor_us", floor)):
            start = time.perf_counter()
            for _ in range(n):
                await run()
            samples[key].append((time.perf_counter() - start) / n * 1e6)
    return {key: statistics.median(values) for key, values in samples.items()}


def run_all(n: int, repeats: int) -> None:
    print(f"one tool call from JSON text, µs per call (median of {repeats} × {n:,})\n")
    print(f"{'path':<40}{'µs/call':>10}{'× floor':>10}{'× fastest peer':>16}")
    figures: dict[str, dict[str, float] | str] = {}
    for case in CASES:
        done = subprocess.run(
            [sys.executable, __file__, case, "--n", str(n), "--repeats", str(repeats)],
            capture_output=True,
            text=True,
            check=False,
        )
        lines = done.stdout.strip().splitlines()
        if done.returncode == 0 and lines:
            figures[case] = json.loads(lines[-1])
        else:
            last = (done.stderr.strip().splitlines() or ["failed"])[-1]
            figures[case] = (
                "not installed (pip install -e '.[bench]')" if "ModuleNotFound" in last else last
            )
    peers = [
        f["us"] for c, f in figures.items() if isinstance(f, dict) and not c.startswith("tooldeck")
    ]  # the adapters' rows are tooldeck's paths, not peers
    fastest = min(peers) if peers else None
    for case, f in figures.items():
        if isinstance(f, str):
            print(f"{case:<40}  {f}")
            continue
        vs_peer = f"{f['us'] / fastest:>16.2f}" if fastest else ""
        print(f"{case:<40}{f['us']:>10.2f}{f['us'] / f['floor_us']:>10.1f}{vs_peer}")
    print()
    for path, baseline, limit in TARGETS:
        a, b = figures.get(path), figures.get(baseline)
        if isinstance(a, dict) and isinstance(b, dict):
            ratio = a["us"] / b["us"]
            verdict = "met" if ratio <= limit else "MISSED"
            print(f"{path}: {ratio:.2f}x {baseline} (target ≤ {limit:g}x: {verdict})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("case", nargs="?", choices=list(CASES), help="one case (internal)")
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="1,000 calls × 3")
    args = parser.parse_args()
    n, repeats = (1000, 3) if args.quick else (args.n, args.repeats)
    if args.case is None:
        run_all(n, repeats)
        return
    warnings.simplefilter("ignore")  # a peer's deprecation notices are not figures
    print(json.dumps(asyncio.run(measure(args.case, n, repeats))))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    main()
