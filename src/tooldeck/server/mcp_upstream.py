"""The resources and prompts a view offers: the packs' and the upstream MCP servers'.

A view's resources are the packs' that go with a tool of the view (the knowledge
pack's documents, ``tooldeck://documents/<id>``, each caller shown what it may read),
then the upstream MCP servers' that the view includes, as they list them. Resource
templates and prompts come from those servers (their URIs and names unchanged; on a
prompt name two servers share, the first server's). A resource is read from whoever
listed it; a URI nobody listed (a template's) is tried on the servers that have
templates. The MCP server (``upstream_handlers``: ``resources/list``, ``resources/read``,
``prompts/list``, ...) and the REST API (``server.routes.resources``) answer from the
same functions; errors name what exists.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from tooldeck.core.pack import ResourceSource
from tooldeck.providers.mcp import MCPToolsProvider

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

__all__ = ["LOCAL", "list_prompts", "list_resources", "read_resource", "upstream_handlers"]

Upstream = Callable[["ServerRequestContext[Any]"], list[MCPToolsProvider]]
"""The MCP servers a request's profile includes."""
Local = Callable[["ServerRequestContext[Any]"], Awaitable[list[ResourceSource]]]
"""The packs' resource sources that go with a tool of the request's view."""


LOCAL = "tooldeck"
"""The server named for a pack's resource."""

Listed = list[tuple[str, Any]]
"""(server id, ``mcp_types`` object) pairs; ``LOCAL`` for a pack's."""


async def list_resources(
    servers: Sequence[MCPToolsProvider], sources: Sequence[ResourceSource], viewer: str | None
) -> tuple[Listed, Listed]:
    """(resources, resource templates), each with the server that listed it, packs first.

    Args:
        servers: The upstream MCP servers of the view (``Runtime.resource_servers``).
        sources: The packs' sources of the view (``Runtime.resource_sources``).
        viewer: The caller's principal; None: only what every caller may read.
    """
    import mcp_types as types

    resources: Listed = []
    for source in sources:
        listed = await asyncio.to_thread(source.list, viewer)
        resources += [(LOCAL, types.Resource.model_validate(item)) for item in listed]
    templates: Listed = []
    for server in servers:
        for item in await server.resources():
            kind = templates if isinstance(item, types.ResourceTemplate) else resources
            kind.append((server.id, item))
    return resources, templates


async def read_resource(
    servers: Sequence[MCPToolsProvider],
    sources: Sequence[ResourceSource],
    uri: str,
    viewer: str | None,
) -> Any:
    """``uri`` 's ``ReadResourceResult`` (``mcp_types``).

    Raises:
        LookupError: nobody in the view has ``uri`` (or it is not ``viewer``'s); the
            message says where to look.
        Exception: the upstream server's own error reading a resource it listed.
    """
    import mcp_types as types

    for source in sources:
        if uri.startswith(source.prefix):
            found = await asyncio.to_thread(source.read, uri, viewer)
            if found is None:
                raise LookupError(f"no resource {uri!r}; listing the resources names them")
            return types.ReadResourceResult(
                contents=[types.TextResourceContents.model_validate(found)]
            )
    for server in servers:  # the server that listed it
        listed = await server.resources()
        if any(str(getattr(r, "uri", "")) == uri for r in listed):
            return await server.read_resource(uri)
    for server in servers:  # a template's: the servers with templates, in turn
        if any(isinstance(r, types.ResourceTemplate) for r in await server.resources()):
            with contextlib.suppress(Exception):
                return await server.read_resource(uri)
    raise LookupError(
        f"no resource {uri!r} in this view's MCP servers "
        f"({', '.join(s.id for s in servers) or 'none'}); listing the resources names them"
    )


async def list_prompts(servers: Sequence[MCPToolsProvider]) -> list[tuple[str, Any]]:
    """(server id, ``Prompt``) of each prompt name, the first server's on a clash."""
    found: dict[str, tuple[str, Any]] = {}
    for server in servers:
        for prompt in await server.prompts():
            found.setdefault(prompt.name, (server.id, prompt))
    return list(found.values())


def upstream_handlers(upstream: Upstream, local: Local) -> dict[str, Any]:
    """The SDK ``Server`` 's resource and prompt handlers (``on_list_resources``, ...).

    MCP callers are shown what every caller may read (the packs' ``viewer`` None).

    Args:
        upstream: The MCP servers of the request's view.
        local: The packs' resource sources of the request's view.
    """
    import mcp_types as types
    from mcp.shared.exceptions import MCPError

    async def on_list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        resources, _ = await list_resources(upstream(ctx), await local(ctx), None)
        return types.ListResourcesResult(resources=[r for _, r in resources])

    async def on_list_resource_templates(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        _, templates = await list_resources(upstream(ctx), [], None)
        return types.ListResourceTemplatesResult(resource_templates=[t for _, t in templates])

    async def on_read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        try:
            return await read_resource(upstream(ctx), await local(ctx), str(params.uri), None)  # type: ignore[no-any-return]
        except LookupError as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc)) from None

    async def on_list_prompts(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[p for _, p in await list_prompts(upstream(ctx))])

    async def on_get_prompt(
        ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        servers = upstream(ctx)
        for server in servers:
            if any(p.name == params.name for p in await server.prompts()):
                return await server.get_prompt(params.name, params.arguments)  # type: ignore[no-any-return]
        known = sorted(p.name for _, p in await list_prompts(servers))
        raise MCPError(
            types.INVALID_PARAMS,
            f"no prompt {params.name!r}; prompts: {', '.join(known) or 'none'}",
        )

    return {
        "on_list_resources": on_list_resources,
        "on_list_resource_templates": on_list_resource_templates,
        "on_read_resource": on_read_resource,
        "on_list_prompts": on_list_prompts,
        "on_get_prompt": on_get_prompt,
    }
