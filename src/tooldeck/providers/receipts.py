"""``ReceiptsProvider``: a keyed call of a tool with side effects runs at most once.

HTTP retries, MCP reconnects and durable-run activities deliver a call at least once;
for a tool that sends an email or makes a payment, the second delivery must not run it
again. Every call of a tool that is neither ``read_only`` nor ``idempotent`` (its
annotations) and that carries an idempotency key gets a **receipt** (``receipt_file``):
written before the tool runs, completed with the result before the result goes back.
A repeated key answers the stored result (``metadata.replay_of`` names the call that
ran) instead of running the tool again::

    POST /api/tools/execute/send_email   Idempotency-Key: 5c1f…   → runs, 200
    POST /api/tools/execute/send_email   Idempotency-Key: 5c1f…   → the same body, not sent again
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Callable, Coroutine
from functools import partial
from typing import Any, TypeVar

from tooldeck.core.confirmation import arguments_hash
from tooldeck.core.context import ToolContext, new_request_id, principal_of
from tooldeck.core.definition import ToolDefinition
from tooldeck.core.result import ToolResult, trusted_metadata
from tooldeck.core.tool import Arguments, error_result
from tooldeck.core.validation import parse_arguments
from tooldeck.exceptions import InvalidArgumentsError
from tooldeck.providers.base import ToolsProvider
from tooldeck.providers.receipt_file import Receipt, ReceiptStore, StoreBusy
from tooldeck.providers.wrapper import WrapperProvider

__all__ = ["ReceiptsProvider", "call_key", "key_problem"]

log = logging.getLogger(__name__)
T = TypeVar("T")

MAX_KEY_LENGTH = 255
"""Longest idempotency key a caller may send, in characters."""

_NOT_RUN = frozenset({"not_found", "validation", "denied", "confirmation_required", "circuit_open"})
"""Error types that say the tool did not run (a later call with the key may run it)."""


def key_problem(key: str) -> str | None:
    """What is wrong with a caller's idempotency key, or None when it is usable.

    A key is 1 to 255 printable ASCII characters (a UUID is the usual choice), as
    Stripe's and the IETF draft's ``Idempotency-Key`` header.
    """
    if not key or len(key) > MAX_KEY_LENGTH or not key.isascii() or not key.isprintable():
        return (
            f"an idempotency key is 1 to {MAX_KEY_LENGTH} printable ASCII characters "
            f"(e.g. a UUID); got {len(key)} characters"
            + ("" if key.isascii() and key.isprintable() else " with other characters")
        )
    return None


def call_key(principal: str, key: str, tool: str, arguments: Any) -> str:
    """The key of one exact call: SHA-256 (hex) of principal, caller's key, tool, arguments.

    Another user's identical key never meets this one, and neither does the same key
    with other arguments (canonical JSON, as approvals bind calls: ``arguments_hash``).
    """
    bound = f"{principal}\0{key}\0{arguments_hash(tool, arguments)}"
    return hashlib.sha256(bound.encode("utf-8", "surrogatepass")).hexdigest()


async def _soon(operation: Callable[..., T], *args: Any) -> T:
    """``operation(*args)`` at once when the store is free, else in a thread that waits.

    A thread hop costs more than the SQLite write itself (a keyed call took 455 µs with
    its writes in a thread, 166 µs inline; benchmarks/receipts.py); waiting for another
    process's write must not block the event loop.
    """
    try:
        return operation(*args, wait=False)
    except StoreBusy:
        return await asyncio.to_thread(partial(operation, *args, wait=True))


class ReceiptsProvider(WrapperProvider):
    """Runs each keyed call of a tool with side effects at most once (receipts in a store).

    Semantics:
        Keyed: a call whose ``ctx.idempotency_key`` is set, of a tool whose definition
        is not ``safe_to_repeat``. Its receipt key is ``call_key(principal, key, tool,
        arguments)``, which the tool receives as ``ctx.idempotency_key``. Then:

        - no receipt: one is stored ``running``, the tool runs, and the result is
          stored before it is returned. A result that says the tool did not run
          (``not_found``, ``validation``, ``denied``, ``confirmation_required``,
          ``circuit_open``, or ``unavailable`` without ``may_have_run``) deletes the
          receipt instead, so the key can run the call once it may. The call runs to
          its end even when its caller goes away (a dropped connection): the caller's
          retry gets the result.
        - a ``done`` receipt: its result, with ``metadata.replay_of`` set to the
          request id of the call that ran and ``request_id`` this call's.
        - a ``running`` receipt whose lease is alive (its process extends the lease
          every third of ``lease_s``): waits for it, polling, up to ``wait_s`` or the
          call's deadline, then answers its result; still running then: ``unavailable``
          (retryable).
        - a ``running`` receipt whose lease has passed: the process that ran it ended
          mid-call, so the effect may or may not have happened. The call is not run
          again under this key: ``execution`` error, ``may_have_run``, not retryable,
          naming the first call; a new key runs it.

        A call without a key passes through untouched (its ``ctx.idempotency_key``
        stays None; a tool that needs a key for its API then uses ``ctx.request_id``),
        and so does a call of a read-only or idempotent tool (with the caller's key as
        sent). The store failing before the call runs answers ``unavailable``
        (retryable), never an unguarded run.

    Args:
        wrapped: The provider (the confirming layer and below).
        store: Where receipts are kept.
        lease_s: How long a running call counts as alive without an extension, in s.
        wait_s: How long a repeated key waits for the running call, in s.
        clock: Unix time in seconds (tests move it).
    """

    def __init__(
        self,
        wrapped: ToolsProvider,
        store: ReceiptStore,
        *,
        lease_s: float = 30.0,
        wait_s: float = 30.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(wrapped)
        self.store = store
        self.lease_s = lease_s
        self.wait_s = wait_s
        self.clock = clock
        self._keyed: dict[str, ToolDefinition] | None = None
        self._running: set[asyncio.Task[ToolResult]] = set()
        self._extending: set[asyncio.Task[None]] = set()

    def transform_definitions(self, definitions: list[ToolDefinition]) -> list[ToolDefinition]:
        """Definitions unchanged; notes which tools have side effects (by name and alias)."""
        self._keyed = {
            name: d for d in definitions if not d.safe_to_repeat for name in (d.name, *d.aliases)
        }
        return definitions

    def reset(self) -> None:
        """Forget which tools have side effects."""
        super().reset()
        self._keyed = None

    def execute(
        self, name: str, arguments: Arguments = None, ctx: ToolContext | None = None
    ) -> Coroutine[Any, Any, ToolResult]:
        """Forward the call, through a receipt when it is keyed (see the class).

        A call of a read-only or idempotent tool returns the wrapped provider's
        awaitable itself (no extra frame on the hot path).
        """
        keyed = self._keyed
        if ctx is None or ctx.idempotency_key is None or type(name) is not str:
            return self.wrapped.execute(name, arguments, ctx)  # a bad name: reported below
        if keyed is not None and name not in keyed:
            return self.wrapped.execute(name, arguments, ctx)
        return self._keyed_call(name, arguments, ctx)

    async def _keyed_call(self, name: str, arguments: Arguments, ctx: ToolContext) -> ToolResult:
        assert ctx.idempotency_key is not None, "execute passes keyed calls only"
        if self._keyed is None:
            await self.all_definitions()
        definition = (self._keyed or {}).get(name)
        if definition is None:
            return await self.wrapped.execute(name, arguments, ctx)
        try:
            parsed = parse_arguments(arguments)
        except InvalidArgumentsError:  # the tool reports them
            return await self.wrapped.execute(name, arguments, ctx)
        request_id = ctx.request_id or new_request_id()
        principal = principal_of(ctx)
        key = call_key(principal, ctx.idempotency_key, definition.name, parsed)
        ctx = ctx.derive(idempotency_key=key, request_id=request_id)
        while True:
            now = self.clock()
            mine = Receipt(
                key=key,
                tool=definition.name,
                principal=principal,
                request_id=request_id,
                status="running",
                started_at=now,
                lease_until=now + self.lease_s,
            )
            try:
                stored = await _soon(self.store.begin, mine)
            except Exception as exc:  # the store is down: never run a side effect unguarded
                return self._unavailable(definition, request_id, f"{type(exc).__name__}: {exc}")
            if stored is None:
                break
            answer = await self._repeat(stored, definition, ctx)
            if answer is not None:
                return answer
        task = asyncio.ensure_future(self._run(key, name, arguments, ctx))
        self._running.add(task)
        task.add_done_callback(self._running.discard)
        return await asyncio.shield(task)  # a caller going away does not cut the call

    async def _run(self, key: str, name: str, arguments: Arguments, ctx: ToolContext) -> ToolResult:
        """Run the call, extending its lease while it lasts; store or drop its receipt."""
        loop = asyncio.get_running_loop()
        every = self.lease_s / 3
        handle: asyncio.TimerHandle | None = None

        def extend() -> None:  # a timer, not a task: most calls end before it fires
            nonlocal handle
            task = loop.create_task(self._extend(key))
            self._extending.add(task)
            task.add_done_callback(self._extending.discard)
            handle = loop.call_later(every, extend)

        handle = loop.call_later(every, extend)
        try:
            result = await self.wrapped.execute(name, arguments, ctx)
        finally:
            handle.cancel()
        error = result.error
        try:
            if error is not None and (
                error.type in _NOT_RUN or (error.type == "unavailable" and not error.may_have_run)
            ):
                await _soon(self.store.forget, key)
            else:
                await _soon(self.store.finish, key, result.model_dump_json())
        except Exception as exc:  # the effect happened: the caller gets its result anyway
            log.warning("receipts: the result of %s was not stored: %s", key[:12], exc)
        return result

    async def _extend(self, key: str) -> None:
        """Move a running call's lease on (off the event loop when the store is busy)."""
        try:
            await _soon(self.store.extend, key, self.clock() + self.lease_s)
        except Exception as exc:  # a failing store; the call goes on
            log.warning("receipts: cannot extend the lease of %s: %s", key[:12], exc)

    async def _repeat(
        self, stored: Receipt, definition: ToolDefinition, ctx: ToolContext
    ) -> ToolResult | None:
        """The answer to a repeated key: the stored result, after waiting if it runs.

        None when the receipt went away meanwhile (that call did not run after all,
        e.g. it needed confirmation): the key is free to run the call.
        """
        request_id = ctx.request_id or new_request_id()
        waited_until = self.clock() + self.wait_s
        if ctx.deadline is not None:
            waited_until = min(waited_until, self.clock() + ctx.deadline - time.monotonic())
        pause = 0.02
        while stored.status == "running":
            now = self.clock()
            if now > stored.lease_until:
                return self._in_doubt(stored, definition, request_id)
            if now >= waited_until:
                return self._unavailable(
                    definition,
                    request_id,
                    f"the call with this idempotency key (request {stored.request_id}) is "
                    "still running; call again later with the same key for its result",
                )
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.5)
            found = await _soon(self.store.get, stored.key)
            if found is None:
                return None
            stored = found
        try:
            result = ToolResult.model_validate_json(stored.result or "")
        except ValueError:  # written by another version, or damaged: it ran, all the same
            return error_result(
                "execution",
                f"A call of {definition.name} with this idempotency key ran (request "
                f"{stored.request_id}), but its stored result cannot be read. It is not run "
                "again under this key; to run it again, call with a new key.",
                trusted_metadata(definition.name, definition.version, request_id, 0.0),
                details={"may_have_run": True, "first_request_id": stored.request_id},
            )
        meta = result.metadata.model_copy(
            update={"request_id": request_id, "replay_of": stored.request_id}
        )
        return result.model_copy(update={"metadata": meta})

    def _in_doubt(self, stored: Receipt, definition: ToolDefinition, request_id: str) -> ToolResult:
        started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stored.started_at))
        return error_result(
            "execution",
            f"A call of {definition.name} with this idempotency key started at {started} "
            f"(request {stored.request_id}) and the process running it ended before it "
            "finished: it may or may not have taken effect. It is not run again under this "
            "key. Check whether it took effect; to run it again, call with a new key.",
            trusted_metadata(definition.name, definition.version, request_id, 0.0),
            details={
                "may_have_run": True,
                "receipt": "in_doubt",
                "first_request_id": stored.request_id,
                "started_at": started,
            },
        )

    @staticmethod
    def _unavailable(definition: ToolDefinition, request_id: str, why: str) -> ToolResult:
        return error_result(
            "unavailable",
            f"{definition.name} did not run: {why}.",
            trusted_metadata(definition.name, definition.version, request_id, 0.0),
            retryable=True,
        )

    async def drain(self) -> None:
        """Wait for the keyed calls under way (a caller may have left) to store their results."""
        if self._running:
            await asyncio.gather(*self._running, return_exceptions=True)

    async def close(self) -> None:
        """``drain``, then close the wrapped provider."""
        await self.drain()
        await super().close()
