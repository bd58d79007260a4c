"""The tools UI at ``/tools``: a page per concern, rendered in the browser from ``/api/*``.

Served from files in this package (``static/``); nothing is fetched from the internet.
Every path under ``/tools`` answers the same page, which routes on its location
(``/tools``, ``/tools/t/<name>``, ``/tools/chat``, ``/tools/documents``,
``/tools/sources``, ``/tools/history``, ``/tools/metrics``, ``/tools/approvals``). The
page itself holds no data, so it is served without the API key; its calls to ``/api/*``
send the key the user enters when one is configured.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse
from starlette.staticfiles import StaticFiles

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


async def _page(path: str = "") -> FileResponse:
    """The UI's single page; the browser routes on ``location.pathname``."""
    headers = {"Cache-Control": "no-cache", "Content-Security-Policy": CONTENT_SECURITY_POLICY}
    return FileResponse(STATIC_DIR / "index.html", headers=headers)


def install(app: FastAPI) -> None:
    """Serve the UI on ``app``: ``/tools/static/*`` files, and the page for ``/tools/*``."""
    app.mount("/tools/static", StaticFiles(directory=STATIC_DIR), name="tools-static")
    for path in ("/tools", "/tools/{path:path}"):
        app.add_api_route(path, _page, methods=["GET"], include_in_schema=False)
