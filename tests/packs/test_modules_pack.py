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

TOOLS = '''from pydantic import Field

from tooldeck import tool

from . import helpers


@tool
def {name}_answer(question: str = Field(examples=["?"])) -> dict:
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


def test_module_admin_is_off_by_default_and_drives_a_module_from_draft_to_install(
    tmp_path: Path,
) -> None:
    """Through the runtime's stack: promote, rollback, enable, uninstall, credentials ask first."""
    from tooldeck.core import CredentialStore, ToolContext

    data = tmp_path / "data"
    off = load_settings(data_dir=data, builtin={"enabled": False})
    assert build_runtime(off).registry.get("module_admin") is None  # opt in: [packs.modules]
    settings = load_settings(
        data_dir=data,
        builtin={"enabled": False},
        packs={"modules": {"admin": True, "admins": ["ada"]}},
        credentials={"use_keyring": False},
    )

    async def scenario() -> None:
        runtime = build_runtime(settings)
        admin = runtime.registry.get("module_admin")
        assert admin is not None
        assert set(admin.definition.confirm_actions) == {
            "promote_draft", "rollback_version", "enable", "uninstall", "store_credentials",
        }  # fmt: skip
        stack, ctx = runtime.provider, ToolContext(user="ada")

        async def act(action: str, **arguments: object) -> dict:
            result = await stack.execute("module_admin", {"action": action, **arguments}, ctx)
            assert result.success, result.error
            return result.data

        files = {
            "module.toml": MANIFEST.format(name="oracle"),
            "tools.py": TOOLS.format(name="oracle"),
            "helpers.py": "ANSWER = 'forty-two'\n",
        }
        draft = (await act("create_draft", module_id="oracle", files=files))["draft_id"]
        checked = await act("validate_draft", module_id="oracle", draft_id=draft)
        assert checked["passed"], checked
        assert [c["name"] for c in checked["checks"]] == [
            "manifest", "parse", "imports", "calls", "lint",  # the source
            "import", "export", "tests", "tool_calls", "behaviour",  # in the sandbox
        ]  # fmt: skip
        asked = await stack.execute(
            "module_admin",
            {"action": "promote_draft", "module_id": "oracle", "draft_id": draft},
            ctx,
        )
        assert asked.error is not None and asked.error.type == "confirmation_required"
        version = admin.versions.promote(  # what the approved call does
            "oracle", draft, admin.versions.validation("oracle", draft)[0], by="ada"
        )
        listed = await act("list")
        assert listed["modules"] == [{"module_id": "oracle", "active_version": version}]
        edited = (await act("create_draft", module_id="oracle"))["draft_id"]
        await act("edit_draft", module_id="oracle", draft_id=edited, file_path="helpers.py",
                  content="ANSWER = 'forty-three'\n")  # fmt: skip
        diff = await act("diff_draft", module_id="oracle", draft_id=edited)
        assert "+ANSWER = 'forty-three'" in diff["diff"]
        from tooldeck.exceptions import InvalidArgumentsError

        with pytest.raises(InvalidArgumentsError, match="validate it first"):
            admin.versions.validation("oracle", edited)  # what promote_draft checks once approved
        stored = runtime.services.get(CredentialStore)  # type: ignore[type-abstract]
        assert stored.scopes("ada") == []
        await runtime.aclose()

    asyncio.run(scenario())
    assert answer(data, "oracle_answer") == "forty-two"  # the installed version is served


SLOW = '''import asyncio

from tooldeck import tool

from . import helpers


@tool
async def oracle_answer(question: str, wait_s: float = 0.0) -> dict:
    """Answers a question, after a while."""
    await asyncio.sleep(wait_s)
    return {"answer": helpers.ANSWER}
'''


def test_an_install_or_rollback_serves_at_once_and_a_call_under_way_finishes_on_its_version(
    tmp_path: Path,
) -> None:
    from tooldeck.core import ToolContext

    data = tmp_path / "data"
    settings = load_settings(
        data_dir=data, builtin={"enabled": False}, packs={"modules": {"admin": True}}
    )

    async def scenario() -> None:
        runtime = build_runtime(settings)
        admin = runtime.registry.get("module_admin")
        stack, ctx = runtime.provider, ToolContext(user="ada")
        versions = admin.versions

        def release(answer_text: str) -> str:
            if "oracle" in versions.modules():
                draft = versions.create_draft("oracle")
                versions.edit_draft("oracle", draft, "helpers.py", f"ANSWER = {answer_text!r}\n")
            else:
                draft = versions.create_draft("oracle", {
                    "module.toml": MANIFEST.format(name="oracle"), "tools.py": SLOW,
                    "helpers.py": f"ANSWER = {answer_text!r}\n",
                })  # fmt: skip
            folder = versions.draft_path("oracle", draft)
            version = versions.promote(
                "oracle", draft, attest("oracle", folder, static_checks(folder)), by="ada"
            )
            admin.changed()  # what promote_draft does once approved
            return version

        async def ask(wait_s: float = 0.0) -> object:
            result = await stack.execute("oracle_answer", {"question": "?", "wait_s": wait_s}, ctx)
            assert result.success, result.error
            return result.data["answer"]

        told: list[int] = []
        runtime.root.on_tools_changed(lambda: told.append(1))  # what the MCP server listens to
        first = release("forty-two")
        assert await ask() == "forty-two"  # no restart
        assert told  # MCP clients get notifications/tools/list_changed
        under_way = asyncio.create_task(ask(wait_s=0.5))
        await asyncio.sleep(0.1)
        release("forty-three")
        assert await ask() == "forty-three"
        assert await under_way == "forty-two"  # started on v1, finished on v1
        versions.rollback("oracle", first, by="ada")
        admin.changed()
        assert await ask() == "forty-two"
        versions.disable("oracle", by="ada")
        admin.changed()
        gone = await stack.execute("oracle_answer", {"question": "?"}, ctx)
        assert gone.error is not None and gone.error.type == "not_found"
        assert runtime.registry.get("module_admin") is admin  # still there, the same one
        await runtime.aclose()

    asyncio.run(scenario())


KEYED = '''from pydantic import Field

from tooldeck import tool
from tooldeck.core import CredentialStore, ToolContext, caller_secret


@tool
def keyed_whoami(ctx: ToolContext, probe: str = Field("key", examples=["key"])) -> dict:
    """Which key the caller stored (its last 4 characters), or what the store gave."""
    if probe == "store":  # reach past CallerSecret for the whole store
        return {"store": str(ctx.services.get(CredentialStore).scopes("ada"))}
    key = caller_secret(ctx)
    return {"key": None if key is None else key.get_secret_value()[-4:]}
'''


def test_a_module_reads_its_callers_key_and_nothing_else_of_the_store(tmp_path: Path) -> None:
    from tooldeck.core import CredentialStore, ToolContext

    data = tmp_path / "data"
    versions = ModuleVersions(data / "modules")
    draft = versions.create_draft(
        "keyed", {"module.toml": MANIFEST.format(name="keyed"), "tools.py": KEYED}
    )
    folder = versions.draft_path("keyed", draft)
    versions.promote("keyed", draft, attest("keyed", folder, static_checks(folder)), by="ada")
    settings = load_settings(
        data_dir=data, builtin={"enabled": False}, credentials={"use_keyring": False}
    )

    async def scenario() -> None:
        runtime = build_runtime(settings)
        store = runtime.services.get(CredentialStore)  # type: ignore[type-abstract]
        store.put("ada", "module:keyed", "sk-ada-1234")
        store.put("ada", "mcp:github", "ghp_not_for_modules")

        async def call(user: str, probe: str = "key") -> object:
            result = await runtime.provider.execute(
                "keyed_whoami", {"probe": probe}, ToolContext(user=user)
            )
            return result.data if result.success else result.error

        try:
            assert await call("ada") == {"key": "1234"}
            assert await call("bob") == {"key": None}  # ada's key is ada's
            refused = await call("ada", "store")
            assert "no service registered for CredentialStore" in str(refused)
            assert "ghp_" not in str(refused)
        finally:
            await runtime.aclose()

    asyncio.run(scenario())


def test_tooldeck_tools_says_which_module_version_serves_a_tool(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from tooldeck.cli.app import app

    version = install(tmp_path / "data" / "modules", "oracle", "forty-two")
    (tmp_path / "tooldeck.toml").write_text(
        f'data_dir = "{tmp_path / "data"}"\n[builtin]\nenabled = false\n'
    )
    listed = CliRunner().invoke(
        app, ["tools", "--config", str(tmp_path / "tooldeck.toml")], env={"COLUMNS": "300"}
    )
    assert listed.exit_code == 0, listed.output
    line = next(row for row in listed.output.splitlines() if "oracle_answer" in row)
    assert f"module 0.1.0+{version}" in line


def test_only_module_admins_change_modules_and_anyone_stores_their_own_key(
    tmp_path: Path,
) -> None:
    """Behind a proxy that names users, bob could otherwise approve the install of his own
    code, which then runs for everyone."""
    from fastapi.testclient import TestClient

    from tooldeck.core import ToolContext
    from tooldeck.server.app import create_app

    settings = load_settings(
        data_dir=tmp_path / "data",
        builtin={"enabled": False},
        server={"trust_user_header": True},
        packs={"modules": {"admin": True, "admins": ["ann"]}},
        credentials={"use_keyring": False},
    )
    runtime = build_runtime(settings)
    admin, pipeline = runtime.registry.get("module_admin"), runtime.registry.get("module_pipeline")
    files = {"module.toml": MANIFEST.format(name="mine"), "tools.py": TOOLS.format(name="mine")}

    async def scenario() -> None:
        bob, ann = ToolContext(user="bob"), ToolContext(user="ann")
        refused = await admin.execute({"action": "create_draft", "module_id": "mine",
                                       "files": files}, bob)  # fmt: skip
        assert refused.error is not None and refused.error.type == "denied"
        assert "module admins" in refused.error.message
        built = await pipeline.execute({"action": "build", "name": "x", "description": "x"}, bob)
        assert built.error is not None and built.error.type == "denied"
        assert (await admin.execute({"action": "list"}, bob)).success
        stored = await admin.execute(
            {"action": "store_credentials", "module_id": "mine", "api_key": "k-bob"}, bob
        )
        assert stored.success, stored.error
        assert (await admin.execute({"action": "create_draft", "module_id": "mine",
                                     "files": files}, ann)).success  # fmt: skip

    asyncio.run(scenario())
    with TestClient(create_app(runtime), base_url="http://127.0.0.1") as client:
        assert client.get("/api/modules", headers={"X-User": "bob"}).status_code == 403
        listed = client.get("/api/modules", headers={"X-User": "ann"})
        assert listed.status_code == 200 and listed.json()[0]["module_id"] == "mine"
