"""The schedules pack: tool calls made later or on a schedule (seed 002's TaskWorker).

A schedule is a tool call (tool, arguments, profile, owner) with a trigger (cron,
interval or one time). Creating one is itself a tool call, ``schedule_tool_call``,
which needs a person's approval: the approval covers the scheduled call's exact tool
and arguments, so its fires run unattended. Fires run through the owner's view of the
stack, each keyed for exactly-once (docs/schedules.md).
"""
