"""The resources and prompts tooldeck's MCP server offers: the packs' and the upstream's.

``resources/list`` gives the packs' resources that go with a tool of the view (the
knowledge pack's documents, ``tooldeck://documents/<id>``, read for the caller), then
the upstream MCP servers' that the profile's view includes, as they list them.
``resources/templates/list``, ``prompts/list`` and ``prompts/get`` come from those
servers (their URIs and names unchanged; on a prompt name two servers share, the
first server's). A resource is read from whoever listed it; a URI nobody listed (a
template's) is tried on the servers that have templates. Errors name what exists.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from tooldeck.core.pack import ResourceSource
from tooldeck.providers.mcp import MCPToolsProvider

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

__all__ = ["upstream_handlers"]

Upstream = Callable[["ServerRequestContext[Any]"], list[MCPToolsProvider]]
"""The MCP servers a request's profile includes."""
Local = Callable[["ServerRequestContext[Any]"], Awaitable[list[ResourceSource]]]
"""The packs' resource sources that go with a tool of the request's view."""


def upstream_handlers(upstream: Upstream, local: Local) -> dict[str, Any]:
    """The SDK ``Server`` 's resource and prompt handlers (``on_list_resources``, ...).

    Args:
        upstream: The MCP servers of the request's view.
        local: The packs' resource sources of the request's view.
    """
    import mcp_types as types
    from mcp.shared.exceptions import MCPError

    async def everything(ctx: ServerRequestContext[Any], kind: type[Any]) -> list[Any]:
        found: list[Any] = []
        for provider in upstream(ctx):
            found += [r for r in await provider.resources() if isinstance(r, kind)]
        return found

    async def list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        own: list[Any] = []
        for source in await local(ctx):
            listed = await asyncio.to_thread(source.list, None)  # MCP callers: shared only
            own += [types.Resource.model_validate(item) for item in listed]
        return types.ListResourcesResult(resources=own + await everything(ctx, types.Resource))

    async def list_resource_templates(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        templates = await everything(ctx, types.ResourceTemplate)
        return types.ListResourceTemplatesResult(resource_templates=templates)

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        for source in await local(ctx):
            if uri.startswith(source.prefix):
                found = await asyncio.to_thread(source.read, uri, None)
                if found is None:
                    raise MCPError(
                        types.INVALID_PARAMS, f"no resource {uri!r}; resources/list names them"
                    )
                return types.ReadResourceResult(
                    contents=[types.TextResourceContents.model_validate(found)]
                )
        providers = upstream(ctx)
        for provider in providers:  # the server that listed it
            listed = await provider.resources()
            if any(str(getattr(r, "uri", "")) == uri for r in listed):
                return await provider.read_resource(uri)  # type: ignore[no-any-return]
        for provider in providers:  # a template's: the servers with templates, in turn
            if any(isinstance(r, types.ResourceTemplate) for r in await provider.resources()):
                with contextlib.suppress(Exception):
                    return await provider.read_resource(uri)  # type: ignore[no-any-return]
        raise MCPError(
            types.INVALID_PARAMS,
            f"no resource {uri!r} in this view's MCP servers "
            f"({', '.join(p.id for p in providers) or 'none'}); resources/list names them",
        )

    async def list_prompts(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        found: dict[str, Any] = {}
        for provider in upstream(ctx):
            for prompt in await provider.prompts():
                found.setdefault(prompt.name, prompt)  # the first server's, on a clash
        return types.ListPromptsResult(prompts=list(found.values()))

    async def get_prompt(
        ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        providers = upstream(ctx)
        for provider in providers:
            if any(p.name == params.name for p in await provider.prompts()):
                return await provider.get_prompt(params.name, params.arguments)  # type: ignore[no-any-return]
        known = sorted({p.name for provider in providers for p in await provider.prompts()})
        raise MCPError(
            types.INVALID_PARAMS,
            f"no prompt {params.name!r}; prompts: {', '.join(known) or 'none'}",
        )

    return {
        "on_list_resources": list_resources,
        "on_list_resource_templates": list_resource_templates,
        "on_read_resource": read_resource,
        "on_list_prompts": list_prompts,
        "on_get_prompt": get_prompt,
    }
