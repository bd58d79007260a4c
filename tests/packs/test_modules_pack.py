"""Installed modules served by the runtime: the active version, switched by install and rollback."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from tooldeck.config import load_settings
from tooldeck.packs.modules import ModuleVersions, attest, static_checks
from tooldeck.runtime import build_runtime

MANIFEST = 'name = "{name}"\ndescription = "A test module"\n'

TOOLS = '''from tooldeck import tool

from . import helpers


@tool
def {name}_answer(question: str) -> dict:
    """Answers a question."""
    return {{"answer": helpers.ANSWER, "question": question}}
'''


def install(root: Path, name: str, answer: str, by: str = "ada") -> str:
    versions = ModuleVersions(root)
    files = {
        "module.toml": MANIFEST.format(name=name),
        "tools.py": TOOLS.format(name=name),
        "helpers.py": f"ANSWER = {answer!r}\n",
        "json.py": "raise RuntimeError('a module file must never replace the stdlib')\n",
    }
    if versions.active(name) is None and name not in versions.modules():
        draft = versions.create_draft(name, files)
    else:
        draft = versions.create_draft(name)
        versions.edit_draft(name, draft, "helpers.py", f"ANSWER = {answer!r}\n")
    folder = versions.draft_path(name, draft)
    return versions.promote(name, draft, attest(name, folder, static_checks(folder)), by=by)


def answer(data_dir: Path, tool: str) -> object:
    settings = load_settings(data_dir=data_dir, builtin={"enabled": False})

    async def call() -> object:
        runtime = build_runtime(settings)
        try:
            result = await runtime.provider.execute(tool, {"question": "?"})
            return result.data["answer"] if result.success else result.error
        finally:
            await runtime.aclose()

    return asyncio.run(call())


def test_the_active_version_is_served_and_a_rollback_switches_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    v1 = install(data / "modules", "oracle", "forty-two")
    assert answer(data, "oracle_answer") == "forty-two"
    install(data / "modules", "oracle", "forty-three", by="bob")
    assert answer(data, "oracle_answer") == "forty-three"
    ModuleVersions(data / "modules").rollback("oracle", v1, by="ada")
    assert answer(data, "oracle_answer") == "forty-two"
    assert json.dumps({"a": 1}) == '{"a": 1}' and sys.modules["json"].__file__ is not None
    assert "modules" not in sys.modules["json"].__file__  # the module's json.py stayed its own


def test_a_module_that_fails_to_load_is_left_out_and_the_others_served(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = tmp_path / "data"
    install(data / "modules", "oracle", "forty-two")
    versions = ModuleVersions(data / "modules")
    draft = versions.create_draft(
        "broken",
        {"module.toml": MANIFEST.format(name="broken"), "tools.py": "raise ValueError('boom')\n"},
    )
    folder = versions.draft_path("broken", draft)
    versions.promote("broken", draft, attest("broken", folder, static_checks(folder)), by="ada")
    assert answer(data, "oracle_answer") == "forty-two"
    assert "module broken" in caplog.text and "boom" in caplog.text
