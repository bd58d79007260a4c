"""What a receipt costs: a keyed call of a tool with side effects vs the same call unkeyed.

One runtime on a scratch data dir (receipts in its ``receipts.db``), the audit off so
the receipt's own cost shows, then with the default audit. Four paths, µs per call
(median of rounds), each in the same run:

- ``idempotent``: the same tool annotated idempotent (no receipt; the baseline);
- ``no key``: a tool with side effects called without a key (no receipt);
- ``keyed, first``: a new key each call (a receipt written, then completed);
- ``keyed, repeat``: the same key again (the stored result answered).

Run: .venv/bin/python benchmarks/receipts.py [--quick]
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from tooldeck.config import load_settings
from tooldeck.core import ToolAnnotations, ToolContext, tool
from tooldeck.runtime import Runtime, build_runtime

SENT: list[int] = []


@tool(name="send")
async def send(n: int) -> int:
    """Record a send.

    Args:
        n: Which one.
    """
    SENT.append(n)
    return len(SENT)


@tool(name="send_idempotent", annotations=ToolAnnotations(idempotent=True))
async def send_idempotent(n: int) -> int:
    """Record a send (declared idempotent).

    Args:
        n: Which one.
    """
    SENT.append(n)
    return len(SENT)


async def measure(runtime: Runtime, calls: int, rounds: int) -> dict[str, float]:
    """Median µs per call of each path."""
    provider = runtime.provider
    ctx = runtime.context()
    keyed = 0

    async def idempotent() -> None:
        await provider.execute("send_idempotent", {"n": 1}, ctx)

    async def no_key() -> None:
        await provider.execute("send", {"n": 1}, ctx)

    async def first() -> None:
        nonlocal keyed
        keyed += 1
        await provider.execute("send", {"n": 1}, ctx.derive(idempotency_key=f"k{keyed}"))

    repeat_ctx = ToolContext(services=ctx.services, idempotency_key="again")
    await provider.execute("send", {"n": 1}, repeat_ctx)

    async def repeat() -> None:
        result = await provider.execute("send", {"n": 1}, repeat_ctx)
        assert result.metadata.replay_of is not None

    paths = {
        "idempotent (baseline)": idempotent,
        "no key": no_key,
        "keyed, first": first,
        "keyed, repeat": repeat,
    }
    for path in paths.values():  # warm up
        for _ in range(50):
            await path()
    figures: dict[str, list[float]] = {name: [] for name in paths}
    for _ in range(rounds):
        for name, path in paths.items():
            start = time.perf_counter()
            for _ in range(calls):
                await path()
            figures[name].append((time.perf_counter() - start) / calls * 1e6)
    return {name: statistics.median(values) for name, values in figures.items()}


def run(audit: bool, calls: int, rounds: int) -> dict[str, float]:
    """Build a runtime on a scratch data dir and measure it."""
    data_dir = Path(tempfile.mkdtemp())
    settings = load_settings(data_dir=data_dir, audit={"enabled": audit})
    runtime = build_runtime(settings, load_entry_points=False)
    runtime.registry.register(send)
    runtime.registry.register(send_idempotent)

    async def go() -> dict[str, float]:
        try:
            return await measure(runtime, calls, rounds)
        finally:
            await runtime.aclose()

    return asyncio.run(go())


def main() -> None:
    """Print µs per call and the ratio to the baseline, audit off and on."""
    quick = "--quick" in sys.argv
    calls, rounds = (100, 3) if quick else (1000, 7)
    for label, audit in (("audit off", False), ("default audit", True)):
        figures = run(audit, calls, rounds)
        base = figures["idempotent (baseline)"]
        print(f"{label}: µs per call (median of {rounds} rounds of {calls})")
        for name, value in figures.items():
            print(f"  {name:24s} {value:9.1f}   {value / base:5.2f}x baseline")


if __name__ == "__main__":
    main()
