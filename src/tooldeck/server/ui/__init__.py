"""The tools UI at ``/tools``: a page per concern, rendered in the browser from ``/api/*``.

Served from files in this package (``static/``) and the packs' page scripts
(``PackParts.console``); nothing is fetched from the internet. Every path under
``/tools`` answers the same page, which routes on its location (``/tools``,
``/tools/t/<name>``, ``/tools/chat``, ``/tools/history``, ``/tools/metrics``,
``/tools/approvals``, and each pack page's ``/tools/<name>``: ``documents`` and
``sources`` from the shipped packs). The page lists the packs' pages from
``/tools/pack/pages.json`` and loads a page's script from ``/tools/pack/<name>.js`` when
it is opened. The page itself holds no data, so it is served without the API key; its
calls to ``/api/*`` send the key the user enters when one is configured.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse, JSONResponse, Response
from starlette.staticfiles import StaticFiles

from tooldeck.core.pack import ConsolePage

__all__ = ["CONTENT_SECURITY_POLICY", "STATIC_DIR", "install"]

STATIC_DIR = Path(__file__).parent / "static"


CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
"""The page's own files only: no inline script or style, nothing from elsewhere, not
framed. The page shows text other people wrote (tool results, documents, answers) as
text nodes; this is the net under that rule."""


_HEADERS = {"Cache-Control": "no-cache", "Content-Security-Policy": CONTENT_SECURITY_POLICY}


async def _page(path: str = "") -> FileResponse:
    """The UI's single page; the browser routes on ``location.pathname``."""
    return FileResponse(STATIC_DIR / "index.html", headers=_HEADERS)


def install(app: FastAPI, pages: Sequence[ConsolePage] = ()) -> None:
    """Serve the UI on ``app``: its files, the packs' ``pages``, the page for ``/tools/*``."""
    app.mount("/tools/static", StaticFiles(directory=STATIC_DIR), name="tools-static")
    listing = [
        {"name": p.name, "title": p.title, "script": f"/tools/pack/{p.name}.js"} for p in pages
    ]
    scripts = {p.name: p.script for p in pages}

    async def pages_json() -> JSONResponse:
        return JSONResponse(listing, headers=_HEADERS)

    async def script(name: str) -> Response:
        path = scripts.get(name)
        if path is None:
            return Response(f"no console page {name!r}", status_code=404, media_type="text/plain")
        return FileResponse(path, media_type="text/javascript", headers=_HEADERS)

    app.add_api_route(
        "/tools/pack/pages.json", pages_json, methods=["GET"], include_in_schema=False
    )
    app.add_api_route("/tools/pack/{name}.js", script, methods=["GET"], include_in_schema=False)
    for path in ("/tools", "/tools/{path:path}"):
        app.add_api_route(path, _page, methods=["GET"], include_in_schema=False)
