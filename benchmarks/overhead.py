"""Overhead of tooldeck's execution path, per call, against the Pydantic floor.

    .venv/bin/python benchmarks/overhead.py [--quick]

The path a model's tool call takes: JSON argument text in, ToolResult out.
(a) floor: Pydantic ``model_validate_json`` + a direct call of the same function;
(b) ``ToolRegistry.execute`` of the equivalent async tool, audit off, and the same
    through the policy stack (timeout watchdog, breaker, retry check);
(c) a non-blocking sync tool (runs inline); (d) a blocking sync tool (worker thread);
(e) (b) with the SQLite audit store on (batch; (e'') ack: each call journals its record);
(f) 1,000 concurrent calls of an async tool;
(g) ``ToolRegistry.execute_sync`` from a plain synchronous caller (a thread with no loop)
against 1,000 concurrent floor calls (total ms). Medians of repeated runs.
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

from pydantic import BaseModel

from tooldeck.core import tool
from tooldeck.observability import AuditStore
from tooldeck.providers import PolicyConfig, ToolRegistry

ARGS = '{"symbol": "AAPL"}'


class Args(BaseModel):
    """The benchmark tool's arguments."""

    symbol: str


async def price_async(symbol: str) -> dict[str, Any]:
    return {"symbol": symbol, "price": 228.42}


def price_sync(symbol: str) -> dict[str, Any]:
    return {"symbol": symbol, "price": 228.42}


async def price_yielding(symbol: str) -> dict[str, Any]:
    await asyncio.sleep(0)
    return {"symbol": symbol, "price": 228.42}


Case = tuple[Callable[[], Awaitable[Any]], int, Callable[[], Any] | None]


async def per_call_us(cases: dict[str, Case], repeats: int) -> dict[str, float]:
    """Median µs per call of each case.

    Cases take turns in every repeat, so drift on a noisy machine hits them alike. A
    case's ``finish`` (the audit flush) runs inside its timing: deferred work is paid
    by the case that caused it, not by the next one.
    """
    for call, n, finish in cases.values():  # warm up
        for _ in range(min(n, 2000)):
            await call()
        if finish:
            finish()
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(repeats):
        for name, (call, n, finish) in cases.items():
            start = time.perf_counter()
            for _ in range(n):
                await call()
            if finish:
                finish()
            samples[name].append((time.perf_counter() - start) / n * 1e6)
    return {name: statistics.median(s) for name, s in samples.items()}


async def concurrent_ms(make: Callable[[], Awaitable[Any]], n: int, repeats: int) -> float:
    await asyncio.gather(*(make() for _ in range(n)))
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        await asyncio.gather(*(make() for _ in range(n)))
        samples.append((time.perf_counter() - start) * 1e3)
    return statistics.median(samples)


def sync_per_call(call: Callable[[], Any], n: int, repeats: int) -> float:
    """Median µs per call of ``call`` made one after another from this (loop-free) thread."""
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(n):
            call()
        runs.append((time.perf_counter() - start) / n * 1e6)
    return statistics.median(runs)


def _agents_thread_call() -> Callable[[], Awaitable[Any]] | None:
    """The OpenAI Agents SDK's call of ``price_sync`` (on a thread); None if not installed."""
    from peers import agents_call  # benchmarks/ is this script's folder

    try:
        return agents_call(price_sync)
    except ImportError:
        return None


async def main(quick: bool) -> int:
    n, repeats, n_thread = (5_000, 3, 500) if quick else (50_000, 7, 3_000)
    t_async = tool(name="price_async")(price_async)
    t_inline = tool(name="price_inline", blocking=False)(price_sync)
    t_thread = tool(name="price_thread")(price_sync)
    t_yield = tool(name="price_yielding")(price_yielding)
    registry = ToolRegistry([t_async, t_inline, t_thread, t_yield])
    stack = registry.with_policies(PolicyConfig())
    tmp = tempfile.TemporaryDirectory()
    audit = AuditStore.sqlite(Path(tmp.name) / "audit.db")
    audited = registry.observed(audit)
    audited_stack = stack.observed(audit)
    acked = AuditStore.sqlite(Path(tmp.name) / "acked.db", durability="ack")
    audited_acked = registry.observed(acked)

    async def floor() -> Any:
        return await price_async(Args.model_validate_json(ARGS).symbol)

    async def floor_sync() -> Any:
        return price_sync(Args.model_validate_json(ARGS).symbol)

    async def floor_yield() -> Any:
        return await price_yielding(Args.model_validate_json(ARGS).symbol)

    cases: dict[str, Case] = {}
    peer_thread = _agents_thread_call()
    if peer_thread is not None:  # the fastest peer's thread path, in this same run
        cases["d_peer"] = (peer_thread, n_thread, None)
    us = await per_call_us(
        {
            **cases,
            "a": (floor, n, None),
            "a_sync": (floor_sync, n, None),
            "b": (lambda: registry.execute("price_async", ARGS), n, None),
            "bp": (lambda: stack.execute("price_async", ARGS), n, None),
            "c": (lambda: registry.execute("price_inline", ARGS), n, None),
            "d": (lambda: registry.execute("price_thread", ARGS), n_thread, None),
            "e": (lambda: audited.execute("price_async", ARGS), n, audit.flush),
            "ep": (lambda: audited_stack.execute("price_async", ARGS), n, audit.flush),
            "e_ack": (lambda: audited_acked.execute("price_async", ARGS), n_thread, acked.flush),
        },
        repeats,
    )
    f_ack = await concurrent_ms(
        lambda: audited_acked.execute("price_yielding", ARGS), 1000, repeats
    )
    acked.close()  # their writers' last batches would compete with (g) for the GIL
    audit.close()
    g = await asyncio.to_thread(
        sync_per_call, lambda: registry.execute_sync("price_async", ARGS), n, repeats
    )
    tmp.cleanup()
    a, b, c, d, e = us["a"], us["b"], us["c"], us["d"], us["e"]
    peer = us.get("d_peer")
    rows = [
        ("(a)  floor: model_validate_json + await function", a, 1.0, ""),
        ("(a') floor, sync function", us["a_sync"], us["a_sync"] / a, ""),
        ("(b)  ToolRegistry.execute, async tool", b, b / a, "≤ 3×"),
        ("(b') + policy stack (timeout, breaker, retry)", us["bp"], us["bp"] / a, ""),
        ("(c)  non-blocking sync tool (inline)", c, c / a, "≤ 3×"),
        ("(d)  blocking sync tool (worker thread)", d, d / a, "≤ peer*"),
        ("(e)  (b) + SQLite audit, writes included", e, e / a, "≤ 2× (b)"),
        ("(e') policy stack + SQLite audit", us["ep"], us["ep"] / a, ""),
        ("(e'') (b) + audit ack, one at a time, writes included", us["e_ack"], us["e_ack"] / a, ""),
        ("(g)  execute_sync from a synchronous caller", g, g / a, "≤ 2× (b)"),
    ]

    f_floor = await concurrent_ms(floor_yield, 1000, repeats)
    f_reg = await concurrent_ms(lambda: registry.execute("price_yielding", ARGS), 1000, repeats)
    f_stack = await concurrent_ms(lambda: stack.execute("price_yielding", ARGS), 1000, repeats)

    print(
        f"tooldeck overhead, Python {sys.version.split()[0]}, median of {repeats} runs of {n:,} calls\n"
    )
    print(f"{'path':52} {'µs/call':>9} {'× floor':>8}  target")
    for label, us, ratio, target in rows:
        print(f"{label:52} {us:9.2f} {ratio:8.2f}  {target}")
    print(
        f"\n{'(f)  1,000 concurrent calls, async tool':52} {'total ms':>9} {'× floor':>8}  target"
    )
    print(f"{'     floor (gather of 1,000 floor calls)':52} {f_floor:9.2f} {1.0:8.2f}")
    print(f"{'     ToolRegistry.execute':52} {f_reg:9.2f} {f_reg / f_floor:8.2f}  ≤ 2×")
    print(f"{'     + policy stack':52} {f_stack:9.2f} {f_stack / f_floor:8.2f}")
    print(f"{'     audited, durability ack (journalled)':52} {f_ack:9.2f} {f_ack / f_floor:8.2f}")
    print(
        "\n* (d): the OpenAI Agents SDK's thread path for the same sync function, this run: "
        + (f"{peer:.2f} µs" if peer else "not installed (pip install -e '.[bench]')")
        + "; every peer: benchmarks/peers.py"
    )
    checks = {
        "(b) ≤ 3× floor": b <= 3 * a,
        "(c) ≤ 3× floor": c <= 3 * a,
        "(d) ≤ peer": peer is not None and d <= peer,
        "(e) ≤ 2× (b)": e <= 2 * b,
        "(f) ≤ 2× floor": f_reg <= 2 * f_floor,
        "(g) ≤ 2× (b)": g <= 2 * b,
    }
    print("\n" + "  ".join(f"{k}: {'met' if v else 'MISSED'}" for k, v in checks.items()))
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls (a smoke run)")
    raise SystemExit(asyncio.run(main(parser.parse_args().quick)))
