"""The tools UI under load: 5,000 REST calls from a second process, with 100,000 audit rows.

    .venv/bin/python benchmarks/ui_load.py [--rows 100000] [--calls 5000] [--concurrency 8]

1. Writes ``--rows`` records through ``AuditStore.record`` (the real write path) into a
   fresh data dir, spread over the last 7 days (mixed tools, profiles, errors).
2. Starts ``tooldeck serve`` on 127.0.0.1 and times what each UI page loads, idle:
   the history page (the page itself + ``/api/audit`` unfiltered and filtered), the
   metrics page (``/api/stats`` over 7 days, 24 buckets) and ``/metrics``.
3. A second process makes ``--calls`` REST calls (bounded loop, ``--concurrency``
   workers); the same page timings are taken while it runs.
4. With Debian's Chromium present, Playwright opens ``/tools/history`` 10 times and
   reads the page's own ``tooldeck:rendered`` mark: navigation start → 50 rows drawn
   (document, assets, catalog and history calls, rendering), idle.
5. Stops the server (flushing the audit queue) and checks the store has exactly
   ``--rows + --calls`` rows. Target: history page < 300 ms with 100k rows.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import httpx

from tooldeck.core import ToolContext, ToolError, ToolResult
from tooldeck.core.result import ErrorType, ResultMetadata
from tooldeck.observability import AuditStore

TOOLS = ["get_positions", "get_quotes", "get_activity", "python", "files", "web", "math"]
PROFILES = [None, "analyst", "support"]

LOAD = textwrap.dedent(
    """
    import sys, threading, time, httpx
    url, calls, workers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    lock, latencies, statuses, next_i = threading.Lock(), [], {}, [0]
    def work():
        with httpx.Client(timeout=30) as client:
            while True:
                with lock:
                    if next_i[0] >= calls:
                        return
                    i = next_i[0]; next_i[0] += 1
                t0 = time.perf_counter()
                r = client.post(url, json={"symbol": ["AAPL", "MSFT", "VOO"][i % 3]})
                ms = (time.perf_counter() - t0) * 1000
                with lock:
                    latencies.append(ms); statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
    t0 = time.perf_counter()
    threads = [threading.Thread(target=work) for _ in range(workers)]
    [t.start() for t in threads]; [t.join() for t in threads]
    wall = time.perf_counter() - t0
    latencies.sort()
    print(f"{wall:.3f} {latencies[len(latencies)//2]:.2f} {latencies[int(len(latencies)*0.95)]:.2f} {statuses}")
    """
)


def seed(data_dir: Path, rows: int) -> float:
    """Write ``rows`` audit records; returns seconds taken."""
    rng = random.Random(7)
    store = AuditStore.sqlite(data_dir / "audit.db", batch_size=2000)
    started = time.perf_counter()
    for i in range(rows):
        error: ErrorType | None = rng.choice([None] * 9 + ["validation", "timeout"])  # type: ignore[list-item]
        result = ToolResult(
            status="error" if error else "success",
            data=None if error else {"symbol": "AAPL", "price": 228.42, "i": i},
            error=ToolError(type=error, message="seeded failure") if error else None,
            source_id="tool:quotes:v1",
            metadata=ResultMetadata(duration_ms=rng.lognormvariate(0, 1.2)),
        )
        store.record(
            rng.choice(TOOLS),
            {"symbol": "AAPL", "i": i},
            ToolContext(profile=rng.choice(PROFILES)),
            result,
        )
    store.close()
    took = time.perf_counter() - started
    with sqlite3.connect(data_dir / "audit.db") as conn:  # spread over the last 7 days, in id order
        conn.execute(
            "update tool_calls set created_at = strftime('%Y-%m-%d %H:%M:%f000', 'now', "
            "printf('-%d seconds', (? - id) * 604800 / ?))",
            (rows, rows),
        )
        conn.execute("drop table tool_call_hours")  # the hourly totals, from the new times:
    AuditStore.sqlite(data_dir / "audit.db").close()  # rebuilt when the store opens
    return took


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def page_timings(url: str, repeats: int) -> dict[str, tuple[float, float]]:
    """p50/p95 ms of each page's requests (the page's own document + its data calls)."""
    cases = {
        "history": ["/tools/history", "/api/audit?limit=50"],
        "history ?tool=": ["/tools/history", "/api/audit?limit=50&tool=python"],
        "history ?status=error&24h": [
            "/tools/history",
            "/api/audit?limit=50&status=error&since=24h",
        ],
        "history ?profile=": ["/tools/history", "/api/audit?limit=50&profile=support"],
        "history ?until=6d": ["/tools/history", "/api/audit?limit=50&until=6d"],
        "metrics 7d": ["/tools/metrics", "/api/stats?since=7d&buckets=24"],
        "metrics 24h": ["/tools/metrics", "/api/stats?since=24h&buckets=24"],
        "/metrics": ["/metrics"],
    }
    out = {}
    with httpx.Client(base_url=url, timeout=60) as client:
        for name, paths in cases.items():
            samples = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                for path in paths:
                    client.get(path).raise_for_status()
                samples.append((time.perf_counter() - t0) * 1000)
            samples.sort()
            out[name] = (
                statistics.median(samples),
                samples[int(len(samples) * 0.95) - 1 if len(samples) > 1 else 0],
            )
    return out


def browser_render_ms(url: str, repeats: int) -> list[float] | None:
    if not Path("/usr/bin/chromium").exists():
        return None
    from playwright.sync_api import sync_playwright

    args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=args)
        page = browser.new_page()
        page.goto(f"{url}/tools/history")  # warm: catalog, assets in cache
        page.wait_for_selector("#history tr.clickable >> nth=49")
        times = []
        for _ in range(repeats):
            page.goto(f"{url}/tools/history")
            page.wait_for_selector("#history tr.clickable >> nth=49")
            # the page marks the moment it has drawn (ms since this navigation started)
            times.append(
                page.evaluate("performance.getEntriesByName('tooldeck:rendered')[0].startTime")
            )
        browser.close()
    return sorted(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--calls", type=int, default=5_000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp) / "data"
        took = seed(data_dir, args.rows)
        print(f"seeded {args.rows:,} audit rows through AuditStore.record in {took:.1f} s "
              f"({args.rows / took:,.0f} rows/s)")  # fmt: skip
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLDECK_")}
        env["TOOLDECK_DATA_DIR"] = str(data_dir)
        server = subprocess.Popen(
            [sys.executable, "-m", "tooldeck", "serve", "--port", str(port)],
            env=env, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                        break
                except httpx.TransportError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)
            idle = page_timings(url, args.repeats)
            render = browser_render_ms(url, 10)
            load = subprocess.Popen(
                [sys.executable, "-c", LOAD, f"{url}/api/tools/execute/get_quotes", str(args.calls), str(args.concurrency)],
                stdout=subprocess.PIPE, text=True,
            )  # fmt: skip
            busy = page_timings(url, max(5, args.repeats // 4))
            out, _ = load.communicate(timeout=600)
            wall, p50, p95, statuses = out.split(" ", 3)
        finally:
            server.send_signal(signal.SIGINT)
            server.wait(timeout=60)
        with sqlite3.connect(data_dir / "audit.db") as conn:
            rows = conn.execute("select count(*) from tool_calls").fetchone()[0]
        print(f"\nload: {args.calls:,} REST calls from a second process, {args.concurrency} workers: "
              f"{float(wall):.1f} s, {args.calls / float(wall):,.0f} calls/s, p50 {p50} ms, p95 {p95} ms, "
              f"HTTP {statuses.strip()}")  # fmt: skip
        print(
            f"\n{'page (document + data calls)':32} {'idle p50':>9} {'idle p95':>9} {'load p50':>9} {'load p95':>9}"
        )
        for name, (i50, i95) in idle.items():
            b50, b95 = busy[name]
            print(f"{name:32} {i50:8.1f}ms {i95:8.1f}ms {b50:8.1f}ms {b95:8.1f}ms")
        if render is None:
            print("\nbrowser render: skipped (no /usr/bin/chromium)")
        else:
            print(f"\nhistory page in Chromium, navigation → 50 rows rendered, idle: "
                  f"p50 {statistics.median(render):.0f} ms, max {render[-1]:.0f} ms (target < 300 ms)")  # fmt: skip
        expected = args.rows + args.calls
        verdict = "OK" if rows == expected else "MISMATCH"
        print(f"audit rows after the run: {rows:,} (expected {expected:,}: {verdict})")
        if rows != expected:
            sys.exit(1)


if __name__ == "__main__":
    main()
