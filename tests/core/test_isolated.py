"""``IsolatedProcesses``: what comes back from a child, whatever happened in it."""

from __future__ import annotations

import threading

import pytest

from tooldeck.core.isolated import IsolatedProcesses, IsolationError, ProcessLimits

LIMITS = ProcessLimits(timeout_s=10, memory_mb=256)


def _lock() -> object:
    return threading.Lock()  # cannot be pickled back


def _grow() -> int:
    return len(bytearray(1024 * 1024 * 1024))


def _fail() -> None:
    raise ValueError("bad input, line 3")


@pytest.fixture(scope="module")
def pool() -> IsolatedProcesses:
    return IsolatedProcesses(1)


def test_a_result_that_cannot_be_sent_back_is_a_clear_error(pool: IsolatedProcesses) -> None:
    with pytest.raises(RuntimeError, match="the result cannot be sent back: cannot pickle"):
        pool.call(_lock, limits=LIMITS)


def test_the_functions_own_error_and_the_memory_bound(pool: IsolatedProcesses) -> None:
    with pytest.raises(ValueError, match="bad input, line 3"):
        pool.call(_fail, limits=LIMITS)
    with pytest.raises(IsolationError, match="memory_mb=256") as hit:
        pool.call(_grow, limits=LIMITS)
    assert (hit.value.kind, hit.value.limit) == ("memory", "memory_mb")
