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

__all__ = ["STATIC_DIR", "install"]

STATIC_DIR = Path(__file__).parent / "static"


async def _page(path: str = "") -> FileResponse:
    """The UI's single page; the browser routes on ``location.pathname``."""
    return FileResponse(STATIC_DIR / "index.html", headers={"Cache-Control": "no-cache"})


def install(app: FastAPI) -> None:
    """Serve the UI on ``app``: ``/tools/static/*`` files, and the page for ``/tools/*``."""
    app.mount("/tools/static", StaticFiles(directory=STATIC_DIR), name="tools-static")
    for path in ("/tools", "/tools/{path:path}"):
        app.add_api_route(path, _page, methods=["GET"], include_in_schema=False)
