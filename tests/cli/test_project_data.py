"""Without a config, each project folder has its own data dir (issue 26, item 10)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tooldeck.config import load_settings, project_data_dir

BIN = Path(sys.executable).parent


def test_two_checkouts_never_share_a_history(tmp_path: Path) -> None:
    home = tmp_path / "home"
    one, two = tmp_path / "a" / "shop", tmp_path / "b" / "shop"  # same name, two places
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "XDG_DATA_HOME": str(home / "data")}
    for folder in (one, two):
        folder.mkdir(parents=True)
        subprocess.run(
            [str(BIN / "tooldeck"), "call", "get_positions", "symbol=AAPL"],
            cwd=folder,
            env=env,
            capture_output=True,
            timeout=120,
            check=True,
        )
    dirs = sorted((home / "data" / "tooldeck" / "projects").iterdir())
    assert [d.name[:5] for d in dirs] == ["shop-", "shop-"] and dirs[0] != dirs[1]
    listed = subprocess.run(
        [str(BIN / "tooldeck"), "audit", "--json"],
        cwd=one,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert [json.loads(line)["tool_name"] for line in listed.stdout.splitlines()] == [
        "get_positions"
    ]
    assert not any(p.name == ".tooldeck" for p in one.iterdir())  # the checkout stays clean


def test_a_private_dot_tooldeck_folder_is_used_and_a_shared_one_is_not(tmp_path: Path) -> None:
    own = tmp_path / ".tooldeck"
    own.mkdir(mode=0o700)
    assert project_data_dir(tmp_path) == own
    own.chmod(0o777)  # anyone could plant an approval there
    assert project_data_dir(tmp_path) != own
    assert project_data_dir(tmp_path).parent.name == "projects"


def test_a_config_keeps_its_data_beside_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOOLDECK_DATA_DIR")
    config = tmp_path / "tooldeck.toml"
    config.write_text("")
    assert load_settings(config).data_dir == tmp_path / ".tooldeck"


def test_a_projects_data_stays_out_of_git(tmp_path: Path) -> None:
    """Issue 55, item 5: the README has the user ``git init`` the project; after a call
    (history written) and ``git add -A``, nothing of ``.tooldeck/`` is staged."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home")}
    (tmp_path / "tooldeck.toml").write_text("")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, env=env, check=True, timeout=30)
    subprocess.run(
        [str(BIN / "tooldeck"), "call", "get_positions", "symbol=AAPL"],
        cwd=tmp_path, env=env, capture_output=True, timeout=120, check=True,
    )  # fmt: skip
    assert any((tmp_path / ".tooldeck").iterdir())  # the call's history is there...
    subprocess.run(["git", "add", "-A"], cwd=tmp_path, env=env, check=True, timeout=30)
    staged = subprocess.run(
        ["git", "diff", "--cached", "--name-only"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=True, timeout=30,
    ).stdout.split()  # fmt: skip
    assert staged == ["tooldeck.toml"]  # ...and none of it is staged
