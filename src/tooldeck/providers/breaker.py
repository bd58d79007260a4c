"""``CircuitBreaker``: stop calling a tool that keeps failing, try again later."""

from __future__ import annotations

import time
from collections.abc import Callable
from enum import StrEnum

__all__ = ["BreakerState", "CircuitBreaker"]


class BreakerState(StrEnum):
    """Where a breaker is in its cycle."""

    closed = "closed"
    open = "open"
    half_open = "half_open"


class CircuitBreaker:
    """Opens after ``failure_threshold`` consecutive failures; half-opens after ``reset_timeout_s``.

    Semantics:
        Closed: calls pass; a success resets the failure count. Open: ``allow()`` is
        False until ``reset_timeout_s`` have passed since it opened. Half-open: one
        trial call is allowed at a time; its success closes the breaker, its failure
        opens it again for another ``reset_timeout_s``.

    Args:
        failure_threshold: Consecutive failures that open the breaker (≥ 1).
        reset_timeout_s: Seconds the breaker stays open before a trial call.
        clock: Monotonic clock in seconds (injectable for tests).
    """

    __slots__ = (
        "_clock",
        "_failures",
        "_opened_at",
        "_trial",
        "failure_threshold",
        "reset_timeout_s",
    )

    def __init__(
        self,
        failure_threshold: int = 5,
        reset_timeout_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.failure_threshold = max(1, failure_threshold)
        self.reset_timeout_s = reset_timeout_s
        self._clock = clock
        self._failures = 0
        self._opened_at: float | None = None
        self._trial = False

    @property
    def state(self) -> BreakerState:
        """The current state (open turns half-open once the reset timeout has passed)."""
        if self._opened_at is None:
            return BreakerState.closed
        if self._clock() - self._opened_at >= self.reset_timeout_s:
            return BreakerState.half_open
        return BreakerState.open

    @property
    def retry_after_s(self) -> float:
        """Seconds until a trial call will be allowed (0 when allowed now)."""
        if self._opened_at is None:
            return 0.0
        return max(0.0, self.reset_timeout_s - (self._clock() - self._opened_at))

    def allow(self) -> bool:
        """Whether a call may go through now (claims the trial slot when half-open)."""
        if self._opened_at is None:
            return True
        if self._trial or self._clock() - self._opened_at < self.reset_timeout_s:
            return False
        self._trial = True
        return True

    def record(self, success: bool) -> None:
        """Record the outcome of a call that ``allow()`` let through."""
        if success:
            self._failures, self._opened_at, self._trial = 0, None, False
            return
        self._failures += 1
        if self._trial or self._failures >= self.failure_threshold:
            self._opened_at, self._trial = self._clock(), False
