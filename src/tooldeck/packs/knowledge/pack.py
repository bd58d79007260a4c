"""The knowledge pack as a ``Pack``: the ``[knowledge]`` table, the store, the tools."""

from __future__ import annotations

from pathlib import Path

from tooldeck.core.context import ServiceContainer
from tooldeck.core.extensions import TEXT_EMBEDDERS, Extensions
from tooldeck.core.pack import ConsolePage, PackEnvironment, PackParts, PackRoutes
from tooldeck.exceptions import ConfigError
from tooldeck.packs.knowledge.answers import KnowledgeAnswers
from tooldeck.packs.knowledge.config import KnowledgeConfig
from tooldeck.packs.knowledge.embed import (
    Embedder,
    LocalEmbedder,
    OpenAIEmbedder,
    local_embedder,
)
from tooldeck.packs.knowledge.reader import DocumentReader
from tooldeck.packs.knowledge.resources import DocumentResources
from tooldeck.packs.knowledge.store import KnowledgeStore
from tooldeck.packs.knowledge.tools import knowledge_tools

__all__ = ["RAG_PROFILE", "KnowledgePack", "embedder_of", "open_store", "pack"]

RAG_PROFILE = {
    "description": "Seed 001's RAG agent: search, list and read documents, compute, write.",
    "tools": ["semantic_search", "list_documents", "get_document", "llm", "python"],
}
"""The ``rag`` profile (seed 001's RAG agent toolset); a ``[profiles.rag]`` table wins."""


def embedder_of(config: KnowledgeConfig) -> Embedder | None:
    """The embedder ``config`` asks for, or None.

    None for ``none``, or for ``local`` without the ``[knowledge]`` extra: search is then
    lexical, and says so in its ``mode``.
    """
    if config.embedder == "openai" and config.embeddings is not None:
        return OpenAIEmbedder(config.embeddings)
    return local_embedder() if config.embedder == "local" else None


def open_store(
    config: KnowledgeConfig, data_dir: Path, embedder: Embedder | None
) -> KnowledgeStore:
    """The store of ``config``: PostgreSQL at ``url``, else SQLite at ``path``.

    ``path`` defaults to ``knowledge.db`` in ``data_dir``; ``embedder`` is the one
    ``config`` asks for (``embedder_of``). Nothing is opened until first use.

    Raises:
        ConfigError: ``url`` is set and ``tooldeck[postgres]`` is not installed.
    """
    import importlib.util

    if config.url is not None:
        if importlib.util.find_spec("psycopg_pool") is None:
            raise ConfigError(
                "[knowledge] url needs PostgreSQL's driver: pip install 'tooldeck[postgres]'"
            )
        from tooldeck.packs.knowledge.postgres_store import PostgresStore

        return PostgresStore(config.url, embedder)
    from tooldeck.packs.knowledge.sqlite_store import SqliteStore

    return SqliteStore(config.path or data_dir / "knowledge.db", embedder)


class KnowledgePack:
    """The knowledge tools, and chat answers quoted from the documents.

    Tools: semantic_search, list_documents, get_document, knowledge_search,
    knowledge_store; answers: ``KnowledgeAnswers``.

    ``setup`` registers the ``KnowledgeStore`` service (``knowledge.db`` in the data dir
    unless ``path`` or ``url`` is set) and the ``DocumentReader`` that parses uploads
    in killable processes; nothing is created until first use.
    """

    name = "knowledge"
    config_model = KnowledgeConfig

    def setup(self, config: KnowledgeConfig, services: ServiceContainer) -> PackParts:
        """The tools over the store; nothing when ``enabled`` is false."""
        if not config.enabled:
            return PackParts()
        embedder = embedder_of(config)
        store = open_store(config, services.get(PackEnvironment).data_dir, embedder)
        # the same local model for tool search; OpenAI's never: tools stay on the machine
        local = embedder if isinstance(embedder, LocalEmbedder) else local_embedder()
        extensions = services.get_optional(Extensions)
        if local is not None and extensions is not None:  # tool search by meaning, too
            extensions.provide(TEXT_EMBEDDERS, lambda: [local])
        services.register(KnowledgeStore, store)  # type: ignore[type-abstract]  # a protocol is the key
        services.register(DocumentReader, DocumentReader(config))
        return PackParts(
            tools=knowledge_tools(store, config.summary),
            answers=KnowledgeAnswers(store),
            profiles={"rag": RAG_PROFILE},
            routes=lambda: _routes(config),
            console=[ConsolePage("documents", "Documents", _CONSOLE / "documents.js")],
            resources=[DocumentResources(store)],
        )


_CONSOLE = Path(__file__).with_name("console")


def _routes(config: KnowledgeConfig) -> PackRoutes:
    from tooldeck.packs.knowledge.routes import router, upload_limit

    return PackRoutes([router], body_limits={"/api/documents/upload": upload_limit(config)})


pack = KnowledgePack()
"""The instance the runtime loads (``tooldeck.packs.knowledge.pack:pack``)."""
