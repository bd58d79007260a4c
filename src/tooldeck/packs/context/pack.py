"""The context pack as a ``Pack``: the ``[context]`` table, the bridge, the tool."""

from __future__ import annotations

import logging
import os
from datetime import datetime
from functools import partial
from importlib.metadata import entry_points
from pathlib import Path
from zoneinfo import ZoneInfo

from tooldeck.core.context import ServiceContainer
from tooldeck.core.extensions import CONTEXT_ADAPTERS, Extensions
from tooldeck.core.isolated import IsolatedProcesses
from tooldeck.core.pack import ConsolePage, PackEnvironment, PackParts, PackRoutes
from tooldeck.exceptions import ConfigError
from tooldeck.packs.context.adapter import ContextAdapter
from tooldeck.packs.context.answers import ContextAnswers
from tooldeck.packs.context.bridge import ContextBridge
from tooldeck.packs.context.calendar import CALENDAR_PARSERS, CalendarAdapter
from tooldeck.packs.context.commute import OsrmAdapter
from tooldeck.packs.context.config import ContextConfig
from tooldeck.packs.context.dashboard import DashboardAdapter
from tooldeck.packs.context.finance import OFX_PARSERS, CsvAdapter, OfxAdapter
from tooldeck.packs.context.tasks import IcalTasksAdapter, TodoTxtAdapter
from tooldeck.packs.context.tool import UserContextTool
from tooldeck.packs.context.user_sources import KINDS, ContextBridges, SourceFile, UserSources
from tooldeck.packs.context.weather import OpenMeteoAdapter

__all__ = ["ADAPTER_GROUP", "ContextPack", "adapters_of", "pack"]

log = logging.getLogger("tooldeck.context")

ADAPTER_GROUP = "tooldeck.context_adapters"
"""Entry-point group of installed adapters: each names a function that takes the
``[context]`` settings and returns a list of ``ContextAdapter``."""


def adapters_of(
    config: ContextConfig, parsers: IsolatedProcesses | None = None, cache_dir: Path | None = None
) -> list[ContextAdapter]:
    """The adapters ``config`` describes, then those of installed packages.

    Statements and calendars are parsed in ``parsers``' killable processes (default:
    two at a time, made here). Statements' parses are kept in ``cache_dir`` for every
    process of the project (``statements.py``); None: in this process only.

    A category listed in ``dashboard_categories`` is read from the dashboard, shaped by
    its local adapter when there is one (or by a bare one of its kind).

    Raises:
        ConfigError: an ICS URL variable named in ``urls_env`` is not set.
    """
    zone = ZoneInfo(config.timezone)

    def today() -> datetime:
        return datetime.now(zone)

    local: list[ContextAdapter] = []
    parsers = parsers or IsolatedProcesses(2, (*OFX_PARSERS, *CALENDAR_PARSERS))
    if (finance := config.finance) is not None:
        if finance.ofx:
            ofx = OfxAdapter(finance.ofx, finance.categories, finance.alert_over,
                             processes=parsers, cache_dir=cache_dir)  # fmt: skip
            local.append(ofx)
        if finance.csv:
            local.append(CsvAdapter(finance.csv, finance.categories, finance.alert_over))
    if (calendar := config.calendar) is not None:
        missing = [name for name in calendar.urls_env if not os.environ.get(name)]
        if missing:
            raise ConfigError(
                f"[context.calendar] urls_env: the environment has no {', '.join(missing)}"
            )
        sources = [str(p) for p in calendar.files] + [os.environ[n] for n in calendar.urls_env]
        local.append(
            CalendarAdapter(
                sources,
                config.timezone,
                calendar.days,
                today,
                timeout_s=config.timeout_s,
                max_bytes=calendar.max_mb * 1024 * 1024,
                max_occurrences=calendar.max_occurrences,
                processes=parsers,
            )
        )
    if (weather := config.weather) is not None:
        local.append(OpenMeteoAdapter(weather.latitude, weather.longitude, config.timezone,
                                      weather.base_url, weather.days, config.timeout_s))  # fmt: skip
    if (commute := config.commute) is not None:
        local.append(OsrmAdapter(commute.places, commute.origin, commute.base_url,
                                 commute.profile, config.timeout_s))  # fmt: skip
    if (tasks := config.tasks) is not None:
        if tasks.todo_txt is not None:
            local.append(TodoTxtAdapter(tasks.todo_txt, lambda: today().date()))
        if tasks.ics:
            local.append(IcalTasksAdapter(tasks.ics, config.timezone, lambda: today().date(),
                                          config.timeout_s, processes=parsers))  # fmt: skip
    bare: dict[str, ContextAdapter] = {  # shape a dashboard's records with no local source
        "finance": OfxAdapter([], {}),
        "calendar": CalendarAdapter([], config.timezone, now=today),
        "tasks": TodoTxtAdapter(Path(os.devnull), lambda: today().date()),
        "weather": OpenMeteoAdapter(0.0, 0.0),
    }
    shapers = {**bare, **{a.category: a for a in local}}
    remote = set(config.dashboard_categories)
    adapters: list[ContextAdapter] = [a for a in local if a.category not in remote]
    adapters += [
        DashboardAdapter(c, config.dashboard_url or "", shapers.get(c), config.timeout_s)
        for c in config.dashboard_categories
    ]
    for entry in entry_points(group=ADAPTER_GROUP):
        try:
            adapters.extend(entry.load()(config))
        except Exception as exc:  # an installed adapter must not stop the server
            log.error(
                "context adapter %s failed to load: %s: %s", entry.name, type(exc).__name__, exc
            )
    return adapters


class ContextPack:
    """``user_context`` over each caller's ``ContextBridge``, and chat answers about the context.

    The configured sources' bridge, every user's (``ContextBridges``) and the users'
    uploads (``UserSources``) are registered as services; the answers are
    ``ContextAnswers``.
    """

    name = "context"
    config_model = ContextConfig

    def setup(self, config: ContextConfig, services: ServiceContainer) -> PackParts:
        """The tool and its bridge; nothing when ``enabled`` is false.

        Raises:
            ConfigError: an ICS URL variable named in the configuration is not set.
        """
        if not config.enabled:
            return PackParts()
        parsers = IsolatedProcesses(2, (*OFX_PARSERS, *CALENDAR_PARSERS))
        data_dir = services.get(PackEnvironment).data_dir
        bridge = ContextBridge(
            adapters_of(config, parsers, data_dir / "cache" / "statements"),
            ttl_s=config.ttl_s,
            timeout_s=config.timeout_s,
        )
        uploads = None
        if config.uploads:  # their parses stay in memory: a deleted upload leaves nothing
            root = data_dir / "sources"
            uploads = UserSources(
                root, max_bytes=config.max_upload_mb * 1024 * 1024, max_files=config.max_uploads
            )
            services.register(UserSources, uploads)
        extensions = services.get_optional(Extensions)
        bridges = ContextBridges(
            bridge,
            config.owners,
            uploads,
            partial(_upload_adapters, config, parsers),
            extra=partial(extensions.items, CONTEXT_ADAPTERS) if extensions else tuple,
        )
        services.register(ContextBridge, bridge)
        services.register(ContextBridges, bridges)
        zone = ZoneInfo(config.timezone)
        answers = ContextAnswers(
            lambda: datetime.now(zone).date(),
            finance="configured" if config.finance else "uploads" if config.uploads else "none",
        )
        return PackParts(
            tools=[UserContextTool(bridges)],
            answers=answers,
            routes=partial(_routes, config),
            console=[
                ConsolePage(
                    "sources", "Sources", Path(__file__).with_name("console") / "sources.js"
                )
            ],
        )


def _routes(config: ContextConfig) -> PackRoutes:
    from tooldeck.packs.context.routes import router

    # an upload is its text in JSON: escapes can double it; the store checks the text itself
    upload = config.max_upload_mb * 1024 * 1024 * 2 + 64 * 1024
    return PackRoutes([router], body_limits={"/api/context/uploads/": upload})


def _upload_adapters(
    config: ContextConfig, parsers: IsolatedProcesses, files: list[SourceFile]
) -> list[ContextAdapter]:
    """The adapters that read one user's uploaded files (parsed in killable processes)."""
    zone = ZoneInfo(config.timezone)

    def today() -> datetime:
        return datetime.now(zone)

    finance = config.finance
    by_kind = {kind: [f.path for f in files if f.category == kind] for kind in KINDS}
    adapters: list[ContextAdapter] = []
    if by_kind["finance"]:
        categories = finance.categories if finance else {}
        alert_over = finance.alert_over if finance else 500.0
        adapters.append(OfxAdapter(by_kind["finance"], categories, alert_over, processes=parsers))
    if by_kind["calendar"]:
        adapters.append(
            CalendarAdapter(
                [str(p) for p in by_kind["calendar"]],
                config.timezone,
                now=today,
                timeout_s=config.timeout_s,
                processes=parsers,
            )
        )
    ical = [p for p in by_kind["tasks"] if _is_ical(p)]
    adapters += [TodoTxtAdapter(p, lambda: today().date()) for p in by_kind["tasks"]
                 if p not in ical]  # fmt: skip
    if ical:
        adapters.append(IcalTasksAdapter(ical, config.timezone, lambda: today().date(),
                                         config.timeout_s, processes=parsers))  # fmt: skip
    return adapters


def _is_ical(path: Path) -> bool:
    """Whether an uploaded task file is iCalendar (it begins ``BEGIN:VCALENDAR``)."""
    try:
        with path.open("rb") as file:
            head = file.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError:
        return False
    return head.upper().startswith(b"BEGIN:VCALENDAR")


pack = ContextPack()
"""The instance the runtime loads (``tooldeck.packs.context.pack:pack``)."""
