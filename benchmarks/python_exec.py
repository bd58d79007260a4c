"""Latency of the ``python`` tool (fork server) against a fresh ``python -c`` per call.

    .venv/bin/python benchmarks/python_exec.py [--quick]

Two snippets, each run N times through ``PythonTool.execute`` (the default
configuration: pandas, numpy and matplotlib preloaded, all limits on) and N times as
``python -I -c '<imports>; <snippet>'`` in a new process, as a sandbox without a warm
server has to. Cases alternate within each round, and each tool call starts 50 ms
after the previous one ended (calls paced like a model's, so the fork server has the
next isolated process ready). Prints p50 and p95 in ms and the ratio of the p50s,
then the p50 of back-to-back calls (no pause) and of bursts of 8 parallel calls (a
model's parallel tool calls), which find the server's spare prepared processes
(``[python] spares``, default 4) or wait for new ones (forks, namespaces, mounts).

Targets (issue #4): p50 ≤ 10 ms for ``result = 1 + 1``; the pandas one-liner ≥ 5×
faster than a fresh subprocess. Issue #27: back-to-back p50 ≤ 1.5× the paced p50 and
≤ 0.3× a fresh ``python -c``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tooldeck.packs.builtin import PythonTool, Roots, make_sandbox
from tooldeck.packs.builtin.config import PythonConfig

CASES = {
    "1 + 1": ("result = 1 + 1", "result = 1 + 1"),
    "pandas": (
        "result = int(pd.DataFrame({'a': range(100)}).a.sum())",
        "import pandas as pd; result = int(pd.DataFrame({'a': range(100)}).a.sum())",
    ),
}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def main(rounds: int, spares: int) -> None:
    config = PythonConfig(spares=spares)
    sandbox = make_sandbox(config, os.environ)
    tool = PythonTool(config, Roots([Path(tempfile.gettempdir())]), sandbox)
    started = time.perf_counter()
    await sandbox.start()
    print(f"fork server ready in {(time.perf_counter() - started) * 1000:.0f} ms; "
          f"preloaded: {', '.join(sandbox.preloaded)}")  # fmt: skip
    warm: dict[str, list[float]] = {name: [] for name in CASES}
    fresh: dict[str, list[float]] = {name: [] for name in CASES}
    for code, _ in CASES.values():  # warm-up, not measured
        assert (await tool.execute({"code": code})).success
    for _ in range(rounds):
        for name, (code, standalone) in CASES.items():
            await asyncio.sleep(0.05)
            t = time.perf_counter()
            result = await tool.execute({"code": code})
            warm[name].append((time.perf_counter() - t) * 1000)
            assert result.success, result.error
            t = time.perf_counter()
            subprocess.run([sys.executable, "-I", "-c", standalone], check=True)
            fresh[name].append((time.perf_counter() - t) * 1000)
    burst: list[float] = []
    for _ in range(rounds):
        t = time.perf_counter()
        assert (await tool.execute({"code": "result = 1 + 1"})).success
        burst.append((time.perf_counter() - t) * 1000)
    parallel: list[float] = []
    for _ in range(max(rounds // 10, 3)):
        await asyncio.sleep(0.3)  # as after a model's turn: the spares are ready
        t = time.perf_counter()
        results = await asyncio.gather(
            *(tool.execute({"code": "result = 1 + 1"}) for _ in range(8))
        )
        parallel.append((time.perf_counter() - t) * 1000)
        assert all(r.success for r in results)
    await sandbox.aclose()
    print(
        f"{'case':<8} {'tool p50':>9} {'tool p95':>9} {'fresh p50':>10} {'fresh p95':>10} {'ratio':>7}"
    )
    for name in CASES:
        w50, w95 = statistics.median(warm[name]), percentile(warm[name], 0.95)
        f50, f95 = statistics.median(fresh[name]), percentile(fresh[name], 0.95)
        print(
            f"{name:<8} {w50:>7.2f}ms {w95:>7.2f}ms {f50:>8.1f}ms {f95:>8.1f}ms {f50 / w50:>6.1f}x"
        )
    paced, b2b = statistics.median(warm["1 + 1"]), statistics.median(burst)
    fresh_p50 = statistics.median(fresh["1 + 1"])
    print(
        f"back-to-back 1 + 1: p50 {b2b:.2f} ms = {b2b / paced:.1f}x paced "
        f"(target ≤ 1.5x), {b2b / fresh_p50:.2f}x a fresh python -c (target ≤ 0.3x)"
    )
    print(f"8 parallel calls of 1 + 1: p50 {statistics.median(parallel):.1f} ms for all 8")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="20 rounds instead of 100")
    parser.add_argument("--spares", type=int, default=4, help="prepared processes (default 4)")
    arguments = parser.parse_args()
    asyncio.run(main(20 if arguments.quick else 100, arguments.spares))
