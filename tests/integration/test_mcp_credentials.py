"""An upstream MCP server's token from the credential store, not from a config file.

A real stdio MCP server (the ``mcp`` SDK's ``MCPServer``) reads ``API_TOKEN`` from its
environment; ``[mcp_servers.vault] env = { API_TOKEN = "{credential}" }`` with
``credential = "mcp:vault"`` fills it from the store when tooldeck starts the server.
"""

from __future__ import annotations

import asyncio
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tooldeck.config import load_settings
from tooldeck.core.context import ANONYMOUS
from tooldeck.core.credentials import CredentialStore
from tooldeck.runtime import build_runtime

pytestmark = pytest.mark.integration

SERVER = textwrap.dedent(
    '''
    import os

    from mcp.server.mcpserver import MCPServer

    server = MCPServer("vault")


    @server.tool()
    def token_tail() -> str:
        """The last four characters of the token this server was started with."""
        return os.environ.get("API_TOKEN", "none")[-4:]


    server.run()
    '''
)


def vault(tmp_path: Path, extra: str = "") -> tuple[Path, Any]:
    """The config file of the vault server (``extra``: more lines in its table), and its
    settings."""
    script = tmp_path / "vault_server.py"
    script.write_text(SERVER)
    config = tmp_path / "tooldeck.toml"
    config.write_text(
        textwrap.dedent(
            f"""
            [credentials]
            use_keyring = false

            [mcp_servers.vault]
            command = {sys.executable!r}
            args = [{str(script)!r}]
            env = {{ API_TOKEN = "{{credential}}" }}
            credential = "mcp:vault"
            """
        )
        + extra
        + "\n"
    )
    return config, load_settings(config, data_dir=tmp_path / "data", builtin={"enabled": False})


def test_the_token_comes_from_the_store_and_its_absence_says_how_to_store_it(
    tmp_path: Path,
) -> None:
    config, settings = vault(tmp_path)

    async def call() -> tuple[object, str | None]:
        runtime = build_runtime(settings)
        try:
            result = await runtime.provider.execute("token_tail", {})
            return result, runtime.mcp["vault"].last_error  # what doctor and tools/list show
        finally:
            await runtime.aclose()

    missing, why = asyncio.run(call())
    assert missing.error is not None  # type: ignore[attr-defined]
    assert why is not None and "tooldeck credentials set mcp:vault" in why

    store = build_runtime(settings).services.get(CredentialStore)  # type: ignore[type-abstract]
    store.put(ANONYMOUS, "mcp:vault", "tok-secret-9f3a")
    answered, why = asyncio.run(call())
    assert why is None and answered.success, answered.error  # type: ignore[attr-defined]
    assert "9f3a" in str(answered.data)  # type: ignore[attr-defined]
    assert "tok-secret" not in config.read_text()


def test_a_credential_no_value_uses_is_a_config_error() -> None:
    from tooldeck.providers import MCPServerConfig

    with pytest.raises(ValueError, match=r'put "\{credential\}" in an env or headers value'):
        MCPServerConfig(command="server", credential="mcp:vault", env={"API_TOKEN": "plain"})
    config = MCPServerConfig(
        url="https://example.invalid/mcp",
        headers={"Authorization": "Bearer {credential}"},
        credential="mcp:remote",
    )
    assert config.with_secret("s3").headers == {"Authorization": "Bearer s3"}
    assert config.headers == {"Authorization": "Bearer {credential}"}  # unchanged: derived


def test_per_user_each_caller_gets_a_session_started_with_their_own_token(
    tmp_path: Path,
) -> None:
    """Two users, two processes, two tokens; a third user without one is told how to
    store it and never served with another's; a caller without identity gets the
    server's own session."""
    from tooldeck.core import ToolContext

    _, settings = vault(tmp_path, "per_user = true")
    store = build_runtime(settings).services.get(CredentialStore)  # type: ignore[type-abstract]
    store.put(ANONYMOUS, "mcp:vault", "tok-owner-0000")
    store.put("ann", "mcp:vault", "tok-ann-1111")
    store.put("bob", "mcp:vault", "tok-bob-2222")

    async def calls() -> dict[str, object]:
        runtime = build_runtime(settings)
        try:
            answers: dict[str, object] = {}
            for user in ("ann", "bob", "carol", None, "ann"):
                result = await runtime.provider.execute("token_tail", {}, ToolContext(user=user))
                answers[f"{user}{len(answers)}"] = (
                    result.data if result.success else result.error.message  # type: ignore[union-attr]
                )
            return answers
        finally:
            await runtime.aclose()

    answers = asyncio.run(calls())
    assert "1111" in str(answers["ann0"]) and "1111" in str(answers["ann4"])
    assert "2222" in str(answers["bob1"])
    assert "tooldeck credentials set mcp:vault -u carol" in str(answers["carol2"])
    assert "0000" in str(answers["None3"])  # no identity: the server's own session
    assert not any(t in str(answers["carol2"]) for t in ("0000", "1111", "2222"))


def test_per_user_without_a_credential_is_a_config_error() -> None:
    from tooldeck.providers import MCPServerConfig

    with pytest.raises(ValueError, match="per_user needs credential"):
        MCPServerConfig(command="server", per_user=True)
