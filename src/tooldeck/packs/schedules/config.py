"""The ``[schedules]`` table (read by ``tooldeck.config`` without loading the pack)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["SchedulesConfig"]


class SchedulesConfig(BaseModel):
    """``[schedules]``: tool calls made later or on a schedule (docs/schedules.md)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    """Offer the schedule tools and run due fires while ``tooldeck serve``, ``tooldeck
    mcp`` or ``tooldeck schedule run`` is up."""
    misfire: Literal["once", "all", "skip"] = "once"
    """Fires missed while nothing ran: run the latest once, each (up to 100), or none."""
    min_interval_s: float = Field(60.0, ge=1)
    """The shortest interval between two fires of one schedule, in seconds."""
    max_per_user: int = Field(100, ge=1)
    """Schedules one user may have (a model asked to schedule in a loop stops here)."""
    poll_s: float = Field(5.0, gt=0, le=300)
    """Longest pause between two looks for schedules another process added, in seconds."""
    grace_s: float = Field(60.0, ge=0)
    """A fire later than this (the server was down) is missed and ``misfire`` applies."""
