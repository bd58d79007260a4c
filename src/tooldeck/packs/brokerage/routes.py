"""The seed 004 endpoints: ``GET /api/<domain>`` with query parameters → the tool's ToolResult."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import APIRouter, Request, Response

from tooldeck.core.definition import ToolDefinition
from tooldeck.server.http import TOOL_RESPONSES, call_context, runtime_of, tool_response

__all__ = ["document_parameters", "router"]

router = APIRouter(prefix="/api", tags=["brokerage"])

_ROUTES = {
    "positions": "get_positions",
    "positions_list": "get_positions_list",
    "quotes": "get_quotes",
    "activity": "get_activity",
    "transfers": "get_transfers",
    "performance": "get_performance",
    "account_summary": "get_account_summary",
    "facts": "get_facts",
}
_LISTS = {"symbols"}  # query parameters that may repeat


def _endpoint(tool_name: str):  # type: ignore[no-untyped-def]
    async def endpoint(request: Request) -> Response:
        query = request.query_params
        arguments = {
            key: (query.getlist(key) if key in _LISTS else query[key])
            for key in query
            if key != "profile"
        }
        call = runtime_of(request).provider.execute(tool_name, arguments, call_context(request))
        return await tool_response(request, call)

    endpoint.__name__ = f"api_{tool_name}"
    endpoint.__doc__ = (
        f"Run ``{tool_name}`` with the query parameters as arguments; returns its ToolResult."
    )
    return endpoint


for _path, _tool in _ROUTES.items():
    router.add_api_route(
        f"/{_path}", _endpoint(_tool), methods=["GET"], summary=_tool, responses=TOOL_RESPONSES
    )


def document_parameters(openapi: dict[str, Any], definitions: Sequence[ToolDefinition]) -> None:
    """Give each seed endpoint in ``openapi`` its tool's arguments as query parameters.

    The routes are declared before the runtime exists, so their parameters come from
    the tools' input schemas once it does (a list argument repeats: ``?symbols=A&symbols=B``).
    """
    by_name = {d.name: d for d in definitions}
    paths = openapi.get("paths", {})
    for path, tool in _ROUTES.items():
        operation = paths.get(f"/api/{path}", {}).get("get")
        definition = by_name.get(tool)
        if operation is None or definition is None:
            continue
        schema = definition.input_schema
        required = set(schema.get("required", ()))
        operation["parameters"] = [
            {
                "name": name,
                "in": "query",
                "required": name in required,
                "description": prop.get("description", ""),
                "schema": {k: v for k, v in prop.items() if k != "description"},
                **({"style": "form", "explode": True} if name in _LISTS else {}),
            }
            for name, prop in (schema.get("properties") or {}).items()
        ]
