"""``/api/resources``, ``/api/prompts``: the MCP resources and prompts a profile sees.

The same as tooldeck's MCP server offers (``server.mcp_upstream``): the packs'
resources that go with a tool of the view, read as the caller (a user's own documents
to that user alone), then the upstream MCP servers' of the view. The tools page shows
them beside the tools.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Query, Request

from tooldeck.exceptions import ConfigError
from tooldeck.server.http import PROFILE, caller_of, problems, runtime_of
from tooldeck.server.mcp_upstream import list_prompts, list_resources, read_resource

__all__ = ["router"]

router = APIRouter(prefix="/api", tags=["resources"])


def _wire(item: Any) -> dict[str, Any]:
    """An ``mcp_types`` object as MCP's JSON (``mimeType``, ``uriTemplate``)."""
    return item.model_dump(mode="json", by_alias=True, exclude_none=True)  # type: ignore[no-any-return]


async def _view(request: Request) -> tuple[list[Any], list[Any]]:
    """The ``?profile=`` view's (upstream servers, pack sources).

    Raises:
        HTTPException: 404 for an unknown profile, naming the configured ones.
    """
    runtime = runtime_of(request)
    profile = request.query_params.get("profile")
    try:
        return runtime.resource_servers(profile), await runtime.resource_sources(profile)
    except ConfigError as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from None


@router.get(
    "/resources",
    summary="The MCP resources and resource templates a profile sees",
    responses=problems(404),
    openapi_extra={"parameters": [PROFILE]},
)
async def resources(request: Request) -> dict[str, Any]:
    """``{"resources": [Resource + "server"], "templates": [ResourceTemplate + "server"]}``.

    Each item is MCP's JSON (``uri``, ``name``, ``mimeType``, ``description``;
    ``uriTemplate``) with ``server``: the upstream MCP server's id, or ``tooldeck`` for
    a pack's. A pack's resources are those the caller may read.
    """
    servers, sources = await _view(request)
    listed, templates = await list_resources(servers, sources, caller_of(request))
    return {
        "resources": [{**_wire(r), "server": server} for server, r in listed],
        "templates": [{**_wire(t), "server": server} for server, t in templates],
    }


@router.get(
    "/resources/read",
    summary="One resource's contents",
    responses=problems(
        404,
        502,
        e404="No resource has this URI in the view (or it is another user's), or no such profile.",
        e502="The upstream MCP server that listed it failed to read it (its message).",
    ),
    openapi_extra={"parameters": [PROFILE]},
)
async def read(
    request: Request,
    uri: str = Query(description="The resource's URI, as listed (or one a template makes)."),
) -> dict[str, Any]:
    """``{"uri", "contents": [{"uri", "mimeType", "text" | "blob"}]}`` (MCP's ``ReadResourceResult``).

    404 when nobody in the view has ``uri`` (or it is another user's); 502 when the
    upstream server that listed it fails to read it (its message).
    """
    servers, sources = await _view(request)
    try:
        found = await read_resource(servers, sources, uri, caller_of(request))
    except LookupError as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from None
    except Exception as exc:  # the upstream's own error
        raise HTTPException(
            status_code=502, detail=f"the MCP server could not read {uri!r}: {exc}"
        ) from None
    return {"uri": uri, "contents": [_wire(c) for c in found.contents]}


@router.get(
    "/prompts",
    summary="The MCP prompts a profile sees",
    responses=problems(404),
    openapi_extra={"parameters": [PROFILE]},
)
async def prompts(request: Request) -> dict[str, Any]:
    """``{"prompts": [Prompt + "server"]}``: ``name``, ``description``, ``arguments``."""
    servers, _ = await _view(request)
    return {"prompts": [{**_wire(p), "server": sid} for sid, p in await list_prompts(servers)]}
