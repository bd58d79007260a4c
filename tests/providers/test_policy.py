from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from deadlines import scaled
from tooldeck.core import ToolContext, tool
from tooldeck.exceptions import TransientToolError
from tooldeck.providers import PolicyConfig, PolicyOverride, ToolRegistry
from tooldeck.providers.breaker import BreakerState, CircuitBreaker
from tooldeck.providers.deadline import first_step

pytestmark = pytest.mark.anyio

FAST = {"initial_backoff_s": 0.01, "max_backoff_s": 0.02, "jitter_s": 0.0}


def flaky_tool(fail_times: int) -> Any:
    calls = {"n": 0}

    @tool(name="flaky")
    async def flaky() -> dict[str, int]:
        """Fails ``fail_times`` times, then succeeds."""
        calls["n"] += 1
        if calls["n"] <= fail_times:
            raise TransientToolError(f"attempt {calls['n']} failed")
        return {"attempt": calls["n"]}

    return flaky, calls


async def test_flaky_tool_succeeds_on_attempt_three() -> None:
    flaky, calls = flaky_tool(2)
    stack = ToolRegistry([flaky]).with_policies(PolicyConfig(max_attempts=3, **FAST))
    result = await stack.execute("flaky", {})
    assert result.success and result.data == {"attempt": 3}
    assert result.metadata.attempts == 3
    assert calls["n"] == 3


async def test_retries_stop_at_max_attempts_and_keep_the_first_request_id() -> None:
    flaky, calls = flaky_tool(5)
    stack = ToolRegistry([flaky]).with_policies(PolicyConfig(max_attempts=3, **FAST))
    result = await stack.execute("flaky", {}, ToolContext(request_id="call-1"))
    assert result.error is not None and result.error.message == "attempt 3 failed"
    assert result.metadata.attempts == 3 and result.metadata.request_id == "call-1"
    assert calls["n"] == 3


async def test_validation_errors_are_never_retried() -> None:
    flaky, calls = flaky_tool(0)
    stack = ToolRegistry([flaky]).with_policies(PolicyConfig(max_attempts=3, **FAST))
    result = await stack.execute("flaky", {"unexpected": 1})
    assert result.error is not None and result.error.type == "validation"
    assert result.metadata.attempts == 1 and calls["n"] == 0


@tool(name="slow")
async def slow(seconds: float) -> dict[str, float]:
    """Sleeps."""
    await asyncio.sleep(seconds)
    return {"slept": seconds}


@tool(name="slow_sync")
def slow_sync(seconds: float) -> dict[str, float]:
    """Sleeps in a worker thread."""
    time.sleep(seconds)
    return {"slept": seconds}


async def test_slow_tool_times_out() -> None:
    stack = ToolRegistry([slow]).with_policies(PolicyConfig(timeout_s=0.1))
    started = time.perf_counter()
    result = await stack.execute("slow", {"seconds": 5})
    elapsed = time.perf_counter() - started
    assert result.error is not None and result.error.type == "timeout"
    assert result.error.retryable and result.error.details == {"timeout_s": 0.1}
    assert "did not finish within 0.1 s" in result.error.message
    assert 0.09 <= elapsed < scaled(1.0)
    # the loop is healthy and the task not left cancelled
    assert (await stack.execute("slow", {"seconds": 0.01})).success
    await asyncio.sleep(0.01)


async def test_blocking_tool_in_a_thread_times_out_too() -> None:
    stack = ToolRegistry([slow_sync]).with_policies(PolicyConfig(timeout_s=0.1))
    result = await stack.execute("slow_sync", {"seconds": 0.5})
    assert result.error is not None and result.error.type == "timeout"


async def test_per_tool_override_and_tool_timeout_precedence() -> None:
    config = PolicyConfig(timeout_s=5, tools={"slow": PolicyOverride(timeout_s=0.05)})
    stack = ToolRegistry([slow]).with_policies(config)
    result = await stack.execute("slow", {"seconds": 1})
    assert result.error is not None and result.error.type == "timeout"
    assert stack.policy_for("slow") is not None and stack.policy_for("slow").timeout_s == 0.05  # type: ignore[union-attr]


async def test_context_deadline_bounds_the_call() -> None:
    stack = ToolRegistry([slow]).with_policies(PolicyConfig(timeout_s=60))
    ctx = ToolContext(deadline=time.monotonic() + 0.1)
    result = await stack.execute("slow", {"seconds": 2}, ctx)
    assert result.error is not None and result.error.type == "timeout"
    expired = await stack.execute(
        "slow", {"seconds": 0}, ToolContext(deadline=time.monotonic() - 1)
    )
    assert expired.error is not None and expired.error.type == "timeout"


async def test_many_concurrent_calls_with_different_timeouts() -> None:
    stack = ToolRegistry([slow]).with_policies(PolicyConfig(timeout_s=0.3))
    results = await asyncio.gather(
        *(stack.execute("slow", {"seconds": s}) for s in (0.01, 1.0, 0.05, 2.0))
    )
    assert [r.status for r in results] == ["success", "error", "success", "error"]


async def test_nested_calls_each_see_their_own_deadline() -> None:
    inner_stack: list[Any] = []

    @tool(name="outer")
    async def outer() -> dict[str, str]:
        """Calls slow with a longer budget than its own."""
        inner = await inner_stack[0].execute("slow", {"seconds": 5})
        return {"inner": inner.status}

    stack = ToolRegistry([outer, slow]).with_policies(
        PolicyConfig(
            tools={"outer": PolicyOverride(timeout_s=0.1), "slow": PolicyOverride(timeout_s=10)}
        )
    )
    inner_stack.append(stack)
    result = await stack.execute("outer", {})
    assert result.error is not None and result.error.type == "timeout"
    assert result.metadata.tool_name == "outer"


async def test_outside_cancellation_is_not_swallowed() -> None:
    stack = ToolRegistry([slow]).with_policies(PolicyConfig(timeout_s=10))
    task = asyncio.ensure_future(stack.execute("slow", {"seconds": 5}))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_deadline_counts_from_the_start_of_a_call_that_waits_late() -> None:
    """A call is armed only once it waits; its time before that still counts."""

    @tool(name="busy_then_waits")
    async def busy_then_waits() -> str:
        """Works 0.6 s without waiting, then waits 10 s."""
        time.sleep(0.6)
        await asyncio.sleep(10)
        return "done"

    stack = ToolRegistry([busy_then_waits]).with_policies(PolicyConfig(timeout_s=0.5))
    result = await stack.execute("busy_then_waits", {})
    assert result.error is not None and result.error.type == "timeout"
    # at its first wait (0.6 s), not a whole timeout after it (1.1 s)
    assert result.metadata.duration_ms is not None and result.metadata.duration_ms < 1000


async def test_a_cancelled_call_is_cancelled_inside_the_tool_too() -> None:
    """Outside cancellation reaches the tool's own code through the policy."""
    seen: list[str] = []

    @tool(name="waits")
    async def waits() -> str:
        """Yields to the loop until cancelled (the cancellation is thrown in, not set on a
        future it waits for), noting how it ended."""
        try:
            for _ in range(1_000_000):
                await asyncio.sleep(0)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise
        return "done"

    stack = ToolRegistry([waits]).with_policies(PolicyConfig(timeout_s=10))
    task = asyncio.ensure_future(stack.execute("waits", {}))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert seen == ["cancelled"]


async def test_first_step_finishes_a_call_that_never_waits_and_resumes_one_that_does() -> None:
    async def never_waits() -> int:
        return 1

    done, value = first_step(never_waits())
    assert (done, value) == (True, 1)

    closed: list[bool] = []

    async def waits_twice() -> int:
        try:
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            return 2
        finally:
            closed.append(True)

    done, rest = first_step(waits_twice())
    assert not done and await rest == 2 and closed == [True]
    done, rest = first_step(waits_twice())  # given up while waiting: the call is closed
    rest.close()
    assert closed == [True, True]


async def test_breaker_opens_then_half_opens_and_closes() -> None:
    state = {"fail": True}

    @tool(name="fragile")
    async def fragile() -> str:
        """Fails while state['fail']."""
        if state["fail"]:
            raise RuntimeError("backend down")
        return "ok"

    config = PolicyConfig(max_attempts=1, failure_threshold=3, reset_timeout_s=0.2)
    stack = ToolRegistry([fragile]).with_policies(config)
    for _ in range(3):
        assert (await stack.execute("fragile", {})).error.type == "execution"  # type: ignore[union-attr]
    opened = await stack.execute("fragile", {})
    assert (
        opened.error is not None and opened.error.type == "circuit_open" and opened.error.retryable
    )
    assert 0 < opened.error.details["retry_after_s"] <= 0.2  # type: ignore[index]
    assert stack.breaker_for("fragile").state == BreakerState.open  # type: ignore[union-attr]

    await asyncio.sleep(0.25)
    assert stack.breaker_for("fragile").state == BreakerState.half_open  # type: ignore[union-attr]
    assert (await stack.execute("fragile", {})).error.type == "execution"  # type: ignore[union-attr]
    assert (await stack.execute("fragile", {})).error.type == "circuit_open"  # type: ignore[union-attr]

    await asyncio.sleep(0.25)
    state["fail"] = False
    assert (await stack.execute("fragile", {})).success
    assert stack.breaker_for("fragile").state == BreakerState.closed  # type: ignore[union-attr]


async def test_caller_errors_do_not_open_the_breaker() -> None:
    stack = ToolRegistry([slow]).with_policies(PolicyConfig(failure_threshold=1))
    for _ in range(3):
        assert (await stack.execute("slow", {"seconds": "x"})).error.type == "validation"  # type: ignore[union-attr]
    assert (await stack.execute("slow", {"seconds": 0})).success


def test_breaker_allows_one_trial_at_a_time() -> None:
    now = [0.0]
    breaker = CircuitBreaker(failure_threshold=1, reset_timeout_s=10, clock=lambda: now[0])
    breaker.record(False)
    assert not breaker.allow()
    now[0] = 10.0
    assert breaker.allow() and not breaker.allow()
    breaker.record(True)
    assert breaker.allow() and breaker.state == BreakerState.closed


async def test_concurrency_cap_queues_then_refuses() -> None:
    # max_attempts=1: a refused call is retryable and would otherwise be retried after a backoff
    config = PolicyConfig(
        tools={"slow": PolicyOverride(max_concurrency=1, max_queue=1, max_attempts=1)}
    )
    stack = ToolRegistry([slow]).with_policies(config)
    started = time.perf_counter()
    results = await asyncio.gather(*(stack.execute("slow", {"seconds": 0.1}) for _ in range(3)))
    statuses = sorted(r.error.type if r.error else "success" for r in results)
    assert statuses == ["success", "success", "unavailable"]
    assert time.perf_counter() - started >= 0.2  # the two admitted calls ran one after the other
    refused = next(r for r in results if r.error)
    assert "limit of 1 concurrent calls" in refused.error.message and refused.error.retryable  # type: ignore[union-attr]


async def test_unknown_tool_passes_through_to_not_found() -> None:
    stack = ToolRegistry([slow]).with_policies()
    result = await stack.execute("nope", {})
    assert result.error is not None and result.error.type == "not_found"


# -- layered policies, explain, open breakers, rate limit -------------------------------------


def _layered() -> PolicyConfig:
    from tooldeck.providers import CallPolicyOverride, ProfilePolicy

    return PolicyConfig(
        timeout_s=30,
        providers={"local": PolicyOverride(max_attempts=2, timeout_s=20)},
        tools={"flaky": PolicyOverride(timeout_s=5)},
        profiles={
            "ops": ProfilePolicy(
                max_attempts=1,
                requires_confirmation=True,
                tools={"flaky": CallPolicyOverride(timeout_s=1)},
            )
        },
    )


async def test_most_specific_layer_wins_and_explain_names_it() -> None:
    flaky, _ = flaky_tool(0)
    definition = ToolRegistry([flaky]).list_definitions()[0]
    config = _layered()
    plain = config.resolve(definition)
    assert (plain.timeout_s, plain.max_attempts, plain.requires_confirmation) == (5, 2, False)
    ops = config.resolve(definition, "ops")
    assert (ops.timeout_s, ops.max_attempts, ops.requires_confirmation) == (1, 2, True)
    explained = config.explain(definition, "ops")
    assert explained["timeout_s"] == (1.0, "profile ops tool flaky")
    assert explained["max_attempts"] == (2, "provider local")  # provider beats profile default
    assert explained["requires_confirmation"] == (True, "profile ops")
    assert explained["failure_threshold"] == (5, "default")
    assert config.explain(definition)["timeout_s"] == (5.0, "tool flaky")


async def test_profile_policy_applies_through_the_context() -> None:
    calls = {"n": 0}

    @tool(name="slowish")
    async def slowish() -> str:
        """Takes 0.3 s."""
        calls["n"] += 1
        await asyncio.sleep(0.3)
        return "done"

    from tooldeck.providers import CallPolicyOverride, ProfilePolicy

    config = PolicyConfig(
        timeout_s=5,
        profiles={"tight": ProfilePolicy(tools={"slowish": CallPolicyOverride(timeout_s=0.05)})},
    )
    stack = ToolRegistry([slowish]).with_policies(config)
    assert (await stack.execute("slowish", {})).success
    tight = await stack.execute("slowish", {}, ToolContext(profile="tight"))
    assert tight.error is not None and tight.error.type == "timeout"
    assert stack.policy_for("slowish", "tight").timeout_s == 0.05  # type: ignore[union-attr]


async def test_open_breaker_leaves_definitions_until_half_open() -> None:
    @tool(name="broken")
    def broken() -> str:
        """Always fails."""
        raise RuntimeError("down")

    @tool(name="fine")
    def fine() -> str:
        """Works."""
        return "ok"

    config = PolicyConfig(max_attempts=1, failure_threshold=2, reset_timeout_s=0.2)
    stack = ToolRegistry([broken, fine]).with_policies(config)
    view = stack.filtered().confirming()  # wrappers above cache definitions
    assert [d.name for d in await view.definitions()] == ["broken", "fine"]
    for _ in range(2):
        await view.execute("broken", {})
    assert [d.name for d in await view.definitions()] == ["fine"]
    assert "circuit open" in view.unavailable()["broken"]
    assert [d.name for d in await view.all_definitions()] == ["broken", "fine"]
    refused = await view.execute("broken", {})  # still routed: the caller learns why
    assert refused.error is not None and refused.error.type == "circuit_open"
    await asyncio.sleep(0.25)
    assert [d.name for d in await view.definitions()] == ["broken", "fine"]


async def test_rate_limit_refuses_beyond_the_bucket() -> None:
    flaky, calls = flaky_tool(0)
    config = PolicyConfig(tools={"flaky": PolicyOverride(rate_per_minute=60, rate_burst=2)})
    stack = ToolRegistry([flaky]).with_policies(config)
    results = [await stack.execute("flaky", {}) for _ in range(3)]
    assert [r.success for r in results] == [True, True, False]
    error = results[2].error
    assert error is not None and error.type == "unavailable" and error.retryable
    assert "60 calls per minute" in error.message
    assert 0 < error.details["retry_after_s"] <= 1.0  # type: ignore[index]
    assert calls["n"] == 2


async def test_a_permanently_unavailable_tool_does_not_open_its_breaker() -> None:
    from tooldeck.exceptions import ToolUnavailableError

    @tool
    def unconfigured(prompt: str) -> str:
        """Like llm without [builtin.llm]: unavailable, not retryable."""
        raise ToolUnavailableError("llm: not configured", retryable=False)

    stack = ToolRegistry([unconfigured]).with_policies(
        PolicyConfig(failure_threshold=2, max_attempts=1)
    )
    for _ in range(5):
        result = await stack.execute("unconfigured", {"prompt": "x"})
        assert result.error is not None and result.error.type == "unavailable"
    malformed = await stack.execute("unconfigured", {"prompt": 3})
    assert malformed.error is not None and malformed.error.type == "validation"


def test_longest_s_bounds_every_attempt_and_every_wait() -> None:
    from tooldeck.providers.policy import ToolPolicy

    policy = ToolPolicy(timeout_s=5, max_attempts=3, initial_backoff_s=0.5, jitter_s=0.25)
    # 3 attempts of 5 s, waits of at most 0.5 + 0.25 and 1 + 0.25 s between them
    assert policy.longest_s() == 17.0
    assert all(policy.backoff_s(1) <= 0.75 for _ in range(200))
    assert ToolPolicy(timeout_s=None).longest_s() is None
    assert ToolPolicy(timeout_s=2, max_attempts=1).longest_s() == 2.0
