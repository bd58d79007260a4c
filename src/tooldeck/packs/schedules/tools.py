"""The schedule tools: ``schedule_tool_call`` (needs approval), ``list_schedules``, ``cancel_schedule``.

A model asked "check this every morning" calls ``schedule_tool_call``; a person sees
the exact tool and arguments that will run, and approves once. The schedule carries
that approval for exactly that call, and every fire goes through the owner's view.
"""

from __future__ import annotations

import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tooldeck.core.confirmation import arguments_hash
from tooldeck.core.context import ToolContext, principal_of
from tooldeck.core.definition import ToolAnnotations
from tooldeck.core.names import closest_names
from tooldeck.core.tool import BaseTool, ToolViews
from tooldeck.core.validation import compile_schema, from_json_schema, message_for
from tooldeck.exceptions import InvalidArgumentsError, ToolDeniedError, ToolFailure
from tooldeck.packs.schedules.config import SchedulesConfig
from tooldeck.packs.schedules.runner import Scheduler
from tooldeck.packs.schedules.store import Schedule, ScheduleStore
from tooldeck.packs.schedules.triggers import TriggerError, parse_trigger

__all__ = [
    "CancelScheduleTool",
    "ListSchedulesTool",
    "ScheduleInfo",
    "ScheduleToolCallTool",
    "schedule_tools",
]

SCHEDULE_TOOLS = ("schedule_tool_call", "list_schedules", "cancel_schedule")
"""A schedule may not call these (no schedule makes schedules)."""

_NAME = r"^[A-Za-z0-9][A-Za-z0-9 _.:-]{0,63}$"


class ScheduleRequest(BaseModel):
    """Arguments of ``schedule_tool_call``."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=_NAME, description="Your name for it, unique: 'morning-news'.")
    tool: str = Field(min_length=1, description="The tool to call.")
    arguments: dict[str, Any] = Field(
        default_factory=dict, description="The tool's arguments (checked against its schema)."
    )
    cron: str | None = Field(
        None, description="Five cron fields, minute hour day month weekday: '0 8 * * 1-5'."
    )
    every: str | None = Field(None, description="An interval: '1h', '30m', '1d'.")
    at: str | None = Field(None, description="Once, at an ISO date-time: '2026-12-01T09:00'.")
    timezone: str | None = Field(
        None, description="IANA zone for cron and at: 'Europe/Berlin'. Default: the server's."
    )


class ScheduleInfo(BaseModel):
    """A schedule as its owner sees it."""

    id: str
    name: str
    owner: str
    tool: str
    arguments: dict[str, Any]
    profile: str | None
    trigger: str
    """The rule in words: ``cron 0 8 * * 1-5``, ``every 1h``, ``at 2026-12-01T09:00+01:00``."""
    misfire: str
    paused: bool
    approved_by: str | None
    created_at: str | None
    next_run_at: str | None
    """ISO date-time (UTC) of the next fire; None: no more fires."""
    last_run_at: str | None
    last_status: str | None
    last_request_id: str | None
    runs: int
    missed: int


class ScheduleList(BaseModel):
    """The caller's schedules."""

    schedules: list[ScheduleInfo]


class NoArguments(BaseModel):
    """No arguments."""

    model_config = ConfigDict(extra="forbid")


class NameRequest(BaseModel):
    """Arguments naming one of the caller's schedules."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=64, description="The schedule's name.")


class Cancelled(BaseModel):
    """What ``cancel_schedule`` removed."""

    cancelled: str


class _ScheduleTool(BaseTool[Any, Any]):
    blocking = True  # SQLite
    tags = ("schedules",)
    source_id = "tool:schedules:v1"

    def __init__(self, store: ScheduleStore, config: SchedulesConfig) -> None:
        self.store = store
        self.config = config


class ScheduleToolCallTool(_ScheduleTool):
    """Call a tool later or on a schedule (cron, every, or once at a time); a person approves it first.

    The approval covers exactly this tool and these arguments: each fire runs them
    unattended, through your view of the tools, as you.
    """

    name = "schedule_tool_call"
    requires_confirmation = True
    annotations = ToolAnnotations(read_only=False, idempotent=False, destructive=False)
    effects = ()
    RequestModel = ScheduleRequest
    ResponseModel = ScheduleInfo

    async def execute_internal(self, request: ScheduleRequest, ctx: ToolContext) -> ScheduleInfo:
        """Check the call and the trigger, store the schedule, wake the scheduler.

        Raises:
            InvalidArgumentsError: an unknown tool (with the closest names), arguments
                its schema refuses, a trigger that cannot be read, a name in use.
            ToolDeniedError: a schedule of a schedule tool, or too many schedules.
        """
        owner = principal_of(ctx)
        if request.tool in SCHEDULE_TOOLS:
            raise ToolDeniedError(f"tool: a schedule cannot call {request.tool}")
        views: ToolViews = ctx.services.get(ToolViews)  # type: ignore[type-abstract]
        seen = await views.definitions(ctx.profile)
        found = next((d for d in seen if request.tool in (d.name, *d.aliases)), None)
        if found is None:
            near = closest_names(request.tool, [d.name for d in seen])
            hint = f"; did you mean {', '.join(near)}?" if near else ""
            raise InvalidArgumentsError(f"tool: no tool {request.tool!r} in your view{hint}")
        errors = from_json_schema(compile_schema(found.input_schema), request.arguments)
        if errors:
            raise InvalidArgumentsError(
                "arguments: " + message_for(found.name, errors, found.input_schema)
            )
        now = time.time()
        try:
            trigger = parse_trigger(
                cron=request.cron,
                every=request.every,
                at=request.at,
                timezone=request.timezone,
                now=now,
                min_interval_s=self.config.min_interval_s,
            )
        except TriggerError as exc:
            raise InvalidArgumentsError(str(exc)) from None
        if len(self.store.owned_by(owner)) >= self.config.max_per_user:
            raise ToolDeniedError(
                f"you have {self.config.max_per_user} schedules, the most allowed "
                "(schedules.max_per_user); cancel one first"
            )
        try:
            stored = self.store.add(
                Schedule(
                    id="",
                    owner=owner,
                    name=request.name,
                    tool=found.name,
                    arguments=request.arguments,
                    profile=ctx.profile,
                    trigger=trigger,
                    misfire=self.config.misfire,
                    approved_hash=arguments_hash(found.name, request.arguments),
                    approved_by=f"{owner} via {ctx.channel or 'python'}",
                    created_at=now,
                    next_run_at=trigger.next_after(now),
                )
            )
        except ValueError as exc:
            raise InvalidArgumentsError(f"name: {exc}") from None
        scheduler = ctx.services.get_optional(Scheduler)
        if scheduler is not None:
            scheduler.wake()
        return ScheduleInfo(**stored.as_dict())


class ListSchedulesTool(_ScheduleTool):
    """List your schedules: what each calls, when it fires next, how its last fire went."""

    name = "list_schedules"
    annotations = ToolAnnotations(read_only=True, idempotent=True, destructive=False)
    RequestModel = NoArguments
    ResponseModel = ScheduleList

    def execute_internal(self, request: NoArguments, ctx: ToolContext) -> ScheduleList:
        """The caller's own schedules, by name."""
        own = self.store.owned_by(principal_of(ctx))
        return ScheduleList(schedules=[ScheduleInfo(**s.as_dict()) for s in own])


class CancelScheduleTool(_ScheduleTool):
    """Cancel one of your schedules by name (its fires stop; its history stays in the audit)."""

    name = "cancel_schedule"
    annotations = ToolAnnotations(read_only=False, idempotent=True, destructive=True)
    RequestModel = NameRequest
    ResponseModel = Cancelled

    def execute_internal(self, request: NameRequest, ctx: ToolContext) -> Cancelled:
        """Remove the caller's schedule ``name``.

        Raises:
            ToolFailure: ``not_found`` with the caller's schedule names.
        """
        owner = principal_of(ctx)
        if not self.store.remove(owner, request.name):
            names = [s.name for s in self.store.owned_by(owner)]
            raise _NotFound(
                f"name: you have no schedule {request.name!r}; yours: {', '.join(names) or 'none'}"
            )
        return Cancelled(cancelled=request.name)


class _NotFound(ToolFailure):
    error_type = "not_found"


def schedule_tools(store: ScheduleStore, config: SchedulesConfig) -> list[BaseTool[Any, Any]]:
    """One of each schedule tool over ``store``."""
    return [
        ScheduleToolCallTool(store, config),
        ListSchedulesTool(store, config),
        CancelScheduleTool(store, config),
    ]
