"""A typo in the configuration cannot silently switch a safety rule off."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tooldeck.cli.app import app

runner = CliRunner()


@pytest.mark.parametrize(
    ("toml", "key", "hint"),
    [
        ('[profiles.s]\nconfirm = ["get_transfer"]\n', "profiles.s.confirm", "get_transfers"),
        (
            "[policy.tools.get_transfer]\nrequires_confirmation = true\n",
            "policy.tools",
            "get_transfers",
        ),
        ('[builtin]\ndisabled = ["shel"]\n', "builtin.disabled", "shell"),
        ('[profiles.s]\ntools = ["get_quotse"]\n', "profiles.s.tools", "get_quotes"),
        ("[profiles.s.policy.tools.pyhton]\ntimeout_s = 5\n", "profiles.s.policy.tools", "python"),
        ("[policy.providers.lcoal]\ntimeout_s = 5\n", "policy.providers", "local"),
    ],
)
def test_an_unknown_name_is_an_error_naming_the_key(
    tmp_path: Path, toml: str, key: str, hint: str | None
) -> None:
    config = tmp_path / "tooldeck.toml"
    config.write_text(toml)
    for command in (
        ["tools", "-c", str(config)],
        ["call", "get_quotes", "symbol=AAPL", "-c", str(config)],
    ):
        result = runner.invoke(app, command)
        assert result.exit_code == 2, result.output
        assert f"error: {key}: unknown" in result.output
        if hint:
            assert f"did you mean {hint!r}" in result.output


def test_serve_refuses_to_start_on_an_unknown_name(tmp_path: Path) -> None:
    config = tmp_path / "tooldeck.toml"
    config.write_text('[profiles.s]\nconfirm = ["get_transfer"]\n')
    result = runner.invoke(app, ["serve", "-c", str(config), "--port", "9"])
    assert (
        result.exit_code == 2 and "profiles.s.confirm: unknown tool 'get_transfer'" in result.output
    )


def test_a_glob_that_matches_nothing_is_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = tmp_path / "tooldeck.toml"
    config.write_text('[profiles.s]\ntools = ["get_*", "crm_*"]\n')
    with caplog.at_level(logging.WARNING, "tooldeck.config"):
        result = runner.invoke(app, ["tools", "-p", "s", "-c", str(config)])
    assert result.exit_code == 0, result.output
    assert "profiles.s.tools: 'crm_*' matches no tool" in caplog.text


def test_config_show_gives_each_value_and_where_it_came_from(tmp_path: Path) -> None:
    config = tmp_path / "tooldeck.toml"
    config.write_text('[server]\nport = 9001\napi_key = "sk-secret-0123456789abcdef"\n')
    result = runner.invoke(
        app,
        ["config", "show", "--json", "-c", str(config)],
        env={"TOOLDECK_AUDIT__RETENTION_DAYS": "9"},
    )
    assert result.exit_code == 0, result.output
    shown = json.loads(result.output)
    assert shown["server.port"] == {"value": 9001, "from": f"{config} [server]"}
    assert shown["audit.retention_days"] == {
        "value": 9,
        "from": "environment TOOLDECK_AUDIT__RETENTION_DAYS",
    }
    assert shown["server.api_key"]["value"] == "***" and "sk-secret" not in result.output
    assert shown["server.host"] == {"value": "127.0.0.1", "from": "default"}


@pytest.mark.parametrize(
    ("toml", "says"),
    [
        ("[knowledge]\nembedings = {}\n", "knowledge.embedings: Extra inputs are not permitted; "
         "did you mean 'embeddings'? (keys: allow_hosts, embedder, embeddings, enabled,"),
        ("[server]\nprot = 1\n", "server.prot: Extra inputs are not permitted; did you mean 'port'?"),
        ("[profiles.s]\ntoolz = []\n", "profiles.s.toolz: Extra inputs are not permitted; "
         "did you mean 'tools'?"),
        ("[policy.tools.python]\ntimeot_s = 1\n", "did you mean 'timeout_s'?"),
        ("bogus = 1\n", "bogus: Extra inputs are not permitted (keys: agent, approvals,"),
    ],
)  # fmt: skip
def test_an_unknown_key_names_the_closest_and_every_key_of_its_table(
    tmp_path: Path, toml: str, says: str
) -> None:
    (tmp_path / "tooldeck.toml").write_text(toml)
    result = runner.invoke(app, ["config", "show", "--config", str(tmp_path / "tooldeck.toml")])
    assert result.exit_code == 2, result.output
    assert says in " ".join(result.output.split()), result.output
