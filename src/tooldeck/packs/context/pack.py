"""The context pack as a ``Pack``: the ``[context]`` table, the bridge, the tool."""

from __future__ import annotations

import logging
import os
from datetime import datetime
from importlib.metadata import entry_points
from pathlib import Path
from zoneinfo import ZoneInfo

from tooldeck.core.context import ServiceContainer
from tooldeck.core.isolated import IsolatedProcesses
from tooldeck.core.pack import PackParts
from tooldeck.exceptions import ConfigError
from tooldeck.packs.context.adapter import ContextAdapter
from tooldeck.packs.context.answers import ContextAnswers
from tooldeck.packs.context.bridge import ContextBridge
from tooldeck.packs.context.calendar import CALENDAR_PARSERS, CalendarAdapter
from tooldeck.packs.context.commute import OsrmAdapter
from tooldeck.packs.context.config import ContextConfig
from tooldeck.packs.context.dashboard import DashboardAdapter
from tooldeck.packs.context.finance import OFX_PARSERS, CsvAdapter, OfxAdapter
from tooldeck.packs.context.tasks import TodoTxtAdapter
from tooldeck.packs.context.tool import UserContextTool
from tooldeck.packs.context.weather import OpenMeteoAdapter

__all__ = ["ADAPTER_GROUP", "ContextPack", "adapters_of", "pack"]

log = logging.getLogger("tooldeck.context")

ADAPTER_GROUP = "tooldeck.context_adapters"
"""Entry-point group of installed adapters: each names a function that takes the
``[context]`` settings and returns a list of ``ContextAdapter``."""


def adapters_of(config: ContextConfig) -> list[ContextAdapter]:
    """The adapters ``config`` describes, then those of installed packages.

    A category listed in ``dashboard_categories`` is read from the dashboard, shaped by
    its local adapter when there is one (or by a bare one of its kind).

    Raises:
        ConfigError: an ICS URL variable named in ``urls_env`` is not set.
    """
    zone = ZoneInfo(config.timezone)

    def today() -> datetime:
        return datetime.now(zone)

    local: list[ContextAdapter] = []
    # statements and calendars are parsed in killable processes, two at a time
    parsers = IsolatedProcesses(2, (*OFX_PARSERS, *CALENDAR_PARSERS))
    if (finance := config.finance) is not None:
        if finance.ofx:
            local.append(
                OfxAdapter(finance.ofx, finance.categories, finance.alert_over, processes=parsers)
            )
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
        local.append(TodoTxtAdapter(tasks.todo_txt, lambda: today().date()))
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
    """``user_context`` over a ``ContextBridge``, and chat answers about the context.

    The bridge is registered as a service; the answers are ``ContextAnswers``.
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
        bridge = ContextBridge(adapters_of(config), ttl_s=config.ttl_s, timeout_s=config.timeout_s)
        services.register(ContextBridge, bridge)
        zone = ZoneInfo(config.timezone)
        answers = ContextAnswers(lambda: datetime.now(zone).date())
        return PackParts(tools=[UserContextTool(bridge)], answers=answers)


pack = ContextPack()
"""The instance the runtime loads (``tooldeck.packs.context.pack:pack``)."""
