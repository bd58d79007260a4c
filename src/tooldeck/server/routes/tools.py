"""``/api/tools``: list definitions in any format, execute a tool by name."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import JSONResponse

from tooldeck.exporters import FORMATS, export
from tooldeck.server.http import call_context, result_response, runtime_of

__all__ = ["router"]

router = APIRouter(prefix="/api/tools", tags=["tools"])


@router.get("", summary="List tools")
async def list_tools(
    request: Request,
    format: str = Query("definitions", description=f"definitions, {', '.join(FORMATS)}"),
) -> Any:
    """Tool definitions, or the tools in a model/client format (``?format=openai``, ...)."""
    definitions = await runtime_of(request).provider.definitions()
    if format == "definitions":
        return [d.model_dump(mode="json") for d in definitions]
    if format not in FORMATS:
        return JSONResponse(
            status_code=422,
            content={
                "detail": f"unknown format {format!r}; formats: definitions, {', '.join(FORMATS)}"
            },
        )
    return export(definitions, format)


@router.post(
    "/execute/{name}",
    summary="Execute a tool",
    responses={
        200: {"description": "ToolResult, status success"},
        404: {"description": "ToolResult, error not_found"},
        422: {"description": "ToolResult, error validation"},
        500: {"description": "ToolResult, error execution"},
        503: {"description": "ToolResult, error circuit_open or unavailable"},
        504: {"description": "ToolResult, error timeout"},
    },
)
async def execute_tool(name: str, request: Request) -> Response:
    """Run tool ``name`` with the JSON body as its arguments; the body of the reply is a ToolResult."""
    body = await request.body()
    result = await runtime_of(request).provider.execute(name, body or b"{}", call_context(request))
    return result_response(result)
