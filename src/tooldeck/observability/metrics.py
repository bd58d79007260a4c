"""Prometheus metrics from the audit store's running totals (served at ``/metrics``).

- ``tooldeck_tool_calls_total{tool, status, error_type, profile}``: counter.
- ``tooldeck_tool_call_duration_seconds{tool, profile}``: histogram (buckets from
  ``tables.BUCKETS_MS``).
- with a result cache, its hits, misses and saved seconds in this process
  (``CacheCollector``).

The figures come from ``tool_call_totals`` at scrape time, so they count the calls of
every process writing to the audit database (CLI, MCP stdio, the server), survive
restarts and ignore retention pruning. ``error_type`` and ``profile`` are empty when
absent, which Prometheus reads as an unset label.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping

from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector, CollectorRegistry

from tooldeck.observability.audit import AuditStore
from tooldeck.observability.tables import BUCKETS_MS
from tooldeck.observability.totals import Totals

__all__ = ["AuditTotalsCollector", "CacheCollector", "metrics_registry"]

_BOUNDS = [f"{ms / 1000:g}" for ms in BUCKETS_MS] + ["+Inf"]


class AuditTotalsCollector(Collector):
    """A Prometheus collector reading ``store.totals()`` on each scrape.

    Args:
        store: The audit store whose totals are exposed.
    """

    def __init__(self, store: AuditStore) -> None:
        self.store = store

    def collect(self) -> Iterator[Metric]:
        """The call counter and the latency histogram."""
        calls = CounterMetricFamily(
            "tooldeck_tool_calls",
            "Tool calls, by tool, status, error type and profile.",
            labels=["tool", "status", "error_type", "profile"],
        )
        merged: dict[tuple[str, str], Totals] = defaultdict(Totals)
        for (tool, status, error_type, profile), totals in self.store.totals():
            calls.add_metric([tool, status, error_type, profile], totals.calls)
            merged[(tool, profile)].merge(totals)
        latency = HistogramMetricFamily(
            "tooldeck_tool_call_duration_seconds",
            "Tool call duration in seconds, by tool and profile.",
            labels=["tool", "profile"],
        )
        for (tool, profile), totals in sorted(merged.items()):
            cumulative, running = [], 0
            for bound, count in zip(_BOUNDS, totals.buckets, strict=True):
                running += count
                cumulative.append((bound, float(running)))
            latency.add_metric([tool, profile], cumulative, totals.duration_ms_sum / 1000)
        yield calls
        yield latency


class CacheCollector(Collector):
    """The result cache's counters of this process (``providers.cache``).

    - ``tooldeck_cache_hits_total`` / ``tooldeck_cache_misses_total``: calls of cached
      tools answered from the cache / run;
    - ``tooldeck_cache_saved_seconds_total``: the time the hits did not spend.

    Args:
        stats: Reads ``hits``, ``misses``, ``saved_s`` now.
    """

    def __init__(self, stats: Callable[[], Mapping[str, float]]) -> None:
        self.stats = stats

    def collect(self) -> Iterator[Metric]:
        """The three counters."""
        now = self.stats()
        for name, key, text in (
            ("tooldeck_cache_hits", "hits", "Calls answered from the result cache."),
            ("tooldeck_cache_misses", "misses", "Calls of cached tools that ran."),
            ("tooldeck_cache_saved_seconds", "saved_s", "Time the cache hits did not spend."),
        ):
            yield CounterMetricFamily(name, text, value=now[key])


def metrics_registry(
    store: AuditStore, cache: Callable[[], Mapping[str, float]] | None = None
) -> CollectorRegistry:
    """A registry (not the process-global one) for one scrape.

    It holds ``AuditTotalsCollector(store)``, and ``CacheCollector(cache)`` when a
    result cache runs.
    """
    registry = CollectorRegistry(auto_describe=False)
    registry.register(AuditTotalsCollector(store))
    if cache is not None:
        registry.register(CacheCollector(cache))
    return registry
