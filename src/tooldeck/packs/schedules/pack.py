"""The ``Pack`` of schedules: its tools, REST routes, CLI and the scheduler's loop."""

from __future__ import annotations

from dataclasses import replace

from tooldeck.core.context import ServiceContainer
from tooldeck.core.pack import PackEnvironment, PackParts, PackRoutes
from tooldeck.packs.schedules.config import SchedulesConfig
from tooldeck.packs.schedules.runner import Scheduler
from tooldeck.packs.schedules.store import ScheduleStore
from tooldeck.packs.schedules.tools import schedule_tools

__all__ = ["SchedulesPack", "pack"]


class SchedulesPack:
    """Tool calls made later or on a schedule (the package docstring)."""

    name = "schedules"
    config_model = SchedulesConfig

    def setup(self, config: SchedulesConfig, services: ServiceContainer) -> PackParts:
        """The store (``<data_dir>/schedules.db`` or ``[store] url``), the tools, the scheduler.

        Nothing when ``enabled`` is false. The store and the ``Scheduler`` are services
        (the REST routes and the CLI use them). Embedded, the scheduler runs the fires
        in the serving process; with ``[runs] engine = "temporal"`` each schedule is a
        Temporal Schedule and the workers run the fires (``packs.schedules.temporal``).

        Raises:
            ConfigError: the store's file or folder is not private, or not SQLite; the
                PostgreSQL of ``[store] url`` cannot be reached.
        """
        if not config.enabled:
            return PackParts()
        environment = services.get(PackEnvironment)
        store = ScheduleStore(environment.data_dir / "schedules.db", environment.store_url)
        local = environment.store_url is None and environment.temporal is None
        beat = environment.data_dir / "schedules.runner" if local else None
        scheduler = Scheduler(
            store, services, poll_s=config.poll_s, grace_s=config.grace_s, beat=beat
        )
        services.register(ScheduleStore, store)
        services.register(Scheduler, scheduler)
        parts = PackParts(
            tools=schedule_tools(store, config),
            routes=_routes,
            reaches=["the tools of your view, on the schedules you approve"],
        )
        if environment.temporal is not None:  # Temporal Schedules; the workers fire
            from tooldeck.packs.schedules.temporal import TemporalSchedules
            from tooldeck.packs.schedules.workflow import ScheduleFireWorkflow

            mirror = TemporalSchedules(store, scheduler, environment.temporal, poll_s=config.poll_s)
            return replace(
                parts,
                background=mirror.serve,
                workflows=[ScheduleFireWorkflow],
                activities=[mirror.fire_due],
            )

        async def run() -> None:
            try:
                await scheduler.serve()
            finally:
                await scheduler.drain()

        return replace(parts, background=run)


def _routes() -> PackRoutes:
    from tooldeck.packs.schedules.routes import router

    return PackRoutes([router])


pack = SchedulesPack()
"""The instance the runtime loads (``tooldeck.packs.schedules.pack:pack``)."""
