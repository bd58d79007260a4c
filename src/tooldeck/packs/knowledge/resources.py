"""The documents as MCP resources: ``tooldeck://documents/<document_id>``.

An MCP client lists them (``resources/list``) and reads one as Markdown
(``resources/read``): its title, then its blocks in reading order. Each caller sees
the shared documents and their own notes, as the document tools show them; a
profile without the document tools lists none (``core.pack.ResourceSource``).
"""

from __future__ import annotations

from typing import Any

from tooldeck.packs.knowledge.store import KnowledgeStore

__all__ = ["PREFIX", "DocumentResources"]

PREFIX = "tooldeck://documents/"
"""The documents' URIs: this, then the document id."""


class DocumentResources:
    """The knowledge store's documents as a ``ResourceSource``.

    Args:
        store: The documents.
        limit: Most documents listed (the newest).
    """

    prefix = PREFIX
    tools = frozenset({"list_documents", "get_document"})

    def __init__(self, store: KnowledgeStore, limit: int = 500) -> None:
        self.store = store
        self.limit = limit

    def list(self, viewer: str | None) -> list[dict[str, Any]]:
        """The newest documents ``viewer`` may read, as MCP resources."""
        return [
            {
                "uri": PREFIX + doc.document_id,
                "name": doc.title,
                "mimeType": "text/markdown",
                "description": doc.summary[:300],
            }
            for doc in self.store.documents(limit=self.limit, viewer=viewer)
        ]

    def read(self, uri: str, viewer: str | None) -> dict[str, Any] | None:
        """The document as Markdown; None when it does not exist or is not ``viewer``'s."""
        document = self.store.get(uri.removeprefix(PREFIX), viewer)
        if document is None:
            return None
        blocks = self.store.blocks(document.document_id, viewer=viewer)
        body = "\n\n".join(b["content_text"] for b in blocks if b.get("content_text"))
        return {"uri": uri, "mimeType": "text/markdown", "text": f"# {document.title}\n\n{body}"}
