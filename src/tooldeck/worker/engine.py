"""``TemporalRuns``: the run API (``RunManager``'s) over runs that are Temporal workflows.

``tooldeck serve`` (and ``tooldeck chat``) use it when ``[runs] engine = "temporal"``:
``start`` starts a ``RunWorkflow`` whose id is the run id, ``get``/``wait``/``events``
read the workflow's record and events (the query ``snapshot`` while it runs, its result
once it finished), ``confirm`` and ``cancel`` are workflow updates. The workflows run on
``tooldeck worker`` processes, so a run outlives the server that started it, and any
server of the deployment follows, confirms or cancels it.

Errors are the run contract's: ``RunNotFoundError`` (404), ``RunStateError`` (409),
``PermissionError`` (403), and ``RunEngineError`` (503) when Temporal cannot be reached
or no worker answers.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.service import RPCError, RPCStatusCode

from tooldeck.agent.contracts import (
    FINAL_STATES,
    TRANSITIONS,
    ChatRequest,
    ChatRun,
    ConfirmRequest,
    RunEvent,
)
from tooldeck.config import RunSettings
from tooldeck.exceptions import RunEngineError, RunNotFoundError, RunStateError
from tooldeck.providers.approvals import visible_to
from tooldeck.worker.workflow import RUN_WORKFLOW, record_of

__all__ = ["TemporalRuns", "connect"]

log = logging.getLogger("tooldeck.runs")

QUERY_TIMEOUT = timedelta(seconds=5)
"""How long a query of a live run's events waits for a worker (then tried again)."""
FOLLOW_TIMEOUT = timedelta(seconds=60)
"""How long one long poll of a live run (``wait``, ``events``) lasts before it is
asked again."""
RETRY_PAUSE_S = 0.05
"""Pause before reading a run again after a long poll that could not be answered."""
_RETRY_READ = frozenset(
    {RPCStatusCode.NOT_FOUND, RPCStatusCode.DEADLINE_EXCEEDED, RPCStatusCode.CANCELLED}
)
"""Long-poll failures that mean: read the run again (finished, or no worker yet)."""


async def connect(config: RunSettings) -> Client:
    """A client of ``config``'s Temporal service.

    Raises:
        RunEngineError: the service cannot be reached (the message names its address).
    """
    try:
        return await Client.connect(config.address, namespace=config.namespace)
    except RuntimeError as exc:  # temporalio reports a failed connection so
        raise RunEngineError(
            f"Temporal at {config.address} (namespace {config.namespace!r}) cannot be "
            f"reached: {exc}. Start it, or set [runs] address"
        ) from None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class TemporalRuns:
    """Starts, follows, confirms and cancels runs that are Temporal workflows.

    Args:
        config: ``[runs]``: address, namespace, task queue.
        profiles: Checks a run's profile before it starts (``Runtime.view``; raises
            ``ConfigError`` for an unknown one).
        confirm_timeout_s: How long a run waits for a confirmation before the call is
            denied (a durable timer in the workflow).
    """

    def __init__(
        self,
        config: RunSettings,
        *,
        profiles: Callable[[str | None], Any],
        confirm_timeout_s: float = 600.0,
    ) -> None:
        self.config = config
        self.profiles = profiles
        self.confirm_timeout_s = confirm_timeout_s
        self._connected: Client | None = None

    async def client(self) -> Client:
        """The Temporal client, connected on first use (``RunEngineError`` if it cannot)."""
        if self._connected is None:
            self._connected = await connect(self.config)
        return self._connected

    async def _handle(self, run_id: str) -> WorkflowHandle[Any, Any]:
        return (await self.client()).get_workflow_handle(run_id)

    # -- API (RunManager's) --------------------------------------------------------------

    async def start(self, request: ChatRequest, *, user: str | None = None) -> ChatRun:
        """Start the run's workflow; return its ``queued`` record (``run.created`` sent).

        Raises:
            ConfigError: ``request.profile`` is not a configured profile.
            RunEngineError: Temporal cannot be reached.
        """
        self.profiles(request.profile)
        start: dict[str, Any] = {
            "run_id": f"run_{uuid.uuid4().hex}",
            "question": request.question,
            "profile": request.profile,
            "user": user,
            "session_id": request.session_id,
            "params": request.params,
            "account": request.account,
            "created_at": _now(),
            "confirm_timeout_s": self.confirm_timeout_s,
            "heartbeat_s": self.config.heartbeat_s,
        }
        client = await self.client()
        try:
            await client.start_workflow(
                RUN_WORKFLOW,
                start,
                id=start["run_id"],
                task_queue=self.config.task_queue,
                memo={"user": user or "", "profile": request.profile or ""},
            )
        except RPCError as exc:
            raise RunEngineError(f"Temporal refused to start the run: {exc}") from None
        return ChatRun.model_validate({**record_of(start), "last_seq": 1})

    async def _snapshot(self, run_id: str, after: int | None) -> dict[str, Any]:
        """``{"record", "events"}`` of the run (``after=None``: the record only).

        A finished run's come from its result; a live run's record from its memo (no
        worker needed), its events from the query ``snapshot``. When no worker answers
        the query (all stopped, or one just died and Temporal has not noticed yet), the
        events are ``[]`` for now and ``"stale": True`` says so.
        """
        handle = await self._handle(run_id)
        try:
            described = await handle.describe()
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND:
                raise RunNotFoundError(f"no run {run_id!r}") from None
            raise RunEngineError(f"Temporal: {exc}") from None
        if described.workflow_type != RUN_WORKFLOW:
            raise RunNotFoundError(f"no run {run_id!r}")
        if described.status != WorkflowExecutionStatus.RUNNING:
            return await self._finished(handle, described.status, after or 0)
        record = await described.memo_value("record", None)
        if record is None:  # not started by a worker yet: as TemporalRuns.start made it
            record = {**await self._started(handle), "last_seq": 1}
        if after is None or after >= record["last_seq"]:
            return {"record": record, "events": []}
        try:
            snapshot: dict[str, Any] = await handle.query(
                "snapshot", after, rpc_timeout=QUERY_TIMEOUT
            )
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND:  # finished meanwhile
                return await self._snapshot(run_id, after)
            log.warning("runs: no worker answered for %s: %s", run_id, exc)
            return {"record": record, "events": [], "stale": True}
        return snapshot

    async def _started(self, handle: WorkflowHandle[Any, Any]) -> dict[str, Any]:
        """The ``queued`` record of a run no worker has picked up, from its input."""
        async for event in handle.fetch_history_events():
            attributes = event.workflow_execution_started_event_attributes
            payloads = attributes.input.payloads
            converter = (await self.client()).data_converter
            (start,) = await converter.decode(payloads, [dict])
            return record_of(start)
        raise RunNotFoundError(f"no run {handle.id!r}")

    async def _finished(
        self, handle: WorkflowHandle[Any, Any], status: Any, after: int
    ) -> dict[str, Any]:
        """A finished run's record and events after ``after``, from its result."""
        try:
            result: dict[str, Any] = await handle.result(follow_runs=False)
        except WorkflowFailureError as exc:  # terminated, timed out, or a bug
            described = await handle.describe()
            record = {
                "run_id": handle.id,
                "state": "failed",
                "question": "",
                "user": (await described.memo_value("user", "")) or None,
                "profile": (await described.memo_value("profile", "")) or None,
                "created_at": described.start_time.isoformat(timespec="milliseconds"),
                "updated_at": (described.close_time or described.start_time).isoformat(
                    timespec="milliseconds"
                ),
                "error": f"the workflow ended {status.name.lower()}: {exc.cause or exc}",
            }
            return {"record": record, "events": []}
        return {"record": result["record"], "events": result["events"][after:]}

    async def get(self, run_id: str) -> ChatRun:
        """The run's current record.

        Raises:
            RunNotFoundError: no run has this id.
            RunEngineError: Temporal or the workers cannot be reached.
        """
        return ChatRun.model_validate((await self._snapshot(run_id, None))["record"])

    async def recent(self, limit: int = 50, *, user: str | None = None) -> list[ChatRun]:
        """The newest runs of this task queue first (Temporal's visibility list).

        Args:
            limit: At most this many.
            user: Only this user's runs (``anonymous``: those made without a user);
                None: everyone's.
        """
        client = await self.client()
        found: list[str] = []
        queue = self.config.task_queue  # the deployment's runs only (a plain name)
        query = f"WorkflowType = '{RUN_WORKFLOW}' AND TaskQueue = '{queue}'"
        async for execution in client.list_workflows(query, limit=max(limit * 20, 200)):
            owner = (await execution.memo_value("user", "")) or None
            if user is None or visible_to(user, owner):
                found.append(execution.id)
                if len(found) >= limit:
                    break
        runs = await asyncio.gather(*(self.get(run_id) for run_id in found))
        return sorted(runs, key=lambda r: r.created_at, reverse=True)

    async def wait(self, run_id: str) -> ChatRun:
        """Wait until the run is final or ``waiting_input``; return its record.

        A long poll (the update ``settled``): answered the moment the run gets there.
        """
        run = await self.get(run_id)
        while run.state not in FINAL_STATES and run.state != "waiting_input":
            record = await self._follow(run_id, "settled")
            run = await self.get(run_id) if record is None else ChatRun.model_validate(record)
        return run

    async def _follow(self, run_id: str, update: str, *args: Any) -> Any:
        """The long-poll update's answer, or None (the caller reads the run again).

        None when the run finished meanwhile or no worker took the update in time.
        """
        handle = await self._handle(run_id)
        try:
            return await handle.execute_update(update, args=args, rpc_timeout=FOLLOW_TIMEOUT)
        except WorkflowUpdateRPCTimeoutOrCancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():  # the caller left (a closed stream)
                raise asyncio.CancelledError from None
            return None  # no worker took it within FOLLOW_TIMEOUT
        except (WorkflowUpdateFailedError, RPCError) as exc:
            if isinstance(exc, RPCError) and exc.status not in _RETRY_READ:
                raise RunEngineError(f"Temporal: {exc}") from None
            await asyncio.sleep(RETRY_PAUSE_S)
            return None

    async def confirm(
        self, run_id: str, body: ConfirmRequest, *, user: str | None, privileged: bool = False
    ) -> ChatRun:
        """Decide the pending call (the update ``confirm``); as ``RunManager.confirm``.

        Raises:
            RunNotFoundError: no run has this id.
            RunStateError: the run is not waiting for input.
            PermissionError: ``user`` may not decide this run's calls.
        """
        run = await self.get(run_id)
        if run.state != "waiting_input" or run.pending is None:
            raise RunStateError(run_id, run.state, "confirm", ["waiting_input"])
        decision = {
            "approve": body.approve,
            "message": body.message,
            "arguments": body.arguments,
            "by": user,
            "privileged": privileged,
        }
        await self._update(run_id, run, "confirm", decision, ["waiting_input"])
        return await self.wait(run_id)

    async def cancel(self, run_id: str, *, by: str | None = None) -> ChatRun:
        """Cancel a run that has not finished (the update ``cancel``)."""
        run = await self.get(run_id)
        allowed = [s for s, nxt in TRANSITIONS.items() if "cancelled" in nxt]
        if run.state in FINAL_STATES:
            raise RunStateError(run_id, run.state, "cancel", allowed)
        record = await self._update(run_id, run, "cancel", by, allowed)
        return ChatRun.model_validate(record)

    async def _update(
        self, run_id: str, run: ChatRun, name: str, argument: Any, allowed: list[str]
    ) -> Any:
        handle = await self._handle(run_id)
        try:
            return await handle.execute_update(name, argument, rpc_timeout=FOLLOW_TIMEOUT)
        except WorkflowUpdateRPCTimeoutOrCancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise asyncio.CancelledError from None
            raise RunEngineError(
                f"no tooldeck worker took the {name} of run {run_id} within "
                f"{FOLLOW_TIMEOUT.total_seconds():g} s (task queue {self.config.task_queue!r}); "
                "start `tooldeck worker`"
            ) from None
        except WorkflowUpdateFailedError as exc:
            kind = getattr(exc.cause, "type", None)
            if kind == "PermissionError":
                raise PermissionError(getattr(exc.cause, "message", str(exc.cause))) from None
            current = await self.get(run_id)
            raise RunStateError(run_id, current.state, name, allowed) from None
        except RPCError as exc:  # the workflow finished meanwhile
            if exc.status == RPCStatusCode.NOT_FOUND:
                current = await self.get(run_id)
                raise RunStateError(run_id, current.state, name, allowed) from None
            raise RunEngineError(f"Temporal: {exc}") from None

    async def events(self, run_id: str, after: int = 0) -> AsyncIterator[RunEvent]:
        """The run's events with ``seq > after``, then live ones until the run ends.

        Live events come by long poll (the update ``follow``), each as soon as the
        workflow has it.
        """
        sent = after
        snapshot: dict[str, Any] | None = await self._snapshot(run_id, sent)
        while True:
            if snapshot is None:
                snapshot = await self._snapshot(run_id, sent)
            for event in snapshot["events"]:
                sent = event["seq"]
                yield RunEvent.model_validate(event)
            record = snapshot["record"]
            if record["state"] in FINAL_STATES and sent >= record.get("last_seq", 0):
                return
            snapshot = await self._follow(run_id, "follow", sent)

    async def aclose(self) -> None:
        """Nothing to stop: runs go on in Temporal when this process ends."""
