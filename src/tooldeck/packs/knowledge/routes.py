"""``/api/documents``: the knowledge pack's documents over HTTP (the console's Documents page).

Listing and reading go through the tools (``list_documents``, ``get_document``), so the
profile's view, policies and the audit apply as to any call. Uploading parses the file
and stores it as a new document (``POST /api/documents/upload``) (or a new version of one uploaded under the same name);
images a document carries are served from ``/api/documents/<id>/images/<version>/<n>``.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal, get_args

from fastapi import APIRouter, HTTPException, Request, Response
from pydantic import BaseModel

from tooldeck.exceptions import ToolFailure
from tooldeck.packs.knowledge.config import KnowledgeConfig
from tooldeck.packs.knowledge.parse import DocumentError, DocumentType
from tooldeck.packs.knowledge.reader import DocumentReader, Upload
from tooldeck.packs.knowledge.store import KnowledgeStore, block_id_for
from tooldeck.server.http import (
    PROFILE,
    TOOL_RESPONSES,
    USER,
    call_context,
    problems,
    runtime_of,
    tool_response,
    view_of,
)

__all__ = ["router", "upload_limit"]

router = APIRouter(prefix="/api/documents", tags=["documents"])


def upload_limit(config: KnowledgeConfig) -> int:
    """The largest upload body in bytes: ``[knowledge] max_file_mb`` as base64, plus JSON."""
    return config.max_file_mb * 1024 * 1024 * 4 // 3 + 64 * 1024


def _store(request: Request) -> KnowledgeStore:
    store: KnowledgeStore | None = runtime_of(request).services.get_optional(
        KnowledgeStore  # type: ignore[type-abstract]
    )
    if store is None:
        raise HTTPException(404, "the knowledge pack is disabled ([knowledge] enabled = false)")
    return store


_LIST_PARAMETERS: list[dict[str, Any]] = [
    {"name": "document_type", "in": "query", "required": False,
     "schema": {"enum": list(get_args(DocumentType))}},
    {"name": "author", "in": "query", "required": False,
     "schema": {"type": "string", "maxLength": 200}},
    {"name": "keywords", "in": "query", "required": False, "style": "form", "explode": True,
     "description": "Documents having all of these (repeat the parameter).",
     "schema": {"type": "array", "items": {"type": "string", "maxLength": 100}, "maxItems": 20}},
    {"name": "since", "in": "query", "required": False, "description": "Created on or after.",
     "schema": {"type": "string", "format": "date"}},
    {"name": "until", "in": "query", "required": False, "description": "Created on or before.",
     "schema": {"type": "string", "format": "date"}},
    {"name": "limit", "in": "query", "required": False,
     "schema": {"type": "integer", "minimum": 1, "maximum": 500, "default": 50}},
]  # fmt: skip
"""``list_documents``'s arguments as query parameters (the tool validates them, and
answers a bad one with a ``validation`` ToolResult, 422, like every tool endpoint)."""


@router.get(
    "",
    summary="List documents",
    responses=TOOL_RESPONSES,
    openapi_extra={"parameters": [PROFILE, USER, *_LIST_PARAMETERS]},
)
async def list_documents(request: Request) -> Response:
    """``list_documents`` with the query parameters as arguments; its ToolResult."""
    query = request.query_params
    arguments: dict[str, Any] = {
        key: query.getlist(key) if key == "keywords" else query[key]
        for key in query
        if key != "profile"
    }
    return await tool_response(
        request, view_of(request).execute("list_documents", arguments, call_context(request))
    )


class Uploaded(BaseModel):
    """The stored document (``document_id``, ``version``, ``source_id``) and what happened."""

    document: dict[str, Any]
    status: Literal["added", "updated", "unchanged"]


@router.post(
    "/upload",
    summary="Upload a document",
    response_model=Uploaded,
    responses=problems(400, 404, 503, e400="The body is not an Upload, the content is not base64, "
                       "or the file cannot be read (the detail says why: encrypted, corrupt, "
                       "empty, binary, a limit...).",
                       e503="The document store or the embeddings endpoint cannot be used."),
    openapi_extra={"requestBody": {"required": True, "content": {
        "application/json": {"schema": Upload.model_json_schema()}}}},
)  # fmt: skip
async def upload(request: Request) -> Uploaded:
    """Parse and store a PDF, DOCX, HTML, Markdown or text file (``source`` = ``upload:<name>``).

    The body is an ``Upload``: ``{"name": ..., "content_base64": ...}``. The same bytes
    again change nothing; other bytes under the same name are a new version. The
    body limit is ``[knowledge] max_file_mb`` (as base64). The body's JSON, its base64
    and the file are read in a process of its own (a 50 MB upload holds nothing of
    the server's), killed past ``parse_timeout_s`` or ``parse_memory_mb`` (400, naming
    the limit).
    """
    store = _store(request)
    reader = runtime_of(request).services.get(DocumentReader)
    raw = await request.body()

    def ingest() -> Uploaded:
        name, parsed = reader.read_upload(raw)
        document, status = store.add(parsed, f"upload:{name}")
        summary = {k: getattr(document, k) for k in document.__dataclass_fields__}
        return Uploaded(document={**summary, "source_id": document.source_id}, status=status)

    try:
        return await reader.run(ingest)
    except DocumentError as exc:
        raise HTTPException(400, str(exc)) from None
    except ToolFailure as exc:  # the store or the embeddings endpoint is down
        raise HTTPException(503, exc.message) from None


@router.get(
    "/{document_id}",
    summary="A document and its blocks",
    responses=TOOL_RESPONSES,
    openapi_extra={"parameters": [PROFILE, USER]},
)
async def get_document(request: Request, document_id: str) -> Response:
    """``get_document`` with its first 1,000 blocks; its ToolResult."""
    arguments = {"document_id": document_id, "blocks": 1000}
    return await tool_response(
        request, view_of(request).execute("get_document", arguments, call_context(request))
    )


@router.get(
    "/{document_id}/images/{version}/{n}",
    summary="An image a document carries",
    responses={200: {"content": {"image/*": {}}}, **problems(404)},
)
async def image(request: Request, document_id: str, version: int, n: int) -> Response:
    """The image of block ``n`` of ``version`` (PDF images), with its media type."""
    found = await asyncio.to_thread(_store(request).image, block_id_for(document_id, version, n))
    if found is None:
        raise HTTPException(404, f"no image at block {n} of {document_id} v{version}")
    media_type, data = found
    headers = {"X-Content-Type-Options": "nosniff", "Content-Security-Policy": "default-src 'none'"}
    return Response(data, media_type=media_type, headers=headers)
