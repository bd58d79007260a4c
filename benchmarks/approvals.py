"""Approval store operations: in memory vs the shared SQLite file (``approvals.db``).

A guarded call costs a ``take`` (no decision yet) and a ``request``; deciding costs a
``decide``; the later repeat one more ``take``. Prints µs per operation for each store,
with 500 decided approvals already in the store (a busy hour's history), and the ratio.
Run: .venv/bin/python benchmarks/approvals.py
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from tooldeck.core.context import ToolContext
from tooldeck.providers.approvals import ApprovalStore


def measure(store: ApprovalStore) -> tuple[float, float]:
    """(µs per missed take, µs per request + approve + take) with 500 decided before."""
    ctx = ToolContext(user="u", channel="c")
    for i in range(500):
        store.approve(store.request(store.new_request("t", {"old": i}, ctx)).request.approval_id)
    missed = store.new_request("t", {"x": 1}, ctx)
    n = 2000
    start = time.perf_counter()
    for _ in range(n):
        store.take(missed)
    take = (time.perf_counter() - start) / n * 1e6
    start = time.perf_counter()
    for i in range(500):
        request = store.new_request("t", {"y": i}, ctx)
        store.approve(store.request(request).request.approval_id)
        store.take(request)
    cycle = (time.perf_counter() - start) / 500 * 1e6
    return take, cycle


def main() -> None:
    """Print the figures."""
    folder = Path(tempfile.mkdtemp())
    memory = measure(ApprovalStore())
    shared = measure(ApprovalStore(path=folder / "approvals.db"))
    print("µs per operation (500 decided approvals in the store)")
    print(f"  missed take:             memory {memory[0]:8.1f}   file {shared[0]:8.1f}")
    print(f"  request + approve + take: memory {memory[1]:8.1f}   file {shared[1]:8.1f}")
    print(f"  file / memory: take {shared[0] / memory[0]:.0f}x, cycle {shared[1] / memory[1]:.0f}x")


if __name__ == "__main__":
    main()
