"""``PolicyProvider``: timeout, retries, circuit breaker and concurrency cap for any provider.

Policies are data (``PolicyConfig``): defaults for every tool, then the tool's own
``timeout_s``, then a per-tool override from configuration, most specific wins::

    [policy]                      # tooldeck.toml
    timeout_s = 60
    max_attempts = 3
    [policy.tools.get_quotes]
    timeout_s = 5
    max_concurrency = 4
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable
from dataclasses import dataclass, field
from time import monotonic, perf_counter
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tooldeck.core.context import EMPTY_CONTEXT, ToolContext, new_request_id
from tooldeck.core.definition import ToolDefinition
from tooldeck.core.result import ToolError, ToolResult, trusted_metadata
from tooldeck.core.tool import Arguments, error_result
from tooldeck.providers.base import ToolsProvider, unknown_name
from tooldeck.providers.breaker import BreakerState, CircuitBreaker
from tooldeck.providers.deadline import DeadlineWatchdog, first_step
from tooldeck.providers.rate_limit import RateLimiter
from tooldeck.providers.wrapper import WrapperProvider

__all__ = [
    "CallPolicyOverride",
    "PolicyConfig",
    "PolicyOverride",
    "PolicyProvider",
    "ProfilePolicy",
    "ToolPolicy",
]

# Error types that say the tool (not the caller) is failing; they feed the breaker.
_TOOL_FAULTS = frozenset({"execution", "timeout", "unavailable"})


def _tool_fault(result: ToolResult) -> bool:
    """Whether ``result`` counts against the breaker: a tool failure that may pass.

    A non-retryable ``unavailable`` (an unconfigured tool) is permanent: opening the
    breaker on it would only turn later malformed calls' ``validation`` errors into
    ``circuit_open``.
    """
    error = result.error
    if error is None or error.type not in _TOOL_FAULTS:
        return False
    return error.type != "unavailable" or error.retryable


class ToolPolicy(BaseModel):
    """The policy one tool runs under (seed 001: 60 s timeout, 3 attempts)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    timeout_s: float | None = Field(60.0, gt=0)
    """Per-attempt timeout in seconds; None for none."""
    max_attempts: int = Field(3, ge=1)
    """Attempts for errors the tool marks retryable (never validation errors)."""
    initial_backoff_s: float = Field(0.5, ge=0)
    """Wait before the 2nd attempt; doubles each attempt."""
    max_backoff_s: float = Field(8.0, ge=0)
    """Cap on the wait between attempts."""
    jitter_s: float = Field(0.25, ge=0)
    """Random extra wait, uniform in [0, jitter_s]."""
    requires_confirmation: bool = False
    """A human must approve each call (see ``ConfirmingToolsProvider``)."""
    breaker_enabled: bool = True
    """Whether the circuit breaker guards the tool."""
    failure_threshold: int = Field(5, ge=1)
    """Consecutive failures (execution, timeout, unavailable) that open the breaker."""
    reset_timeout_s: float = Field(30.0, ge=0)
    """Seconds the breaker stays open before a trial call."""
    max_concurrency: int | None = Field(None, ge=1)
    """Calls of this tool running at once; None for no cap."""
    max_queue: int = Field(100, ge=0)
    """Calls that may wait for a slot beyond the cap; more get ``unavailable``."""
    rate_per_minute: float | None = Field(None, gt=0)
    """Calls allowed per minute (token bucket, burst ``rate_burst``); None for no limit."""
    rate_burst: int | None = Field(None, ge=1)
    """Calls allowed at once by the rate limit; default: one second's worth, at least 1."""
    cache_ttl_s: float | None = Field(None, gt=0)
    """Seconds a read-only tool's result answers the same call again (same caller,
    profile and arguments) without running it; None: not cached (``providers.cache``)."""
    invalidates: tuple[str, ...] | None = None
    """For a tool that is not read-only: the cached results its calls end, by tool name
    or ``tag:<tag>``; None: all of them (the safe default); ``[]``: none."""

    def backoff_s(self, attempt: int) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        return float(self._base_backoff_s(attempt) + random.uniform(0, self.jitter_s))

    def longest_s(self) -> float | None:
        """Seconds one call may take at most under this policy; None without a timeout.

        Every attempt times out, with the longest wait (jitter included) between them.
        """
        if self.timeout_s is None:
            return None
        waits = sum(self._base_backoff_s(n) + self.jitter_s for n in range(1, self.max_attempts))
        return self.timeout_s * self.max_attempts + waits

    def _base_backoff_s(self, attempt: int) -> float:
        return float(min(self.max_backoff_s, self.initial_backoff_s * 2 ** (attempt - 1)))


class CallPolicyOverride(BaseModel):
    """Overrides of the per-call fields (timeouts, retries, confirmation); unset inherit.

    These are the fields a profile may change: breakers, concurrency caps and rate
    limits guard the tool itself, so they are shared by every profile.
    """

    model_config = ConfigDict(extra="forbid")

    timeout_s: float | None = Field(None, gt=0)
    max_attempts: int | None = Field(None, ge=1)
    initial_backoff_s: float | None = Field(None, ge=0)
    max_backoff_s: float | None = Field(None, ge=0)
    jitter_s: float | None = Field(None, ge=0)
    requires_confirmation: bool | None = None
    cache_ttl_s: float | None = Field(None, gt=0)


class PolicyOverride(CallPolicyOverride):
    """An override of any ``ToolPolicy`` field, per tool or per provider; unset inherit."""

    breaker_enabled: bool | None = None
    failure_threshold: int | None = Field(None, ge=1)
    reset_timeout_s: float | None = Field(None, ge=0)
    max_concurrency: int | None = Field(None, ge=1)
    max_queue: int | None = Field(None, ge=0)
    rate_per_minute: float | None = Field(None, gt=0)
    rate_burst: int | None = Field(None, ge=1)
    invalidates: tuple[str, ...] | None = None


class ProfilePolicy(CallPolicyOverride):
    """A profile's policy layer: defaults for its calls, then per provider and per tool."""

    providers: dict[str, CallPolicyOverride] = Field(default_factory=dict)
    """Overrides keyed by provider id (``local``, an MCP server id)."""
    tools: dict[str, CallPolicyOverride] = Field(default_factory=dict)
    """Overrides keyed by tool name."""


class PolicyConfig(ToolPolicy):
    """Default policy for every tool, then overrides per provider, per tool, per profile.

    Semantics:
        ``resolve`` applies layers from least to most specific, each setting only the
        fields it names: defaults; the tool's own ``timeout_s`` and
        ``requires_confirmation``; the profile's defaults; the provider's override; the
        profile's provider override; the tool's override; the profile's tool override.
        ``explain`` reports, per field, the value and the layer it came from.
    """

    providers: dict[str, PolicyOverride] = Field(default_factory=dict)
    """Overrides keyed by provider id (``local``, an MCP server id)."""
    tools: dict[str, PolicyOverride] = Field(default_factory=dict)
    """Overrides keyed by tool name (or alias)."""
    profiles: dict[str, ProfilePolicy] = Field(default_factory=dict)
    """Per-profile layers, keyed by profile name."""

    def layers(
        self, definition: ToolDefinition, profile: str | None = None
    ) -> list[tuple[str, dict[str, Any]]]:
        """The layers that apply to ``definition`` in ``profile``, least specific first.

        Returns:
            ``(source, values)`` pairs, e.g. ``("tool get_quotes", {"timeout_s": 5})``.
        """
        layers: list[tuple[str, dict[str, Any]]] = [
            ("default", self.model_dump(exclude={"providers", "tools", "profiles"}))
        ]
        own: dict[str, Any] = {}
        if definition.timeout_s is not None:
            own["timeout_s"] = definition.timeout_s
        if definition.requires_confirmation:
            own["requires_confirmation"] = True
        if own:
            layers.append(("tool definition", own))
        layer = self.profiles.get(profile) if profile is not None else None
        names = (definition.name, *definition.aliases)
        provider_id = definition.server_id or definition.provider
        if layer is not None:
            layers.append((f"profile {profile}", _set(layer, exclude={"providers", "tools"})))
        if provider_id is not None:
            if provider_id in self.providers:
                layers.append((f"provider {provider_id}", _set(self.providers[provider_id])))
            if layer is not None and provider_id in layer.providers:
                layers.append(
                    (
                        f"profile {profile} provider {provider_id}",
                        _set(layer.providers[provider_id]),
                    )
                )
        for name in names:
            if name in self.tools:
                layers.append((f"tool {name}", _set(self.tools[name])))
                break
        if layer is not None:
            for name in names:
                if name in layer.tools:
                    layers.append((f"profile {profile} tool {name}", _set(layer.tools[name])))
                    break
        return [(source, values) for source, values in layers if values]

    def resolve(self, definition: ToolDefinition, profile: str | None = None) -> ToolPolicy:
        """The policy for ``definition`` in ``profile``, most specific layer winning."""
        values: dict[str, Any] = {}
        for _, layer in self.layers(definition, profile):
            values.update(layer)
        return ToolPolicy(**values)

    def explain(
        self, definition: ToolDefinition, profile: str | None = None
    ) -> dict[str, tuple[Any, str]]:
        """Each policy field's value and the layer that set it, e.g. ``{"timeout_s": (5, "tool get_quotes")}``."""
        explained: dict[str, tuple[Any, str]] = {}
        for source, layer in self.layers(definition, profile):
            for key, value in layer.items():
                explained[key] = (value, source)
        return explained


def _set(model: BaseModel, exclude: set[str] | None = None) -> dict[str, Any]:
    return model.model_dump(exclude_unset=True, exclude=exclude)


def _worth_retrying(error: ToolError | None, definition: ToolDefinition) -> bool:
    """The one retry rule.

    A retryable error other than a timeout is retried, unless the call may have run
    and the tool is not ``safe_to_repeat`` (a side effect would happen twice).
    """
    if error is None or not error.retryable or error.type == "timeout":
        return False
    return not error.may_have_run or definition.safe_to_repeat


@dataclass(slots=True)
class _ToolState:
    policy: ToolPolicy
    breaker: CircuitBreaker | None
    definition: ToolDefinition
    limiter: RateLimiter | None = None
    semaphore: asyncio.Semaphore | None = None
    semaphore_loop: asyncio.AbstractEventLoop | None = None
    waiting: int = 0
    by_profile: dict[str, ToolPolicy] = field(default_factory=dict)
    waits: bool = False
    """A call of this tool waited: later calls are armed at once, not run to a first wait."""

    @property
    def name(self) -> str:
        return self.definition.name


class PolicyProvider(WrapperProvider):
    """Applies ``ToolPolicy`` to every call of the wrapped provider's tools.

    Semantics:
        Timeout: the earlier of the policy's ``timeout_s`` and ``ctx.deadline``; a
        timed-out attempt is a ``timeout`` error (retryable, not retried automatically).
        An async tool is cancelled; a tool running in a worker thread is abandoned (a
        thread cannot be killed) and its result discarded. Retries: an error with
        ``retryable=True`` (other than a timeout) is retried up to ``max_attempts`` with
        exponential backoff and jitter, but an error that says the call may have run
        (``ToolError.may_have_run``: an MCP connection lost mid-call) only for a tool
        that is ``safe_to_repeat``, so that a side effect never happens twice;
        ``metadata.attempts`` and ``duration_ms`` cover all attempts. Breaker: ``circuit_open`` (retryable, with ``retry_after_s``) while
        open, and the tool is left out of ``definitions()`` until it half-opens, so a
        model stops calling it; only execution, timeout and unavailable errors count as
        failures. Rate limit and concurrency: beyond ``rate_per_minute``, or beyond
        ``max_queue`` calls waiting for one of ``max_concurrency`` slots, calls get
        ``unavailable`` (retryable). Per-call fields (timeout, retries) follow
        ``ctx.profile``'s layer; breaker, cap and rate limit are per tool, shared by
        every profile. Unknown names pass through to the wrapped provider. State is
        rebuilt when the wrapped provider's tool list changes.
    """

    def __init__(self, wrapped: ToolsProvider, config: PolicyConfig | None = None) -> None:
        super().__init__(wrapped)
        self.config = config or PolicyConfig()
        self._watchdog = DeadlineWatchdog()
        self._states: dict[str, _ToolState] = {}

    def reset(self) -> None:
        """Forget per-tool state (policies, breakers) after a tool-list change."""
        super().reset()
        self._states = {}

    def unavailable(self) -> dict[str, str]:
        """Tools whose breaker is open (plus what the wrapped provider reports)."""
        hidden = dict(self.wrapped.unavailable())
        for name, state in self._states.items():
            breaker = state.breaker
            if name == state.name and breaker is not None and breaker.state is BreakerState.open:
                hidden[name] = (
                    f"circuit open after repeated failures; retried in "
                    f"{breaker.retry_after_s:.0f} s"
                )
        return hidden

    async def _load_state(self, name: str) -> _ToolState | None:
        for definition in await self.wrapped.all_definitions():
            if name != definition.name and name not in definition.aliases:
                continue
            state = self._states.get(definition.name)
            if state is None:
                policy = self.config.resolve(definition)
                state = _ToolState(
                    policy,
                    CircuitBreaker(policy.failure_threshold, policy.reset_timeout_s)
                    if policy.breaker_enabled
                    else None,
                    definition,
                    RateLimiter(policy.rate_per_minute, policy.rate_burst)
                    if policy.rate_per_minute
                    else None,
                )
                self._states[definition.name] = state
            self._states[name] = state
            return state
        return None

    def policy_for(self, name: str, profile: str | None = None) -> ToolPolicy | None:
        """The policy in force for a tool that has been called, else None."""
        state = self._states.get(name)
        return None if state is None else self._policy(state, profile)

    def breaker_for(self, name: str) -> CircuitBreaker | None:
        """The breaker of a tool that has been called, else None."""
        state = self._states.get(name)
        return state.breaker if state else None

    def _policy(self, state: _ToolState, profile: str | None) -> ToolPolicy:
        if profile is None or profile not in self.config.profiles:
            return state.policy
        policy = state.by_profile.get(profile)
        if policy is None:
            resolved = self.config.resolve(state.definition, profile)
            shared = ("breaker_enabled", "failure_threshold", "reset_timeout_s")
            policy = resolved.model_copy(update={k: getattr(state.policy, k) for k in shared})
            state.by_profile[profile] = policy
        return policy

    async def execute(
        self, name: str, arguments: Arguments = None, ctx: ToolContext | None = None
    ) -> ToolResult:
        """Run the call under the tool's policy; never raises for tool failures."""
        if type(name) is not str:
            return await unknown_name(self, name, ctx)
        state = self._states.get(name) or await self._load_state(name)
        if state is None:
            return await self.wrapped.execute(name, arguments, ctx)
        start = perf_counter()
        profile = ctx.profile if ctx is not None else None
        policy = (
            state.policy
            if profile is None or profile not in self.config.profiles
            else self._policy(state, profile)
        )
        breaker = state.breaker
        if breaker is not None and not breaker.allow():
            return error_result(
                "circuit_open",
                f"{state.name} is temporarily disabled after repeated failures; "
                f"try again in {breaker.retry_after_s:.0f} s or use another tool.",
                self._meta(state.name, ctx, start),
                details={"retry_after_s": round(breaker.retry_after_s, 3)},
                retryable=True,
            )
        limiter = state.limiter
        if limiter is not None and not limiter.acquire():
            return error_result(
                "unavailable",
                f"{state.name} is limited to {policy.rate_per_minute:g} calls per minute; "
                f"try again in {limiter.retry_after_s:.1f} s.",
                self._meta(state.name, ctx, start),
                details={"retry_after_s": round(limiter.retry_after_s, 3)},
                retryable=True,
            )
        timeout = policy.timeout_s
        if (
            policy.max_concurrency is not None
            or timeout is None
            or (ctx is not None and ctx.deadline is not None)
        ):
            result = await (
                self._attempt(state, policy, name, arguments, ctx)
                if policy.max_concurrency is None
                else self._limited(state, policy, name, arguments, ctx)
            )
        else:  # the common case, inlined: no extra coroutine frame, and a call that
            # finishes without waiting needs no deadline (no timer fires while it runs)
            call = self.wrapped.execute(name, arguments, ctx)
            if state.waits:  # its calls wait: armed at once, no relay for each wait
                result = await self._within(state, ctx, start, timeout, call)
            else:
                done, result = first_step(call)
                if not done:
                    state.waits = True
                    result = await self._within(state, ctx, start, timeout, result)
        if policy.max_attempts > 1 and _worth_retrying(result.error, state.definition):
            result = await self._retry(state, policy, name, arguments, ctx, result, start)
        if breaker is not None:
            breaker.record(not _tool_fault(result))
        return result

    async def _attempt(
        self,
        state: _ToolState,
        policy: ToolPolicy,
        name: str,
        arguments: Arguments,
        ctx: ToolContext | None,
    ) -> ToolResult:
        timeout = policy.timeout_s
        if ctx is not None and ctx.deadline is not None:
            remaining = ctx.deadline - monotonic()
            timeout = remaining if timeout is None else min(timeout, remaining)
        if timeout is None:
            return await self.wrapped.execute(name, arguments, ctx)
        start = perf_counter()
        if timeout <= 0:
            return self._timeout(state, ctx, start, 0.0)
        done, result = first_step(self.wrapped.execute(name, arguments, ctx))
        return result if done else await self._within(state, ctx, start, timeout, result)

    async def _within(
        self,
        state: _ToolState,
        ctx: ToolContext | None,
        start: float,
        limit_s: float,
        call: Awaitable[ToolResult],
    ) -> ToolResult:
        """``call`` (started at ``start``) awaited under a deadline ``limit_s`` after start."""
        deadline = self._watchdog.arm(limit_s - (perf_counter() - start))
        try:
            result = await call
        except asyncio.CancelledError:
            if not deadline.expired or deadline.task.uncancel() > 0:
                raise
            return self._timeout(state, ctx, start, limit_s)
        finally:
            self._watchdog.disarm(deadline)
        if deadline.expired:  # the tool swallowed our cancellation: keep its result
            deadline.task.uncancel()
        return result

    async def _limited(
        self,
        state: _ToolState,
        policy: ToolPolicy,
        name: str,
        arguments: Arguments,
        ctx: ToolContext | None,
    ) -> ToolResult:
        loop = asyncio.get_running_loop()
        if state.semaphore is None or state.semaphore_loop is not loop:
            state.semaphore = asyncio.Semaphore(state.policy.max_concurrency or 1)
            state.semaphore_loop = loop
        semaphore = state.semaphore
        if semaphore.locked() and state.waiting >= state.policy.max_queue:
            return error_result(
                "unavailable",
                f"{state.name} is at its limit of {state.policy.max_concurrency} concurrent "
                f"calls with {state.waiting} waiting; try again shortly.",
                self._meta(state.name, ctx, perf_counter()),
                retryable=True,
            )
        state.waiting += 1
        try:
            await semaphore.acquire()
        finally:
            state.waiting -= 1
        try:
            return await self._attempt(state, policy, name, arguments, ctx)
        finally:
            semaphore.release()

    async def _retry(
        self,
        state: _ToolState,
        policy: ToolPolicy,
        name: str,
        arguments: Arguments,
        ctx: ToolContext | None,
        result: ToolResult,
        start: float,
    ) -> ToolResult:
        ctx = (ctx or EMPTY_CONTEXT).derive(request_id=result.metadata.request_id)
        attempts = 1
        while attempts < policy.max_attempts:
            delay = policy.backoff_s(attempts)
            if ctx.deadline is not None and monotonic() + delay >= ctx.deadline:
                break
            await asyncio.sleep(delay)
            attempts += 1
            if policy.max_concurrency is None:
                result = await self._attempt(state, policy, name, arguments, ctx)
            else:
                result = await self._limited(state, policy, name, arguments, ctx)
            if not _worth_retrying(result.error, state.definition):
                break
        return result.with_metadata(
            attempts=attempts, duration_ms=round((perf_counter() - start) * 1000, 3)
        )

    def _timeout(
        self, state: _ToolState, ctx: ToolContext | None, start: float, limit: float
    ) -> ToolResult:
        return error_result(
            "timeout",
            f"{state.name} did not finish within {limit:g} s; try a smaller request or try later.",
            self._meta(state.name, ctx, start),
            details={"timeout_s": limit},
            retryable=True,
        )

    @staticmethod
    def _meta(name: str, ctx: ToolContext | None, start: float) -> Any:
        return trusted_metadata(
            name,
            None,
            (ctx and ctx.request_id) or new_request_id(),
            round((perf_counter() - start) * 1000, 3),
        )
