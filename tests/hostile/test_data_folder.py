"""tooldeck's own data folder is out of every tool's reach (issue 53, finding 9).

With a ``tooldeck.toml``, the data folder is ``.tooldeck/`` beside it, inside the
default files root: ``files`` listed it (hidden entries asked for) and could read the
credential store's key and the approvals.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tooldeck.config import load_settings
from tooldeck.runtime import build_runtime


def test_the_files_tool_neither_lists_nor_reads_the_data_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOOLDECK_DATA_DIR")  # the project's own: .tooldeck/ beside the config
    config = tmp_path / "tooldeck.toml"
    config.write_text("[credentials]\nuse_keyring = false\n")
    (tmp_path / "notes.txt").write_text("mine")
    runtime = build_runtime(load_settings(config))
    data = runtime.settings.data_dir
    assert data == tmp_path / ".tooldeck"

    async def scenario() -> tuple[object, object, object]:
        try:
            from tooldeck.core import CredentialStore

            runtime.services.get(CredentialStore).put("ada", "x", "sk-ada-secret")  # type: ignore[type-abstract]
            files = runtime.provider
            listed = await files.execute(
                "files", {"action": "list", "path": ".", "recursive": True, "include_hidden": True}
            )
            key = next(data.glob("credentials*")).relative_to(tmp_path)
            read = await files.execute("files", {"action": "read", "path": str(key)})
            found = await files.execute("files", {"action": "search", "path": ".", "query": "sk-"})
            return listed, read, found
        finally:
            await runtime.aclose()

    listed, read, found = asyncio.run(scenario())
    paths = [e["path"] for e in listed.data["entries"]]  # type: ignore[attr-defined]
    assert "notes.txt" in paths and not any(p.startswith(".tooldeck") for p in paths), paths
    assert read.error is not None and read.error.type == "denied"  # type: ignore[attr-defined]
    assert "tooldeck's own data folder" in read.error.message  # type: ignore[attr-defined]
    assert found.success and found.data["matches"] == []  # type: ignore[attr-defined]
