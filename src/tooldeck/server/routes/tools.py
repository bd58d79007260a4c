"""``/api/tools``: list definitions in any format, execute a tool by name."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import JSONResponse

from tooldeck.exporters import FORMATS, export
from tooldeck.server.http import call_context, result_response, view_of

__all__ = ["router"]

router = APIRouter(prefix="/api/tools", tags=["tools"])


@router.get("", summary="List tools")
async def list_tools(
    request: Request,
    format: str = Query("definitions", description=f"definitions, {', '.join(FORMATS)}"),
) -> Any:
    """Tool definitions, or the tools in a model/client format (``?format=openai``, ...).

    Without ``?profile=`` every tool is listed (the tools UI view); with it, that
    profile's view. ``definitions`` lists tools that are temporarily unavailable (an
    open circuit breaker) with ``unavailable`` set to why; the model formats leave
    them out, so a model stops calling them.
    """
    view = view_of(request)
    if format == "definitions":
        hidden = view.unavailable()
        return [
            {**d.model_dump(mode="json"), "unavailable": hidden.get(d.name)}
            for d in await view.all_definitions()
        ]
    definitions = await view.definitions()
    if format not in FORMATS:
        return JSONResponse(
            status_code=422,
            content={
                "detail": f"unknown format {format!r}; formats: definitions, {', '.join(FORMATS)}"
            },
        )
    return export(definitions, format)


@router.post(
    "/execute/{name:path}",
    summary="Execute a tool",
    responses={
        200: {"description": "ToolResult, status success"},
        403: {"description": "ToolResult, error denied"},
        404: {"description": "ToolResult, error not_found (or unknown profile)"},
        409: {"description": "ToolResult, error confirmation_required"},
        422: {"description": "ToolResult, error validation"},
        500: {"description": "ToolResult, error execution"},
        503: {"description": "ToolResult, error circuit_open or unavailable"},
        504: {"description": "ToolResult, error timeout"},
    },
)
async def execute_tool(name: str, request: Request) -> Response:
    """Run tool ``name`` with the JSON body as its arguments; the body of the reply is a ToolResult."""
    body = await request.body()
    result = await view_of(request).execute(name, body or b"{}", call_context(request))
    return result_response(result)
