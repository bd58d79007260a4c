"""A tool over REST: ``tooldeck serve`` against a bare FastAPI endpoint doing the same.

    .venv/bin/python benchmarks/rest.py [--quick]

Each server runs on 127.0.0.1 in its own process (uvicorn, one worker): tooldeck
with its defaults (request guard, trace context, the provider stack, the audit with
``durability = "ack"``) serving ``price`` from a ``tools.py``; the bare app a FastAPI
route that validates the same body with Pydantic and calls the same function. Then
(1) one client, calls one after another, the servers taking turns every 50 calls: p50
and p95 latency; (2) 32 clients at once (asyncio, one connection each): calls per
second, the servers taking turns round by round.

Two pairs, each like for like: with uvicorn's access log (a line per request, as
``tooldeck serve`` and ``uvicorn app:app`` print by default) and without it
(``[server] access_log = false``; the bare app at ``log_level="warning"``). Targets
(issue #27): p50 ≤ 1.2× the bare endpoint's, throughput ≥ 0.9× its.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import httpx

TOOLS = textwrap.dedent(
    '''
    from tooldeck import tool


    @tool
    async def price(symbol: str) -> dict:
        """The price of a symbol."""
        return {"symbol": symbol, "price": 228.42}
    '''
)

BARE = textwrap.dedent(
    '''
    import sys

    import uvicorn
    from fastapi import FastAPI
    from pydantic import BaseModel

    app = FastAPI()


    class Args(BaseModel):
        symbol: str


    async def price(symbol: str) -> dict:
        """The price of a symbol."""
        return {"symbol": symbol, "price": 228.42}


    @app.post("/price")
    async def call(args: Args) -> dict:
        return {"status": "success", "data": await price(args.symbol)}


    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level=sys.argv[2])
    '''
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{url}: the server exited ({process.returncode})")
        try:
            httpx.post(url, json={"symbol": "AAPL"}, timeout=2).raise_for_status()
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer within 120 s")


def sequential(urls: dict[str, str], n: int, block: int = 50) -> dict[str, list[float]]:
    """Latency in ms of ``n`` calls to each server, one after another.

    One connection per server. The servers take turns every ``block`` calls, so a
    slow moment of a shared, noisy machine falls on every server alike (rounds of
    2,000 calls per server gave p50 ratios from 1.03 to 1.49 for the same code); the
    first call of a block, to a server that sat idle, is not counted (turns call by
    call measure waking an idle process, ~0.5 ms, not the server).
    """
    samples: dict[str, list[float]] = {name: [] for name in urls}
    clients = {name: httpx.Client(timeout=10) for name in urls}
    try:
        for _ in range(max(1, n // block)):
            for name, url in urls.items():
                client = clients[name]
                client.post(url, json={"symbol": "AAPL"}).raise_for_status()
                for _ in range(block):
                    start = time.perf_counter()
                    client.post(url, json={"symbol": "AAPL"}).raise_for_status()
                    samples[name].append((time.perf_counter() - start) * 1000)
    finally:
        for client in clients.values():
            client.close()
    return samples


async def concurrent(url: str, clients: int, seconds: float) -> float:
    """Calls per second from ``clients`` concurrent clients for ``seconds``."""
    done = 0
    stop = time.perf_counter() + seconds

    async def client() -> None:
        nonlocal done
        async with httpx.AsyncClient(timeout=30) as http:
            while time.perf_counter() < stop:
                (await http.post(url, json={"symbol": "AAPL"})).raise_for_status()
                done += 1

    start = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    return done / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls and rounds")
    quick = parser.parse_args().quick
    n, rounds, seconds = (300, 2, 2.0) if quick else (2000, 3, 5.0)
    work = Path(tempfile.mkdtemp(prefix="tooldeck-rest-"))
    (work / "tools.py").write_text(TOOLS)
    (work / "bare.py").write_text(BARE)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLDECK_")}
    quiet = {"TOOLDECK_SERVER__ACCESS_LOG": "false"}
    servers: dict[str, tuple[list[str], dict[str, str], str]] = {}
    for log, (tooldeck_env, level) in {
        "": ({}, "info"),
        ", no access log": (quiet, "warning"),
    }.items():
        port = free_port()
        command = ["-m", "tooldeck", "serve", "--port", str(port), "--tools", "tools.py"]
        data = {"TOOLDECK_DATA_DIR": str(work / f"data{len(servers)}")}
        servers[f"tooldeck{log}"] = (
            [sys.executable, *command],
            {**env, **data, **tooldeck_env},
            f"http://127.0.0.1:{port}/api/tools/execute/price",
        )
        port = free_port()
        servers[f"bare FastAPI{log}"] = (
            [sys.executable, "bare.py", str(port), level],
            env,
            f"http://127.0.0.1:{port}/price",
        )
    urls = {name: url for name, (_, _, url) in servers.items()}
    processes = {
        name: subprocess.Popen(
            command, cwd=work, env=environ, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        for name, (command, environ, _) in servers.items()
    }
    try:
        for name, url in urls.items():
            wait_ready(url, processes[name])
        sequential(urls, 200)  # warm up
        latency: dict[str, list[float]] = {name: [] for name in urls}
        rate: dict[str, list[float]] = {name: [] for name in urls}
        for _ in range(rounds):
            for name, samples in sequential(urls, n).items():
                latency[name] += samples
            for name, url in urls.items():
                rate[name].append(asyncio.run(concurrent(url, 32, seconds)))
    finally:
        for process in processes.values():
            process.terminate()
            process.wait(10)
    print(f"a tool over REST, 127.0.0.1, one uvicorn worker each ({rounds} rounds)\n")
    print(f"{'server':<30}{'p50 ms':>9}{'p95 ms':>9}{'32 clients, calls/s':>22}")
    p50 = {name: statistics.median(v) for name, v in latency.items()}
    best = {name: statistics.median(v) for name, v in rate.items()}
    for name, values in latency.items():
        p95 = sorted(values)[int(len(values) * 0.95)]
        print(f"{name:<30}{p50[name]:>9.2f}{p95:>9.2f}{best[name]:>22.0f}")
    print()
    for log in ("", ", no access log"):
        ratio = p50[f"tooldeck{log}"] / p50[f"bare FastAPI{log}"]
        throughput = best[f"tooldeck{log}"] / best[f"bare FastAPI{log}"]
        print(
            f"{(log[2:] or 'access log'):<15} p50 {ratio:.2f}x the bare endpoint's "
            f"(target ≤ 1.2x: {'met' if ratio <= 1.2 else 'MISSED'}); throughput "
            f"{throughput:.2f}x (target ≥ 0.9x: {'met' if throughput >= 0.9 else 'MISSED'})"
        )


if __name__ == "__main__":
    main()
