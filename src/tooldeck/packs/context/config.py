"""The ``[context]`` table: the user's own sources (read by ``tooldeck.config``).

Each category has a table of its own; a category without one is "not configured" and
``user_context`` says how to configure it. Credentials never go here: an ICS URL with a
token, say, is read from the environment variable named by ``*_env``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Self
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tooldeck.packs.context.commute import Place
from tooldeck.packs.context.finance import CsvStatement

__all__ = [
    "CATEGORY_HELP",
    "CalendarConfig",
    "CommuteConfig",
    "ContextConfig",
    "FinanceConfig",
    "TasksConfig",
    "WeatherConfig",
]


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FinanceConfig(_Table):
    """``[context.finance]``: bank statements."""

    ofx: list[Path] = Field(default_factory=list)
    """OFX/QFX statement files."""
    csv: list[CsvStatement] = Field(default_factory=list)
    """``[[context.finance.csv]]`` bank CSV exports with their column mapping."""
    categories: dict[str, str] = Field(default_factory=dict)
    """Payee word → category (``uber = "transport"``), for transactions without one."""
    alert_over: float = Field(500.0, gt=0)
    """An expense of this much or more is an alert."""

    @model_validator(mode="after")
    def _some(self) -> Self:
        if not self.ofx and not self.csv:
            raise ValueError("give ofx = [files] or [[context.finance.csv]] statements")
        return self


class CalendarConfig(_Table):
    """``[context.calendar]``: iCalendar files and ICS URLs."""

    files: list[Path] = Field(default_factory=list)
    urls_env: list[str] = Field(default_factory=list)
    """Names of environment variables holding ICS URLs (they often carry a token)."""
    days: int = Field(14, ge=1, le=366)
    """How far ahead to read."""
    max_mb: int = Field(10, ge=1, le=1024)
    """Largest calendar file or ICS feed read, MB (a feed is read in a stream)."""
    max_occurrences: int = Field(5000, ge=1)
    """Most events read in the window, occurrences of recurring ones included."""

    @model_validator(mode="after")
    def _some(self) -> Self:
        if not self.files and not self.urls_env:
            raise ValueError("give files = [.ics files] or urls_env = [variable names]")
        return self


class WeatherConfig(_Table):
    """``[context.weather]``: Open-Meteo at one place."""

    latitude: float = Field(ge=-90, le=90)
    longitude: float = Field(ge=-180, le=180)
    base_url: str = "https://api.open-meteo.com"
    days: int = Field(3, ge=1, le=16)


class CommuteConfig(_Table):
    """``[context.commute]``: an OSRM-compatible router and the address book."""

    base_url: str
    origin: str = "home"
    """The place trips start from."""
    places: dict[str, Place]
    """``[context.commute.places.work]`` latitude, longitude, address."""
    profile: str = "driving"

    @model_validator(mode="after")
    def _origin_is_a_place(self) -> Self:
        if self.origin not in self.places:
            raise ValueError(
                f"origin {self.origin!r} is not in places ({', '.join(self.places) or 'none'})"
            )
        if len(self.places) < 2:
            raise ValueError("places needs the origin and at least one destination")
        return self


class TasksConfig(_Table):
    """``[context.tasks]``: a todo.txt file, iCalendar files of to-dos, or both."""

    todo_txt: Path | None = None
    ics: list[Path] = Field(default_factory=list)
    """iCalendar files whose ``VTODO``s are tasks (a CalDAV task list's export)."""

    @model_validator(mode="after")
    def _some(self) -> Self:
        if self.todo_txt is None and not self.ics:
            raise ValueError('give todo_txt = "todo.txt" or ics = [.ics files with to-dos]')
        return self


CATEGORY_HELP = {
    "finance": '[context.finance] ofx = ["statement.qfx"] (or [[context.finance.csv]] '
    'path, account and columns = {date = "Date", payee = "Description", amount = "Amount"})',
    "calendar": '[context.calendar] files = ["calendar.ics"] (or urls_env = ["ICS_URL"])',
    "weather": "[context.weather] latitude and longitude (decimal degrees) of your place",
    "commute": '[context.commute] base_url = "http://router.project-osrm.org", origin = '
    '"home", and [context.commute.places.home] / [context.commute.places.work] '
    "latitude, longitude",
    "tasks": '[context.tasks] todo_txt = "todo.txt"',
}
"""How to configure each built-in category (what an unconfigured one answers)."""


class ContextConfig(_Table):
    """The ``[context]`` table: the user's sources, by category (seed 000)."""

    enabled: bool = True
    """Register the ``user_context`` tool."""
    timezone: str = "UTC"
    """The user's IANA time zone: "today" and event times are in it."""
    ttl_s: float = Field(300.0, ge=0)
    """Seconds a source's result is reused before it is read again."""
    timeout_s: float = Field(10.0, gt=0)
    """Longest wait for one source."""
    dashboard_url: str | None = None
    """A remote dashboard whose ``GET /context?categories=...`` serves categories."""
    dashboard_categories: list[str] = Field(default_factory=list)
    """The categories the dashboard serves (instead of local sources)."""
    owners: list[str] = Field(default_factory=lambda: ["anonymous"])
    """The principals this table's sources serve: ``anonymous`` is a caller without an
    identity (one machine). Every other user reads only the files they upload."""
    uploads: bool = True
    """Let each user upload their own statements, calendars and todo.txt (REST, UI)."""
    max_upload_mb: int = Field(10, ge=1, le=1024)
    """Largest file a user may upload, MB."""
    max_uploads: int = Field(20, ge=1, le=1000)
    """Most files one user may keep."""
    finance: FinanceConfig | None = None
    calendar: CalendarConfig | None = None
    weather: WeatherConfig | None = None
    commute: CommuteConfig | None = None
    tasks: TasksConfig | None = None

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(
                f"unknown time zone {value!r} (an IANA name, e.g. Europe/Paris)"
            ) from None
        return value

    @model_validator(mode="after")
    def _dashboard(self) -> Self:
        if self.dashboard_categories and not self.dashboard_url:
            raise ValueError("dashboard_categories needs dashboard_url")
        return self
