"""Calling an upstream tool that runs only as an MCP task (MCP 2025-11-25, "Tasks").

A tool whose ``execution.taskSupport`` is ``required`` is not answered by
``tools/call``: the call carries ``task: {ttl}`` and the server answers at once with
a task (``CreateTaskResult``); the client asks ``tasks/get`` how it goes until it is
``completed``, ``failed``, ``cancelled`` or ``input_required``, then ``tasks/result``
gives the tool's ``CallToolResult`` (or its error). ``call_as_task`` does that: each
new ``statusMessage`` is a progress report of the call (``ToolContext.report_progress``,
so an MCP client, the run's events or the CLI's bar show it), and a call cancelled
on tooldeck's side (a timeout, Ctrl-C, a client's cancel) sends ``tasks/cancel``.
"""

from __future__ import annotations

import asyncio
import contextlib
from functools import partial
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp import Client

    from tooldeck.core.context import ToolContext

__all__ = ["TASK_TTL_MS", "call_as_task", "runs_tasks"]

TASK_TTL_MS = 3_600_000
"""How long the server keeps a task and its result (ms) after it is made."""
_POLL_S = (0.05, 5.0)
"""Bounds of the wait between two ``tasks/get`` (the server's ``pollInterval`` within)."""
_DONE = frozenset({"completed", "failed", "cancelled", "input_required"})
"""Statuses after which ``tasks/result`` answers (or, for input_required, waits)."""


def runs_tasks(client: Client) -> bool:
    """Whether the server takes ``tools/call`` as a task (``tasks.requests.tools.call``)."""
    tasks = client.server_capabilities.tasks
    return bool(tasks and tasks.requests and tasks.requests.tools and tasks.requests.tools.call)


async def call_as_task(
    client: Client, name: str, arguments: dict[str, Any], ctx: ToolContext | None
) -> Any:
    """Run ``name`` as an MCP task and return its ``CallToolResult`` (``mcp_types``).

    Raises:
        RuntimeError: the installed MCP SDK cannot send a task's ``tools/call``.
        Exception: the server's errors (``tasks/result`` of a failed task), or a lost
            connection, as the SDK raises them.
    """
    import mcp_types as types

    session = client.session
    request = types.CallToolRequest(
        params=types.CallToolRequestParams(
            name=name, arguments=arguments, task=types.TaskMetadata(ttl=TASK_TTL_MS)
        )
    )
    # The SDK checks a tools/call answer against CallToolResult, which a task is not;
    # the request goes through its dispatcher, and the answer is checked here instead.
    dispatcher = getattr(session, "_dispatcher", None)
    if dispatcher is None:
        raise RuntimeError("this MCP SDK cannot send a tools/call as a task")
    params = request.model_dump(by_alias=True, mode="json", exclude_none=True)["params"]
    creating = asyncio.ensure_future(dispatcher.send_raw_request("tools/call", params, {}))
    try:
        raw = await asyncio.shield(creating)
    except asyncio.CancelledError:  # the task may be made after all: cancel it then
        creating.add_done_callback(partial(_cancel_once_made, session))
        raise
    if "task" not in raw:  # the spec lets a server answer a task request at once
        return types.CallToolResult.model_validate(raw)
    task = types.CreateTaskResult.model_validate(raw).task
    try:
        said, step = None, 0
        while True:
            if task.status_message and task.status_message != said and ctx is not None:
                said, step = task.status_message, step + 1
                ctx.report_progress(step, None, said)  # cut to its bound there
            if task.status in _DONE:
                break
            wait = (task.poll_interval or 1000) / 1000
            await asyncio.sleep(min(max(wait, _POLL_S[0]), _POLL_S[1]))
            got = await session.send_request(
                types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task.task_id)),
                types.GetTaskResult,
            )
            task = types.Task.model_validate(got.model_dump(by_alias=True))
        return await session.send_request(
            types.GetTaskPayloadRequest(
                params=types.GetTaskPayloadRequestParams(task_id=task.task_id)
            ),
            types.CallToolResult,
        )
    except asyncio.CancelledError:
        await asyncio.shield(_cancel(session, task.task_id))
        raise


async def _cancel(session: Any, task_id: str) -> None:
    """``tasks/cancel``; best effort (the server's TTL ends the task too), never raises."""
    import mcp_types as types

    with contextlib.suppress(Exception):
        async with asyncio.timeout(5):
            await session.send_request(
                types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=task_id)),
                types.CancelTaskResult,
            )


_CANCELLING: set[asyncio.Future[None]] = set()
"""Cancels sent for calls already gone (a task needs a reference until it ends)."""


def _cancel_once_made(session: Any, creating: asyncio.Future[Any]) -> None:
    """Cancel the task a call cancelled while its ``tools/call`` was answered made."""
    if creating.cancelled() or creating.exception() is not None:
        return
    raw = creating.result()
    task = raw.get("task") if isinstance(raw, dict) else None
    task_id = task.get("taskId") if isinstance(task, dict) else None
    if isinstance(task_id, str):
        cancelling = asyncio.ensure_future(_cancel(session, task_id))
        _CANCELLING.add(cancelling)
        cancelling.add_done_callback(_CANCELLING.discard)
