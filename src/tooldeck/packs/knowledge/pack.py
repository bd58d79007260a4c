"""The knowledge pack as a ``Pack``: the ``[knowledge]`` table, the store, the tools."""

from __future__ import annotations

from pathlib import Path

from tooldeck.core.context import ServiceContainer
from tooldeck.core.pack import PackEnvironment, PackParts
from tooldeck.packs.knowledge.config import KnowledgeConfig
from tooldeck.packs.knowledge.embed import local_embedder
from tooldeck.packs.knowledge.store import KnowledgeStore
from tooldeck.packs.knowledge.tools import knowledge_tools

__all__ = ["RAG_PROFILE", "KnowledgePack", "open_store", "pack"]

RAG_PROFILE = {
    "description": "Seed 001's RAG agent: search, list and read documents, compute, write.",
    "tools": ["semantic_search", "list_documents", "get_document", "llm", "python"],
}
"""The ``rag`` profile (seed 001's RAG agent toolset); a ``[profiles.rag]`` table wins."""


def open_store(config: KnowledgeConfig, data_dir: Path) -> KnowledgeStore:
    """The store of ``config``: ``path``, else ``knowledge.db`` in ``data_dir``.

    With the local embedder when configured and installed; else search is BM25 only.
    """
    embedder = local_embedder() if config.embedder == "local" else None
    return KnowledgeStore(config.path or data_dir / "knowledge.db", embedder)


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
        store = open_store(config, services.get(PackEnvironment).data_dir)
        services.register(KnowledgeStore, store)
        return PackParts(tools=knowledge_tools(store), profiles={"rag": RAG_PROFILE})


pack = KnowledgePack()
"""The instance the runtime loads (``tooldeck.packs.knowledge.pack:pack``)."""
