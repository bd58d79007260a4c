"""Whether the console at a URL is this project's own, before anything secret is sent to it.

``tooldeck mcp`` (stdio) asks the project's console (``tooldeck serve``) to show an
approval page, which means sending it the server's API key and the approval's link
token. Whatever listens on ``127.0.0.1:<port>`` may be another user's program; so
first it proves itself: the project's data folder holds ``console.key`` (32 random
bytes, ``0600``, made by whichever process needs it first), and ``GET
/api/console/proof?nonce=N`` answers ``HMAC-SHA256(key, "N:<port>")`` for the port the
console was started on. Only a process that can read the key answers right, and a
console of this project on another port cannot be relayed (its port is in the proof).
The request carries no secret. A wrong or missing proof: the caller falls back to the
terminal command.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

    from tooldeck.config import Settings

__all__ = ["KEY_FILE", "console_key", "console_of", "proof", "proves"]

KEY_FILE = "console.key"
"""The key's file name in the data folder."""


def console_key(data_dir: Path) -> bytes:
    """The project's console key (made, ``0600``, on first use; safe when two processes race).

    Raises:
        OSError: the data folder cannot be written or the key read.
    """
    path = data_dir / KEY_FILE
    try:
        return path.read_bytes()
    except FileNotFoundError:
        pass
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    key = secrets.token_bytes(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first
        return path.read_bytes()
    with os.fdopen(fd, "wb") as file:
        file.write(key)
    return key


def console_of(settings: Settings) -> tuple[str, int]:
    """The project's console: its base URL and the port it names.

    ``[approvals] console_url``, else ``http://127.0.0.1:<server.port>`` (where ``tooldeck
    serve`` of the project listens).
    """
    import httpx

    console = settings.approvals.console_url or f"http://127.0.0.1:{settings.server.port}"
    console = console.rstrip("/")
    return console, httpx.URL(console).port or (443 if console.startswith("https:") else 80)


def proof(key: bytes, nonce: str, port: int) -> str:
    """``HMAC-SHA256(key, "<nonce>:<port>")`` as hex."""
    return hmac.new(key, f"{nonce}:{port}".encode(), hashlib.sha256).hexdigest()


async def proves(client: httpx.AsyncClient, console: str, port: int, data_dir: Path) -> bool:
    """Whether the console at ``console`` (listening on ``port``) answers this project's proof.

    Args:
        client: The HTTP client to ask with.
        console: The console's base URL.
        port: The port the URL names.
        data_dir: This project's data folder (where ``console.key`` is).

    Returns:
        True only for a right proof; any failure (no answer, another program) is False.
    """
    import httpx

    nonce = secrets.token_urlsafe(16)
    try:
        answer = await client.get(f"{console}/api/console/proof", params={"nonce": nonce})
        said = answer.json().get("proof") if answer.status_code == 200 else None
        expected = proof(console_key(data_dir), nonce, port)
    except (httpx.HTTPError, ValueError, AttributeError, OSError):
        return False
    return isinstance(said, str) and hmac.compare_digest(said, expected)
