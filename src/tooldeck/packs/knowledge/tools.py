"""The knowledge tools (seed 001's RAG tools, seed 000's knowledge tools) over the store.

``semantic_search``, ``list_documents``, ``get_document``, ``knowledge_search`` and
``knowledge_store``. Search is hybrid (BM25 over SQLite FTS5 and local sentence
vectors, fused by rank) or, without the embedder, lexical; each result says which in
its ``mode``. Each block carries the ``source_id`` of its document
version (``doc:<document_id>@v<version>``); ``get_document`` answers with that source_id,
``as_of`` the ingestion time.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tooldeck.core.context import ToolContext
from tooldeck.core.dates import Day
from tooldeck.core.definition import ToolAnnotations
from tooldeck.core.kinds import Cite, Subject
from tooldeck.core.result import ToolResult
from tooldeck.core.tool import BaseTool, ToolViews
from tooldeck.exceptions import InvalidArgumentsError
from tooldeck.packs.knowledge.parse import Block, DocumentType, ParsedDocument, paragraphs
from tooldeck.packs.knowledge.store import PASSAGE_REACH, Document, KnowledgeStore, passage

__all__ = [
    "GetDocumentTool",
    "KnowledgeSearchTool",
    "KnowledgeStoreTool",
    "ListDocumentsTool",
    "SemanticSearchTool",
    "knowledge_tools",
]

log = logging.getLogger("tooldeck.knowledge")

_READ = ToolAnnotations(read_only=True, idempotent=True, open_world=False, destructive=False)

DocumentId = Annotated[str, Subject("document")]


class SearchFilters(BaseModel):
    """Document fields a search keeps to (all given must hold)."""

    model_config = ConfigDict(extra="forbid")

    document_type: DocumentType | None = None
    author: str | None = Field(None, max_length=200)
    document_id: str | None = Field(None, max_length=64)
    since: Day | None = Field(None, description="Documents created (or added) on or after.")
    until: Day | None = Field(None, description="Documents created (or added) on or before.")


class SearchRequest(BaseModel):
    """Arguments of semantic_search and knowledge_search."""

    query: str = Field(
        min_length=1,
        max_length=2000,
        description="What to look for.",
        json_schema_extra={"pattern": r"\w"},  # said in the schema: a word must be in it
    )
    top_k: int = Field(5, ge=1, le=100, description="How many blocks to return.")
    filters: SearchFilters | None = Field(None, description="Keep to documents matching these.")

    @field_validator("query")
    @classmethod
    def _words(cls, value: str) -> str:
        if not re.search(r"\w", value):
            raise ValueError("the query has no words to search for")
        return value


class FoundBlock(BaseModel):
    """A block that matched (seed 001's fields), with the source_id to cite."""

    block_id: str
    block_type: str
    content_text: str
    image_url: str | None
    image_caption: str | None
    document_id: DocumentId
    document_title: Annotated[str, Subject("document", label=True)]
    page_number: int | None
    section: str
    score: float = Field(
        description="Relevance (fused rank or BM25); higher is better.",
        json_schema_extra={"x-fact": False},  # about the ranking, not the documents
    )
    passage: str = Field(
        description="The block with the text around it in its section (up to 800 "
        "characters, one block a line): read and quote from this."
    )
    source_id: Annotated[str, Cite()] = Field(
        description="doc:<document_id>@v<version>: cite this."
    )


class SearchResponse(BaseModel):
    """Matching blocks, best first."""

    query: str
    mode: Literal["lexical", "hybrid"]
    blocks: list[FoundBlock]


def _found(block: dict[str, Any], score: float, store: KnowledgeStore) -> FoundBlock:
    block_id = block["block_id"]
    return FoundBlock(
        **{k: v for k, v in block.items() if k != "version"},
        score=score,
        passage=passage(block_id, store.neighbours(block_id, PASSAGE_REACH)),
        source_id=f"doc:{block['document_id']}@v{block['version']}",
    )


class _KnowledgeTool(BaseTool[Any, Any]):
    blocking = True  # database I/O
    pool = "knowledge"
    tags = ("knowledge",)
    labels = ("private", "untrusted")  # the user's notes; documents others wrote (flow)
    effects = ()

    def __init__(self, store: KnowledgeStore) -> None:
        self.store = store


class SemanticSearchTool(_KnowledgeTool):
    """Search the ingested documents; the best-matching blocks with their document and page."""

    name = "semantic_search"
    source_id = "tool:knowledge:v1"
    annotations = _READ
    RequestModel = SearchRequest
    ResponseModel = SearchResponse

    def execute_internal(self, request: SearchRequest, ctx: ToolContext) -> SearchResponse:
        """BM25 over block text, document title and section, filtered by document fields."""
        f = request.filters or SearchFilters()
        hits = self.store.search(
            request.query,
            request.top_k,
            viewer=ctx.user,
            document_type=f.document_type,
            author=f.author,
            document_id=f.document_id,
            since=f.since.isoformat() if f.since else None,
            until=f.until.isoformat() if f.until else None,
        )
        return SearchResponse(
            query=request.query,
            mode=self.store.mode,
            blocks=[_found(h.block, h.score, self.store) for h in hits],
        )


class KnowledgeSearchTool(SemanticSearchTool):
    """Search what was stored with knowledge_store and the ingested documents (seed 000)."""

    name = "knowledge_search"


class DocumentSummary(BaseModel):
    """A document's metadata."""

    document_id: DocumentId
    title: Annotated[str, Subject("document", label=True)]
    author: str | None
    document_type: str
    created: str | None
    keywords: list[str]
    source: str
    version: int
    ingested_at: str
    blocks: int
    source_id: Annotated[str, Cite()]


def _summary(d: Document) -> DocumentSummary:
    return DocumentSummary(**{name: getattr(d, name) for name in DocumentSummary.model_fields})


class ListDocumentsRequest(BaseModel):
    """Arguments of list_documents."""

    document_type: DocumentType | None = None
    author: str | None = Field(None, max_length=200)
    keywords: list[Annotated[str, Field(max_length=100)]] = Field(
        default_factory=list, max_length=20, description="Documents having all of these."
    )
    since: Day | None = Field(None, description="Created (or added) on or after.")
    until: Day | None = Field(None, description="Created (or added) on or before.")
    limit: int = Field(50, ge=1, le=500)


class ListDocumentsResponse(BaseModel):
    """Documents, newest first."""

    documents: list[DocumentSummary]


class ListDocumentsTool(_KnowledgeTool):
    """List the ingested documents, filtered by type, author, keywords and dates."""

    name = "list_documents"
    source_id = "tool:knowledge:v1"
    annotations = _READ
    RequestModel = ListDocumentsRequest
    ResponseModel = ListDocumentsResponse

    def execute_internal(
        self, request: ListDocumentsRequest, ctx: ToolContext
    ) -> ListDocumentsResponse:
        """The documents matching every filter given."""
        docs = self.store.documents(
            viewer=ctx.user,
            document_type=request.document_type,
            author=request.author,
            keywords=request.keywords,
            since=request.since.isoformat() if request.since else None,
            until=request.until.isoformat() if request.until else None,
            limit=request.limit,
        )
        return ListDocumentsResponse(documents=[_summary(d) for d in docs])


class GetDocumentRequest(BaseModel):
    """Arguments of get_document."""

    document_id: str = Field(min_length=1, max_length=64, description="From list_documents.")
    blocks: int = Field(
        0, ge=0, le=1000, description="Also return the document's first N blocks, in order."
    )


class DocumentBlock(BaseModel):
    """One block of a document, in reading order."""

    block_id: str
    block_type: str
    content_text: str
    image_url: str | None
    image_caption: str | None
    page_number: int | None
    section: str


class GetDocumentResponse(BaseModel):
    """A document's metadata, its summary, and the blocks asked for."""

    document: DocumentSummary
    summary: str
    summary_method: Literal["extractive", "llm"] = Field(
        "extractive",
        description="extractive: the document's first sentences; llm: written by the llm "
        "tool's model from the document's text.",
    )
    blocks: list[DocumentBlock] = Field(default_factory=list)


_SUMMARY_PROMPT = (
    "Summarize the document in the context in at most three sentences, in its own terms. "
    "Keep every number exactly as written; add nothing that is not in it."
)
_SUMMARY_CHARS = 12_000
"""How much of a document's text the llm summary reads (its first blocks)."""


class GetDocumentTool(_KnowledgeTool):
    """A document's metadata and summary, by id; cite its source_id.

    Args:
        store: The documents.
        summary: ``extractive`` (the first sentences, made at ingestion) or ``llm`` (the
            ``llm`` tool of the caller's view writes it, through the same provider stack;
            when that call fails, the extractive summary is returned).
    """

    name = "get_document"
    annotations = _READ
    blocking = False  # awaits the store in a thread, and maybe the llm tool
    RequestModel = GetDocumentRequest
    ResponseModel = GetDocumentResponse

    def __init__(
        self, store: KnowledgeStore, summary: Literal["extractive", "llm"] = "extractive"
    ) -> None:
        super().__init__(store)
        self.summary = summary

    async def execute_internal(
        self, request: GetDocumentRequest, ctx: ToolContext
    ) -> GetDocumentResponse:
        """The document.

        Raises:
            InvalidArgumentsError: no document has this id; the message lists some.
        """
        doc = await asyncio.to_thread(self.store.get, request.document_id.strip(), ctx.user)
        if doc is None:
            documents = await asyncio.to_thread(self.store.documents, limit=10, viewer=ctx.user)
            known = [d.document_id for d in documents]
            raise InvalidArgumentsError(
                f"Unknown document {request.document_id!r}. Documents: "
                f"{', '.join(known) or 'none yet (tooldeck docs add PATH)'}.",
                details={"field": "document_id", "allowed": known},
            )
        needed = self.summary == "llm" or request.blocks
        blocks = await asyncio.to_thread(self.store.blocks, doc.document_id) if needed else []
        summary, method = doc.summary, "extractive"
        if self.summary == "llm":
            written = await _llm_summary(blocks, ctx)
            if written is not None:
                summary, method = written, "llm"
        return GetDocumentResponse(
            document=_summary(doc),
            summary=summary,
            summary_method=method,
            blocks=[
                DocumentBlock(**{k: b[k] for k in DocumentBlock.model_fields})
                for b in blocks[: request.blocks]
            ],
        )

    def format_output(self, response: GetDocumentResponse) -> ToolResult:
        """The response, citing the document version it read, as of its ingestion."""
        doc = response.document
        return ToolResult.ok(
            response.model_dump(mode="json"), source_id=doc.source_id, as_of=doc.ingested_at
        )


async def _llm_summary(blocks: list[dict[str, Any]], ctx: ToolContext) -> str | None:
    """The ``llm`` tool's summary of ``blocks``, or None when it cannot be had.

    None when no ``llm`` tool is in the caller's view, it is not configured, or it
    failed; the reason is logged.
    """
    views = ctx.services.get_optional(ToolViews)  # type: ignore[type-abstract]
    if views is None or not blocks:
        return None
    text, used = [], 0
    for block in blocks:
        if used > _SUMMARY_CHARS:
            break
        text.append(block["content_text"])
        used += len(block["content_text"])
    arguments = {"prompt": _SUMMARY_PROMPT, "context": {"document": "\n\n".join(text)}}
    result = await views.view(ctx.profile).execute("llm", arguments, ctx.derive(request_id=None))
    if not result.success:
        log.warning("get_document: llm summary failed, extractive used: %s", result.error)
        return None
    return str(result.data.get("text", "")).strip() or None


class StoreRequest(BaseModel):
    """Arguments of knowledge_store."""

    text: str = Field(min_length=1, max_length=100_000, description="What to remember.")
    metadata: dict[str, Annotated[str, Field(max_length=500)]] = Field(
        default_factory=dict,
        max_length=20,
        description="title, author, keywords (comma-separated) and any other labels.",
    )


class StoreResponse(BaseModel):
    """What was stored."""

    document: DocumentSummary
    status: Literal["added", "updated", "unchanged"]


class KnowledgeStoreTool(_KnowledgeTool):
    """Remember a text (a note, a fact) so that knowledge_search finds it later (seed 000)."""

    name = "knowledge_store"
    annotations = ToolAnnotations(
        read_only=False, idempotent=True, open_world=False, destructive=False
    )
    RequestModel = StoreRequest
    ResponseModel = StoreResponse

    def execute_internal(self, request: StoreRequest, ctx: ToolContext) -> StoreResponse:
        """Store the text as a ``note`` document (the same text twice is stored once)."""
        import hashlib

        text = request.text.strip()
        meta = request.metadata
        parsed = ParsedDocument(
            title=meta.get("title") or text.split("\n", 1)[0][:80],
            document_type="note",
            blocks=[Block("text", p) for p in paragraphs(text)],
            content_hash=hashlib.sha256(text.encode()).hexdigest(),
            author=meta.get("author"),
            keywords=[k.strip() for k in meta.get("keywords", "").split(",") if k.strip()],
        )
        owner = ctx.user  # a note is its author's alone (shared when there is no identity)
        source = f"note:{owner}:{parsed.content_hash}" if owner else f"note:{parsed.content_hash}"
        doc, status = self.store.add(parsed, source, owner)
        return StoreResponse(document=_summary(doc), status=status)


def knowledge_tools(
    store: KnowledgeStore, summary: Literal["extractive", "llm"] = "extractive"
) -> list[BaseTool[Any, Any]]:
    """One of each knowledge tool over ``store``; ``summary``: get_document's method."""
    return [
        SemanticSearchTool(store),
        ListDocumentsTool(store),
        GetDocumentTool(store, summary),
        KnowledgeSearchTool(store),
        KnowledgeStoreTool(store),
    ]
