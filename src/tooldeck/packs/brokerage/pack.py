"""The brokerage pack as a ``Pack``: its ``[brokerage]`` table, tools and chat answers."""

from __future__ import annotations

from tooldeck.core.context import ServiceContainer
from tooldeck.core.pack import PackParts, PackRoutes
from tooldeck.packs.brokerage.answers import BrokerageAnswers
from tooldeck.packs.brokerage.config import BrokerageConfig
from tooldeck.packs.brokerage.data import BrokerageDataSource
from tooldeck.packs.brokerage.tools import brokerage_tools

__all__ = ["BrokeragePack", "pack"]


class BrokeragePack:
    """Seed 004's data tools, over one JSON file, with the intent router's answers.

    ``setup`` loads the file at once (a bad file fails start-up with file, section and
    field: ``DataPackError``) and registers the ``BrokerageDataSource`` service.
    """

    name = "brokerage"
    config_model = BrokerageConfig

    def setup(self, config: BrokerageConfig, services: ServiceContainer) -> PackParts:
        """The tools and answers; nothing when ``enabled`` is false."""
        if not config.enabled:
            return PackParts()
        source = BrokerageDataSource(config.data_path)
        source.load()
        services.register(BrokerageDataSource, source)
        return PackParts(
            tools=brokerage_tools(source), answers=BrokerageAnswers(source), routes=_routes
        )


def _routes() -> PackRoutes:
    from tooldeck.packs.brokerage.routes import document_parameters, router

    return PackRoutes([router], openapi=document_parameters)


pack = BrokeragePack()
"""The instance the runtime loads (``tooldeck.packs.brokerage.pack:pack``)."""
