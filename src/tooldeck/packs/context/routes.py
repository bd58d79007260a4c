"""``/api/context/sources``: the caller's sources, their last fetch, and their own uploads.

The UI's Sources page reads it; fetching goes through the ``user_context`` tool like
any call. Each caller sees and changes only their own: the configured sources when
they are one of ``[context] owners``, and the files they uploaded
(``packs.context.user_sources``). An upload is the file's text in a JSON body, never
a path on the server.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Path, Request
from pydantic import BaseModel, Field

from tooldeck.core.context import principal_of
from tooldeck.exceptions import InvalidArgumentsError
from tooldeck.packs.context.user_sources import ContextBridges, UserSources
from tooldeck.server.http import call_context, problems, runtime_of

__all__ = ["router"]

router = APIRouter(prefix="/api/context", tags=["context"])

Category = Annotated[Literal["finance", "calendar", "tasks"], Path(description="What it serves.")]
FileName = Annotated[
    str,
    Path(
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._ -]{0,99}$",
        description="A plain file name (the category says how the file is read).",
    ),
]


class Source(BaseModel):
    """A source the caller reads, and how its last fetch went (None: not fetched yet)."""

    category: str
    platform: str
    source_id: str
    fetched_at: str | None = None
    ok: bool | None = None
    error: str | None = None
    records: int | None = None


class Upload(BaseModel):
    """A file of the caller's own: a statement, a calendar or a todo.txt."""

    content: str = Field(description="The file's text (OFX/QFX, iCalendar or todo.txt).")


class Uploaded(BaseModel):
    """One of the caller's uploaded files (never its content)."""

    category: str
    name: str
    bytes: int
    uploaded_at: str


def _principal(request: Request) -> str:
    return principal_of(call_context(request))


def _uploads(request: Request) -> UserSources:
    uploads = runtime_of(request).services.get_optional(UserSources)
    if uploads is None:
        raise HTTPException(404, "uploads are off ([context] uploads = false, or no context pack)")
    return uploads


@router.get("/sources", summary="Context sources", response_model=list[Source])
async def sources(request: Request) -> list[Source]:
    """The caller's sources (empty when the context pack is off), with their last fetch."""
    bridges = runtime_of(request).services.get_optional(ContextBridges)
    if bridges is None:
        return []
    bridge = bridges.for_principal(_principal(request))
    last: dict[str, Any] = {r.source_id: r for r in bridge.last_fetches()}
    out = []
    for adapter in bridge.adapters:
        source_id = f"context:{adapter.category}:{adapter.platform}"
        result = last.get(source_id)
        out.append(
            Source(
                category=adapter.category,
                platform=adapter.platform,
                source_id=source_id,
                fetched_at=result.fetched_at.isoformat(timespec="seconds") if result else None,
                ok=result.success if result else None,
                error=result.error if result else None,
                records=result.transformed_count if result else None,
            )
        )
    return out


@router.get("/uploads", summary="Your uploaded sources", response_model=list[Uploaded])
async def uploads(request: Request) -> list[Uploaded]:
    """The caller's uploaded files."""
    return [
        Uploaded(category=f.category, name=f.name, bytes=f.bytes, uploaded_at=f.uploaded_at)
        for f in _uploads(request).files(_principal(request))
    ]


@router.put(
    "/uploads/{category}/{name}",
    summary="Upload a source",
    response_model=Uploaded,
    responses=problems(400, 404, e400="The file is over [context] max_upload_mb, or you have "
                       "max_uploads files already.",
                       e404="Uploads are off ([context] uploads = false)."),
)  # fmt: skip
async def upload(request: Request, category: Category, name: FileName, body: Upload) -> Uploaded:
    """Store (or replace) one of the caller's files; ``user_context`` reads it next call."""
    try:
        stored = _uploads(request).add(
            _principal(request), category, name, body.content.encode("utf-8")
        )
    except InvalidArgumentsError as exc:
        raise HTTPException(400, str(exc)) from None
    return Uploaded(
        category=stored.category,
        name=stored.name,
        bytes=stored.bytes,
        uploaded_at=stored.uploaded_at,
    )


@router.delete(
    "/uploads/{category}/{name}",
    summary="Delete an uploaded source",
    responses=problems(404, e404="You have no such file, or uploads are off."),
)
async def delete(request: Request, category: Category, name: FileName) -> dict[str, bool]:
    """Delete one of the caller's files."""
    if not _uploads(request).delete(_principal(request), category, name):
        raise HTTPException(404, f"you have no {category} file {name!r}")
    return {"deleted": True}
