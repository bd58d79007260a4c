"""The static checks of a module, on real folders: each names the file, the line, the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from tooldeck.packs.modules import ModuleVersions, attest, read_manifest, static_checks
from tooldeck.packs.modules.manifest import ManifestError

MANIFEST = """
name = "weather"
description = "Forecasts from Open-Meteo"
hosts = ["api.open-meteo.com"]
"""

GOOD = '''import httpx

from tooldeck import tool


@tool
async def forecast(latitude: float, longitude: float) -> dict:
    """Tomorrow's weather at a place."""
    async with httpx.AsyncClient() as client:
        reply = await client.get(
            "https://api.open-meteo.com/v1/forecast",
            params={"latitude": latitude, "longitude": longitude, "daily": "weathercode"},
        )
    return reply.json()
'''


def module(tmp_path: Path, code: str, manifest: str = MANIFEST) -> Path:
    folder = tmp_path / "weather"
    folder.mkdir(exist_ok=True)
    (folder / "module.toml").write_text(manifest)
    (folder / "tools.py").write_text(code)
    return folder


def outcome(folder: Path) -> dict[str, str | None]:
    """Each check: None when it passed, else its output."""
    return {c.name: None if c.passed else c.output for c in static_checks(folder)}


def test_a_clean_module_passes_every_check_and_is_attested(tmp_path: Path) -> None:
    folder = module(tmp_path, GOOD)
    checks = static_checks(folder)
    assert [(c.name, c.passed) for c in checks] == [
        ("manifest", True), ("parse", True), ("imports", True), ("calls", True),
        ("lint", True),
    ]  # fmt: skip
    attestation = attest("weather", folder, checks)
    assert attestation.passed and read_manifest(folder).hosts == ["api.open-meteo.com"]


@pytest.mark.parametrize(
    ("code", "check", "says"),
    [
        ("import ctypes\n", "imports", "tools.py:1: import of ctypes: native code"),
        ("from subprocess import run\n", "imports", "import of subprocess"),
        ("import socket\n", "imports", "use httpx with the manifest's hosts"),
        (
            "from tooldeck.providers.credentials import EncryptedCredentialStore\n",
            "imports",
            "through its tool context only",
        ),
        ("import importlib\nimportlib.import_module('os')\n", "imports", "import of importlib"),
        ("x = eval('1+1')\n", "calls", "tools.py:1: eval(): evaluating text as code"),
        ("import os\nos.system('id')\n", "calls", "tools.py:2: os.system()"),
        ("import os\nos.execv('/bin/sh', [])\n", "calls", "os.execv()"),
        ("data = open('/etc/passwd').read()\n", "calls", "outside the module's folder"),
        ("def broken(:\n", "parse", "tools.py:1:"),
    ],
)
def test_each_unsafe_construct_fails_its_check_with_the_place(
    tmp_path: Path, code: str, check: str, says: str
) -> None:
    result = outcome(module(tmp_path, code))
    assert result[check] is not None and says in result[check]


def test_network_code_needs_declared_hosts(tmp_path: Path) -> None:
    no_hosts = 'name = "weather"\ndescription = "Forecasts"\n'
    result = outcome(module(tmp_path, GOOD, no_hosts))
    assert result["imports"] is not None and "declares no hosts" in result["imports"]


def test_a_manifest_typo_names_the_key_and_the_closest(tmp_path: Path) -> None:
    folder = module(tmp_path, GOOD, 'name = "weather"\ndescripton = "typo"\n')
    with pytest.raises(
        ManifestError, match=r"descripton: unknown key \(did you mean 'description'\?\)"
    ):
        read_manifest(folder)
    assert outcome(folder)["manifest"] is not None


def test_an_attestation_of_failed_checks_cannot_install(tmp_path: Path) -> None:
    versions = ModuleVersions(tmp_path / "modules")
    draft = versions.create_draft(
        "weather", {"module.toml": MANIFEST, "tools.py": "import ctypes\n"}
    )
    folder = versions.draft_path("weather", draft)
    attestation = attest("weather", folder, static_checks(folder))
    assert not attestation.passed
    with pytest.raises(Exception, match="did not pass \\(imports\\)"):
        versions.promote("weather", draft, attestation, by="ada")
    versions.edit_draft("weather", draft, "tools.py", GOOD)
    fixed = attest("weather", folder, static_checks(folder))
    assert versions.promote("weather", draft, fixed, by="ada").startswith("v1-")


def test_reaching_interpreter_internals_is_named(tmp_path: Path) -> None:
    (tmp_path / "module.toml").write_text('name = "sneaky"\ndescription = "x"\n')
    (tmp_path / "tools.py").write_text(
        'imp = __builtins__["__imp" + "ort__"]\nleak = (lambda: 0).__globals__\n'
    )
    calls = {c.name: c for c in static_checks(tmp_path)}["calls"]
    assert not calls.passed
    assert "tools.py:1: __builtins__: a module does not reach interpreter internals" in calls.output
    assert "tools.py:2: __globals__" in calls.output


def test_lint_names_an_undefined_name_with_its_line(tmp_path: Path) -> None:
    (tmp_path / "module.toml").write_text('name = "typo"\ndescription = "x"\n')
    (tmp_path / "tools.py").write_text("def price():\n    return pirce\n")
    lint = {c.name: c for c in static_checks(tmp_path)}["lint"]
    assert not lint.passed and "tools.py:2:12: F821 Undefined name `pirce`" in lint.output
