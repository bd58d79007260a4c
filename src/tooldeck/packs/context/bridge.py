"""``ContextBridge``: the service that fetches the user's context (seed 000, decision 14).

It holds the configured adapters, runs those of the categories asked for concurrently,
each under its own timeout, and keeps each adapter's last good result for ``ttl_s``. A
source that fails gives its category an error entry while the others answer.
``normalize`` hands each category's records to its adapter's ``normalize_for_tools``:
the bridge knows no category's shape (seed 000, decision 15).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tooldeck.packs.context.adapter import AdapterResult, ContextAdapter

__all__ = ["ContextBridge"]


class ContextBridge:
    """Fetches, caches and normalises the user's context.

    Args:
        adapters: The configured sources (several may serve one category).
        ttl_s: Seconds a good result is reused before the source is read again.
        timeout_s: Longest wait for one source; a slower one is a retryable error.
    """

    def __init__(
        self, adapters: Sequence[ContextAdapter], *, ttl_s: float = 300.0, timeout_s: float = 10.0
    ) -> None:
        self.adapters = list(adapters)
        self.ttl_s = ttl_s
        self.timeout_s = timeout_s
        self._cache: dict[int, tuple[ContextAdapter, float, AdapterResult]] = {}
        self._last: dict[int, tuple[ContextAdapter, AdapterResult]] = {}

    def with_adapters(self, extra: Sequence[ContextAdapter]) -> ContextBridge:
        """A bridge over these adapters and ``extra``, sharing this one's results.

        A user's own files added to the configured sources: the configured ones' cached
        and last results are this bridge's (entries hold their adapter, so an ``id``
        reused by another object never hits another's result).
        """
        bridge = ContextBridge([*self.adapters, *extra], ttl_s=self.ttl_s, timeout_s=self.timeout_s)
        bridge._cache, bridge._last = self._cache, self._last
        return bridge

    @property
    def categories(self) -> list[str]:
        """The configured categories, in the order of their first adapter."""
        return list(dict.fromkeys(a.category for a in self.adapters))

    def sources(self, category: str) -> list[ContextAdapter]:
        """The adapters of ``category``."""
        return [a for a in self.adapters if a.category == category]

    def last_fetches(self) -> list[AdapterResult]:
        """Every adapter's most recent result (good or not), for a status page."""
        kept = (self._last.get(id(a)) for a in self.adapters)
        return [
            entry[1]
            for entry, a in zip(kept, self.adapters, strict=True)
            if entry and entry[0] is a
        ]

    async def fetch(self, categories: Iterable[str]) -> dict[str, list[AdapterResult]]:
        """The results of every source of ``categories`` (one list per category).

        Sources run concurrently; a fresh cached result is reused; a source over
        ``timeout_s`` gives a retryable error result. Never raises for a source.
        """
        wanted = [a for c in dict.fromkeys(categories) for a in self.sources(c)]
        results = await asyncio.gather(*(self._one(a) for a in wanted))
        out: dict[str, list[AdapterResult]] = {c: [] for c in dict.fromkeys(categories)}
        for result in results:
            out[result.category].append(result)
        return out

    async def _one(self, adapter: ContextAdapter) -> AdapterResult:
        cached = self._cache.get(id(adapter))
        if cached is not None and cached[0] is adapter and cached[1] > time.monotonic():
            return cached[2]
        try:
            result = await asyncio.wait_for(adapter.fetch(), self.timeout_s)
        except TimeoutError:
            result = AdapterResult(
                False,
                adapter.category,
                adapter.platform,
                error=f"{adapter.platform} did not answer within {self.timeout_s:g} s",
                retryable=True,
            )
        if result.success:
            self._cache[id(adapter)] = (adapter, time.monotonic() + self.ttl_s, result)
        self._last[id(adapter)] = (adapter, result)
        return result

    def normalize(
        self, results: Mapping[str, Sequence[AdapterResult]], *, include_alerts: bool = True
    ) -> dict[str, dict[str, Any]]:
        """Each category's good records, shaped by its adapter (``normalize_for_tools``).

        A category whose every source failed gets ``{}``.
        """
        shaped: dict[str, dict[str, Any]] = {}
        for category, category_results in results.items():
            good = [r for r in category_results if r.success]
            sources = self.sources(category)
            if not good or not sources:
                shaped[category] = {}
                continue
            records = [record for r in good for record in r.data]
            shaped[category] = sources[0].normalize_for_tools(
                records, include_alerts=include_alerts
            )
        return shaped
