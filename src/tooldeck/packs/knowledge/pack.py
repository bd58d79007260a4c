"""The knowledge pack as a ``Pack``: the ``[knowledge]`` table, the store, the tools."""

from __future__ import annotations

from pathlib import Path

from tooldeck.core.context import ServiceContainer
from tooldeck.core.pack import PackEnvironment, PackParts
from tooldeck.packs.knowledge.config import KnowledgeConfig
from tooldeck.packs.knowledge.store import KnowledgeStore
from tooldeck.packs.knowledge.tools import knowledge_tools

__all__ = ["KnowledgePack", "pack", "store_path"]


def store_path(config: KnowledgeConfig, data_dir: Path) -> Path:
    """The store's file: ``config.path``, else ``knowledge.db`` in ``data_dir``."""
    return config.path or data_dir / "knowledge.db"


class KnowledgePack:
    """semantic_search, list_documents, get_document, knowledge_search, knowledge_store.

    ``setup`` registers the ``KnowledgeStore`` service (``knowledge.db`` in the data dir
    unless ``path`` is set); the file is created on first use.
    """

    name = "knowledge"
    config_model = KnowledgeConfig

    def setup(self, config: KnowledgeConfig, services: ServiceContainer) -> PackParts:
        """The tools over the store; nothing when ``enabled`` is false."""
        if not config.enabled:
            return PackParts()
        store = KnowledgeStore(store_path(config, services.get(PackEnvironment).data_dir))
        services.register(KnowledgeStore, store)
        return PackParts(tools=knowledge_tools(store))


pack = KnowledgePack()
"""The instance the runtime loads (``tooldeck.packs.knowledge.pack:pack``)."""
