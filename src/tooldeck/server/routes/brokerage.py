"""The seed 004 endpoints: ``GET /api/<domain>`` with query parameters → the tool's ToolResult."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from tooldeck.server.http import call_context, result_response, runtime_of

__all__ = ["router"]

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
        result = await runtime_of(request).provider.execute(
            tool_name, arguments, call_context(request)
        )
        return result_response(result)

    endpoint.__name__ = f"api_{tool_name}"
    endpoint.__doc__ = (
        f"Run ``{tool_name}`` with the query parameters as arguments; returns its ToolResult."
    )
    return endpoint


for _path, _tool in _ROUTES.items():
    router.add_api_route(f"/{_path}", _endpoint(_tool), methods=["GET"], summary=_tool)
