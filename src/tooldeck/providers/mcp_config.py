"""An MCP server's configuration, in the ``mcpServers`` form of MCP clients.

``MCPServerConfig`` is one ``[mcp_servers.<id>]`` table (or one entry of a client's JSON
file, ``load_mcp_servers_file``); ``resolve_command`` finds its executable the way a
desktop client's launch needs (its own ``PATH``, then beside tooldeck's Python).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

__all__ = ["CREDENTIAL", "MCPServerConfig", "load_mcp_servers_file", "resolve_command"]

CREDENTIAL = "{credential}"
"""Replaced, in ``env`` and ``headers`` values, by the secret of ``credential``."""


def resolve_command(command: str, env: Mapping[str, str] | None = None) -> str:
    """The executable ``command`` names, for a desktop client's own ``PATH``.

    As given when it is a path or found on ``PATH`` (``env``'s, else the process's);
    else the one beside tooldeck's Python (``mcp-server-time`` installed in its
    virtual environment); else unchanged (starting it then fails, naming the server).
    """
    if os.sep in command:
        return command
    path = (env or {}).get("PATH") or os.environ.get("PATH")
    if shutil.which(command, path=path) is not None:
        return command
    beside = shutil.which(command, path=str(Path(sys.executable).parent))
    return beside or command


class MCPServerConfig(BaseModel):
    """One MCP server, in the ``mcpServers`` form used by MCP clients.

    Either ``command`` (stdio: the server is started as a subprocess) or ``url``
    (streamable HTTP, or SSE with ``transport = "sse"``).
    """

    model_config = ConfigDict(extra="forbid")

    command: str | None = None
    """Executable to start (stdio): a path, or a name looked up on ``PATH`` and then
    beside tooldeck's own Python (a desktop client starts ``tooldeck mcp`` with a PATH
    of its own, without tooldeck's virtual environment)."""
    args: list[str] = Field(default_factory=list)
    """Its arguments."""
    env: dict[str, str] | None = None
    """Extra environment variables for it."""
    cwd: Path | None = None
    """Its working directory; relative to the config file's folder, which is also the
    default (a desktop client starts tooldeck in ``/``, and ``args = ["--repository",
    "."]`` means the project)."""
    url: str | None = None
    """Endpoint of a remote server."""
    headers: dict[str, str] = Field(default_factory=dict)
    """HTTP headers sent to a remote server (e.g. Authorization)."""
    credential: str | None = None
    """A scope in the credential store (``tooldeck credentials set mcp:github``) whose
    secret replaces ``{credential}`` in ``env`` and ``headers`` values when the server
    starts, so a token is in neither ``tooldeck.toml`` nor the client's settings::

        env = { GITHUB_PERSONAL_ACCESS_TOKEN = "{credential}" }
        credential = "mcp:github"

    It is the server's own user's (principal ``anonymous``), and one session serves
    every caller, unless ``per_user``."""
    per_user: bool = False
    """Each caller gets a session of their own, started with their own ``credential``
    (``tooldeck credentials set mcp:github -u ann``): a caller who stored none is told
    how to store it and is never served with another's. Callers without an identity
    (``anonymous``) use the server's own session. For a stdio server each user's
    session is a process of its own."""
    transport: Literal["stdio", "http", "streamable-http", "sse"] | None = None
    """Default: ``stdio`` with a command, ``http`` (streamable HTTP) with a url."""
    init_timeout_s: float = Field(60.0, gt=0)
    """Seconds allowed to start and initialize the session (seed 002: 60 s)."""
    protocol: Literal["auto", "legacy"] = "auto"
    """``auto``: the newest MCP protocol both sides speak; ``legacy``: the 2025-11-25
    ``initialize`` handshake, for a server that mishandles the newer one."""
    enabled: bool = True
    """Set false to keep the entry but not connect."""
    prefix: str | None = None
    """Show its tools as ``<prefix>_<name>`` (when two servers share tool names)."""

    @model_validator(mode="after")
    def _one_transport(self) -> MCPServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError(
                'give either "command" (stdio) or "url" (HTTP/SSE), not both or neither'
            )
        if self.transport is None:
            self.transport = "stdio" if self.command else "http"
        if (self.transport == "stdio") != (self.command is not None):
            raise ValueError(f'transport "{self.transport}" does not fit the given command/url')
        if self.per_user and self.credential is None:
            raise ValueError('per_user needs credential = "mcp:<name>": the token it fills')
        if self.credential is not None and not any(
            CREDENTIAL in value for value in (*(self.env or {}).values(), *self.headers.values())
        ):
            raise ValueError(
                f'credential = "{self.credential}" is used nowhere: put "{CREDENTIAL}" in an '
                'env or headers value, e.g. env = { API_TOKEN = "{credential}" }'
            )
        return self

    def with_secret(self, secret: str) -> MCPServerConfig:
        """This configuration with ``{credential}`` replaced by ``secret`` (``credential``)."""
        env = {k: v.replace(CREDENTIAL, secret) for k, v in (self.env or {}).items()}
        headers = {k: v.replace(CREDENTIAL, secret) for k, v in self.headers.items()}
        return self.model_copy(
            update={"env": env if self.env is not None else None, "headers": headers}
        )


def load_mcp_servers_file(path: Path) -> dict[str, MCPServerConfig]:
    """Read an MCP client's JSON configuration (``{"mcpServers": {id: {...}}}``).

    Raises:
        ValueError: the file is not JSON, has no ``mcpServers`` object, or an entry is
            invalid; the message names the file and the server id.
    """
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read MCP config {path}: {exc}") from None
    servers = document.get("mcpServers") if isinstance(document, dict) else None
    if not isinstance(servers, dict):
        raise ValueError(f'{path}: expected an object with "mcpServers": {{id: {{...}}}}')
    configs: dict[str, MCPServerConfig] = {}
    for server_id, entry in servers.items():
        entry = (
            {k: v for k, v in entry.items() if k != "type"} if isinstance(entry, dict) else entry
        )
        try:
            configs[server_id] = MCPServerConfig.model_validate(entry)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'entry'}: {e['msg']}"
                for e in exc.errors(include_url=False)
            )
            raise ValueError(f"{path}: mcpServers.{server_id}: {problems}") from None
    return configs
