"""No request freezes the server (issue 18): each attack against a real ``tooldeck serve``.

While the attacks run, a thread polls ``/healthz``; every answer must come within 1 s,
and afterwards another tool's call must succeed. The attacks: runaway math (nested
powers, huge substituted values), catastrophic regular expressions, huge globs and
inputs, and a FIFO in the files root read more times than a thread pool has threads.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from processes import Server, free_port

from deadlines import scaled

pytestmark = pytest.mark.integration

MATH_TIMEOUT_S = 3


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("freeze")
    files = root / "files"
    files.mkdir()
    (files / "evil.txt").write_text("a" * 40 + "!\n")
    os.mkfifo(files / "pipe")
    config = root / "tooldeck.toml"
    config.write_text(
        f'[builtin]\nroots = ["{files}"]\n'
        f"[policy.tools.math]\ntimeout_s = {MATH_TIMEOUT_S}\nmax_attempts = 1\n"
    )
    s = Server(root / "data", free_port(), extra_args=["--config", str(config)])
    yield s
    s.stop()


class HealthWatch:
    """Polls ``/healthz`` every 50 ms in a thread; records each answer's latency."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.latencies: list[float] = []
        self.failures: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        with httpx.Client(timeout=5) as client:
            while not self._stop.is_set():
                started = time.perf_counter()
                try:
                    ok = client.get(f"{self.url}/healthz").status_code == 200
                except httpx.HTTPError as exc:
                    self.failures.append(repr(exc))
                    ok = True
                self.latencies.append(time.perf_counter() - started)
                if not ok:
                    self.failures.append("status")
                self._stop.wait(0.05)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)


def call(server: Server, tool: str, arguments: Any, **kw: Any) -> httpx.Response:
    return httpx.post(f"{server.url}/api/tools/execute/{tool}", json=arguments, timeout=60, **kw)


ATTACKS: list[tuple[str, dict[str, Any], set[int]]] = [
    ("math", {"action": "evaluate", "expression": "(9^9999)^9999"}, {504}),
    ("math", {"action": "evaluate", "expression": "factorial(x)", "values": {"x": 1e9}}, {504}),
    ("math", {"action": "evaluate", "expression": "9^y", "values": {"y": 1e12}}, {504, 422}),
    ("math", {"action": "evaluate", "expression": "gamma(10^8)"}, {504, 200}),
    ("math", {"action": "evaluate", "expression": "binomial(10^100, 10^50)"}, {504, 200}),
    ("math", {"action": "simplify", "expression": "(x+1)^999 - (x-1)^999"}, {504, 200}),
    ("files", {"action": "search", "query": "(a+)+$", "regex": True}, {200}),  # regex copes
    ("files", {"action": "search", "query": "(a|aa)+$", "regex": True}, {422}),  # time budget
    ("files", {"action": "list", "pattern": "[" * 20_000}, {422}),
    ("files", {"action": "search", "query": "x", "glob": "[" * 20_000}, {422}),
    ("get_facts", {"topic": "ira " * 25_000}, {422}),
    ("get_activity", {"symbol": "A" * 500_000}, {422}),
    ("get_activity", {"symbol": "A" * 3_000_000}, {413}),
    *[("files", {"action": "read", "path": "pipe"}, {422}) for _ in range(8)],
]


def test_attacks_never_freeze_healthz_and_other_tools_still_answer(server: Server) -> None:
    watch = HealthWatch(server.url)
    try:
        time.sleep(0.2)
        with ThreadPoolExecutor(8) as pool:
            started = time.perf_counter()
            answers = list(pool.map(lambda attack: call(server, attack[0], attack[1]), ATTACKS))
            elapsed = time.perf_counter() - started
        after = call(server, "get_quotes", {"symbol": "AAPL"})
        search = call(server, "files", {"action": "search", "query": "a+!", "regex": True})
    finally:
        watch.stop()
    for (tool, arguments, statuses), answer in zip(ATTACKS, answers, strict=True):
        assert answer.status_code in statuses, (tool, str(arguments)[:80], answer.text[:300])
    assert after.status_code == 200 and after.json()["status"] == "success"
    assert search.status_code == 200 and search.json()["data"]["matches"]
    assert watch.failures == []
    assert len(watch.latencies) >= 10
    assert max(watch.latencies) < 1.0, sorted(watch.latencies)[-5:]
    assert elapsed < scaled(MATH_TIMEOUT_S * 4)  # killed at the policy timeout, not run to the end
