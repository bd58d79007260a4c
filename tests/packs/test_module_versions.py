"""A module's versions on real files: drafts, attestations, installs, rollbacks."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from tooldeck.exceptions import InvalidArgumentsError
from tooldeck.packs.modules import Attestation, ModuleVersions, content_hash

V1 = '''from tooldeck import tool


@tool
def forecast(city: str) -> dict:
    """Tomorrow's weather."""
    return {"city": city, "sky": "clear"}
'''


def attest(versions: ModuleVersions, module_id: str, draft_id: str, ok: bool = True) -> Attestation:
    return Attestation(
        module_id=module_id,
        content_hash=content_hash(versions.draft_path(module_id, draft_id)),
        checks={"parse": True, "import": ok, "tests": True},
        validated_at=datetime.now(UTC).isoformat(),
    )


def test_a_draft_is_installed_only_as_it_was_validated(tmp_path: Path) -> None:
    versions = ModuleVersions(tmp_path / "modules")
    draft = versions.create_draft("weather", {"weather/tools.py": V1})
    assert "+def forecast(city: str) -> dict:" in versions.diff_draft("weather", draft)
    vouched = attest(versions, "weather", draft)
    versions.edit_draft("weather", draft, "weather/tools.py", V1.replace("clear", "rain"))
    with pytest.raises(InvalidArgumentsError, match="changed after it was validated"):
        versions.promote("weather", draft, vouched, by="ada")
    assert versions.active("weather") is None
    with pytest.raises(InvalidArgumentsError, match="did not pass \\(import\\)"):
        versions.promote("weather", draft, attest(versions, "weather", draft, ok=False), by="ada")
    other = Attestation(
        module_id="stocks", content_hash="x", checks={"a": True}, validated_at="now"
    )
    with pytest.raises(InvalidArgumentsError, match="for module 'stocks'"):
        versions.promote("weather", draft, other, by="ada")
    first = versions.promote("weather", draft, attest(versions, "weather", draft), by="ada")
    active = versions.active_path("weather")
    assert active is not None and "rain" in (active / "weather/tools.py").read_text()
    with pytest.raises(InvalidArgumentsError, match="has no draft"):
        versions.draft_path("weather", draft)  # the draft became the version
    assert [(v.version_id, v.active, v.installed_by) for v in versions.versions("weather")] == [
        (first, True, "ada")
    ]


def test_a_new_version_then_a_rollback_switch_the_active_one(tmp_path: Path) -> None:
    versions = ModuleVersions(tmp_path / "modules")
    draft = versions.create_draft("weather", {"tools.py": V1})
    v1 = versions.promote("weather", draft, attest(versions, "weather", draft), by="ada")
    second = versions.create_draft("weather")  # a copy of the active version
    assert (versions.draft_path("weather", second) / "tools.py").read_text() == V1
    versions.edit_draft("weather", second, "tools.py", V1.replace("clear", "storm"))
    assert '-    return {"city": city, "sky": "clear"}' in versions.diff_draft("weather", second)
    v2 = versions.promote("weather", second, attest(versions, "weather", second), by="bob")
    assert versions.active("weather") == v2 and v1 != v2
    versions.rollback("weather", v1, by="ada")
    assert versions.active("weather") == v1
    active = versions.active_path("weather")
    assert active is not None and "clear" in (active / "tools.py").read_text()
    with pytest.raises(InvalidArgumentsError, match=f"versions: {v1}, {v2}"):
        versions.rollback("weather", "v9-nope", by="ada")
    assert versions.disable("weather", by="ada") and versions.active("weather") is None
    assert len(versions.versions("weather")) == 2  # kept for enable or a rollback
    assert versions.enable("weather", by="bob") == v1  # the version it had, not the newest
    actions = [(e["action"], e["by"]) for e in versions.history("weather")]
    assert actions == [("install", "ada"), ("install", "bob"), ("rollback", "ada"),
                       ("disable", "ada"), ("enable", "bob")]  # fmt: skip
    versions.uninstall("weather")
    assert versions.modules() == [] and versions.active("weather") is None
    with pytest.raises(InvalidArgumentsError, match="no module 'weather'"):
        versions.enable("weather", by="ada")


@pytest.mark.parametrize("path", ["../escape.py", "/etc/passwd", "a/../../escape.py", ""])
def test_a_draft_file_path_stays_inside_the_draft(tmp_path: Path, path: str) -> None:
    versions = ModuleVersions(tmp_path / "modules")
    draft = versions.create_draft("weather", {"tools.py": V1})
    with pytest.raises(InvalidArgumentsError, match="inside the draft"):
        versions.edit_draft("weather", draft, path, "x")
    assert not (tmp_path / "modules" / "weather" / "escape.py").exists()


def test_a_link_out_of_the_draft_is_refused(tmp_path: Path) -> None:
    versions = ModuleVersions(tmp_path / "modules")
    draft = versions.create_draft("weather", {"tools.py": V1})
    outside = tmp_path / "outside"
    outside.mkdir()
    (versions.draft_path("weather", draft) / "out").symlink_to(outside)
    with pytest.raises(InvalidArgumentsError, match="leads out of the draft"):
        versions.edit_draft("weather", draft, "out/evil.py", "x")
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("module_id", ["Weather", "../x", "9lives", "a" * 70])
def test_module_ids_are_checked(tmp_path: Path, module_id: str) -> None:
    with pytest.raises(InvalidArgumentsError, match="lower-case letters"):
        ModuleVersions(tmp_path / "modules").create_draft(module_id, {"tools.py": V1})


def test_versions_sort_by_number_past_nine(tmp_path: Path) -> None:
    versions = ModuleVersions(tmp_path)
    for i in range(11):
        draft = versions.create_draft("many", {"tools.py": f"X = {i}\n"})
        versions.promote("many", draft, attest(versions, "many", draft), by="ada")
    listed = [v.version_id.split("-")[0] for v in versions.versions("many")]
    assert listed == [f"v{i}" for i in range(1, 12)]
    assert versions.versions("many")[-1].active
