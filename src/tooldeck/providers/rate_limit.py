"""``RateLimiter``: a token bucket (calls per minute, with a burst)."""

from __future__ import annotations

from time import monotonic

__all__ = ["RateLimiter"]


class RateLimiter:
    """Allows ``per_minute`` calls per minute on average, up to ``burst`` at once.

    Semantics:
        The bucket holds at most ``burst`` tokens and refills continuously at
        ``per_minute / 60`` tokens per second; a call takes one token or is refused.
        Time is ``time.monotonic()``.
    """

    __slots__ = ("_stamp", "_tokens", "burst", "rate_per_s")

    def __init__(self, per_minute: float, burst: int | None = None) -> None:
        self.rate_per_s = per_minute / 60.0
        self.burst = float(burst if burst is not None else max(1, round(per_minute / 60.0)))
        self._tokens = self.burst
        self._stamp = monotonic()

    def acquire(self) -> bool:
        """Take a token if one is available."""
        now = monotonic()
        self._tokens = min(self.burst, self._tokens + (now - self._stamp) * self.rate_per_s)
        self._stamp = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False

    @property
    def retry_after_s(self) -> float:
        """Seconds until a token is available."""
        return max(0.0, (1.0 - self._tokens) / self.rate_per_s) if self.rate_per_s else 0.0
