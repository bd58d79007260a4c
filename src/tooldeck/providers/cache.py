"""``CachingToolsProvider``: a read-only tool's result reused until a write ends it.

Opt-in per tool or profile with the policy's ``cache_ttl_s``::

    [policy.tools.get_quotes]
    cache_ttl_s = 30                      # reuse a quote for 30 s
    [policy.tools.place_order]
    invalidates = ["get_positions", "tag:orders"]   # absent: every cached result

A result is reused only for the same tool, arguments (canonical JSON), caller and
profile, so one user never gets another's. Any call of a tool that is not read-only
through the same stack ends the cached results it declares (``invalidates``; all of
them when it declares nothing), whether it succeeded or not (a failed write may have
changed something), unless it never ran (``validation``, ``denied``, ...). Errors are
never cached, nor results longer than 256,000 characters, nor a read that was under
way when a write ended entries (its result may predate the write). A reused result keeps its ``source_id`` and ``as_of`` (the data's age,
not the answer's) and says ``attempts = 0``: no call was made (the audit records that).
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tooldeck.core.context import ToolContext, new_request_id, principal_of
from tooldeck.core.definition import ToolDefinition
from tooldeck.core.result import ToolResult
from tooldeck.core.tool import Arguments
from tooldeck.core.validation import parse_arguments
from tooldeck.exceptions import InvalidArgumentsError
from tooldeck.providers.base import ToolsProvider
from tooldeck.providers.policy import PolicyConfig, ToolPolicy
from tooldeck.providers.wrapper import WrapperProvider

__all__ = ["CacheStats", "CachingToolsProvider", "caching_configured"]

_NOT_RUN = frozenset({"validation", "denied", "not_found", "confirmation_required", "circuit_open"})
"""Error types of calls that never reached their tool: they change nothing."""


@dataclass
class CacheStats:
    """What the cache did since the process started."""

    hits: int = 0
    """Calls answered from the cache."""
    misses: int = 0
    """Calls of a cached tool that ran."""
    saved_s: float = 0.0
    """Seconds the hits did not spend: the durations of the calls they reused."""
    invalidated: int = 0
    """Entries ended by writes."""

    @property
    def hit_rate(self) -> float:
        """Hits over the calls of cached tools (0 before any)."""
        total = self.hits + self.misses
        return self.hits / total if total else 0.0


class CachingToolsProvider(WrapperProvider):
    """Reuses read-only tools' results (see the module docstring).

    Args:
        wrapped: The provider below (the policy layer).
        config: The policy configuration (``cache_ttl_s``, ``invalidates`` per tool and
            profile).
        max_entries: Most results kept; the least recently used go first.
        max_entry_chars: A result whose text is longer is not kept (4,096 results of 5 MB
            would be 20 GB); it still answers its own call.
        clock: Monotonic seconds (tests move it).
    """

    def __init__(
        self,
        wrapped: ToolsProvider,
        config: PolicyConfig,
        *,
        max_entries: int = 4096,
        max_entry_chars: int = 256_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(wrapped)
        self.config = config
        self.max_entries = max_entries
        self.max_entry_chars = max_entry_chars
        self.clock = clock
        self.stats = CacheStats()
        self._entries: OrderedDict[tuple[str, ...], tuple[float, ToolResult]] = OrderedDict()
        self._by_name: dict[str, ToolDefinition] | None = None
        self._policies: dict[tuple[str, str | None], ToolPolicy] = {}
        self._generation = 0  # writes seen; a read stores only if none ended during it

    def reset(self) -> None:
        """The tools changed: forget their definitions, policies and cached results."""
        super().reset()
        self._by_name = None
        self._policies.clear()
        self._entries.clear()

    async def execute(
        self, name: str, arguments: Arguments = None, ctx: ToolContext | None = None
    ) -> ToolResult:
        """Answer from the cache, or run the call and keep or end entries."""
        definitions = self._by_name
        if definitions is None:
            listed = await self.wrapped.all_definitions()
            definitions = self._by_name = {n: d for d in listed for n in (d.name, *d.aliases)}
        definition = definitions.get(name) if type(name) is str else None
        if definition is None:
            return await self.wrapped.execute(name, arguments, ctx)
        profile = ctx.profile if ctx is not None else None
        policy = self._policy(definition, profile)
        if definition.annotations.read_only:
            if policy.cache_ttl_s is None:
                return await self.wrapped.execute(name, arguments, ctx)
            return await self._cached(definition, policy.cache_ttl_s, arguments, ctx)
        result = await self.wrapped.execute(name, arguments, ctx)
        if result.error is None or result.error.type not in _NOT_RUN:
            self._invalidate(policy.invalidates, definitions)
        return result

    async def _cached(
        self,
        definition: ToolDefinition,
        ttl_s: float,
        arguments: Arguments,
        ctx: ToolContext | None,
    ) -> ToolResult:
        try:
            canonical = json.dumps(parse_arguments(arguments), sort_keys=True, default=str)
        except (InvalidArgumentsError, TypeError, ValueError):  # the tool will say what is wrong
            return await self.wrapped.execute(definition.name, arguments, ctx)
        profile = ctx.profile if ctx is not None else None
        key = (definition.name, canonical, principal_of(ctx), profile or "")
        now = self.clock()
        found = self._entries.get(key)
        if found is not None and found[0] > now:
            self._entries.move_to_end(key)
            self.stats.hits += 1
            self.stats.saved_s += (found[1].metadata.duration_ms or 0.0) / 1000
            return _reused(found[1], ctx)
        self.stats.misses += 1
        generation = self._generation
        result = await self.wrapped.execute(definition.name, arguments, ctx)
        if generation != self._generation:  # a write ended entries meanwhile: may be stale
            return result
        if result.error is None and len(result.llm_body()) <= self.max_entry_chars:
            self._entries[key] = (now + ttl_s, result)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return result

    def _invalidate(
        self, targets: tuple[str, ...] | None, definitions: dict[str, ToolDefinition]
    ) -> None:
        self._generation += 1  # reads under way when the write ended do not store
        if not self._entries:
            return
        if targets is None:
            self.stats.invalidated += len(self._entries)
            self._entries.clear()
            return
        tags = {t.removeprefix("tag:") for t in targets if t.startswith("tag:")}
        names = {t for t in targets if not t.startswith("tag:")}
        names |= {d.name for d in definitions.values() if tags.intersection(d.tags)}
        for key in [k for k in self._entries if k[0] in names]:
            del self._entries[key]
            self.stats.invalidated += 1

    def _policy(self, definition: ToolDefinition, profile: str | None) -> ToolPolicy:
        key = (definition.name, profile)
        policy = self._policies.get(key)
        if policy is None:
            policy = self._policies[key] = self.config.resolve(definition, profile)
        return policy


def caching_configured(config: PolicyConfig) -> bool:
    """Whether any layer of ``config`` sets ``cache_ttl_s`` (else no cache layer is built)."""
    layers: list[Any] = [config, *config.providers.values(), *config.tools.values()]
    for profile in config.profiles.values():
        layers += [profile, *profile.providers.values(), *profile.tools.values()]
    return any(layer.cache_ttl_s is not None for layer in layers)


def _reused(result: ToolResult, ctx: ToolContext | None) -> ToolResult:
    """``result`` as the answer to this call: its request id, no time spent, 0 attempts."""
    request_id = (ctx.request_id if ctx is not None else None) or new_request_id()
    update: dict[str, Any] = {"duration_ms": 0.0, "attempts": 0, "request_id": request_id}
    return result.model_copy(update={"metadata": result.metadata.model_copy(update=update)})
