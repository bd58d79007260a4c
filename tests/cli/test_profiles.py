"""Profiles and MCP configuration from tooldeck.toml, through the CLI (real MCP processes)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tooldeck.cli.app import app
from tooldeck.config import load_settings
from tooldeck.exceptions import ConfigError

runner = CliRunner()
BIN = Path(sys.executable).parent


def write_config(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    path = tmp_path / "tooldeck.toml"
    path.write_text(
        f"""
[brokerage]
enabled = true  # the demo data beside MCP servers: said explicitly
[mcp_servers.time]
command = "{BIN / "mcp-server-time"}"
[mcp_servers.git]
command = "{BIN / "mcp-server-git"}"
args = ["--repository", "{repo}"]

[profiles.support]
tools = ["get_positions", "get_quotes", "get_transfers"]
mcp_servers = ["time"]
confirm = ["get_transfers"]
[profiles.support.policy.tools.get_quotes]
timeout_s = 2

[profiles.dev]
"""
    )
    return path


@pytest.mark.integration
def test_profile_view_mcp_call_hidden_tool_and_confirmation(tmp_path: Path) -> None:
    config = str(write_config(tmp_path))
    listed = runner.invoke(app, ["tools", "-c", config, "--profile", "support", "-f", "json"])
    assert listed.exit_code == 0, listed.output
    names = [d["name"] for d in json.loads(listed.stdout)]
    assert names == [
        "get_positions",
        "get_quotes",
        "get_transfers",
        "get_current_time",
        "convert_time",
    ]
    dev = json.loads(runner.invoke(app, ["tools", "-c", config, "-p", "dev", "-f", "json"]).stdout)
    assert "git_status" in [d["name"] for d in dev] and "get_activity" in [d["name"] for d in dev]

    mcp_call = runner.invoke(
        app, ["call", "get_current_time", "timezone=UTC", "-c", config, "-p", "support"]
    )
    assert mcp_call.exit_code == 0 and json.loads(mcp_call.stdout)["metadata"]["provider"] == "time"

    hidden = runner.invoke(
        app, ["call", "git_status", f"repo_path={tmp_path / 'repo'}", "-c", config, "-p", "support"]
    )
    assert hidden.exit_code == 2 and "Unknown tool 'git_status'" in hidden.stderr
    visible = runner.invoke(
        app, ["call", "git_status", f"repo_path={tmp_path / 'repo'}", "-c", config, "-p", "dev"]
    )
    assert json.loads(visible.stdout)["metadata"]["provider"] == "git"

    pending = runner.invoke(app, ["call", "get_transfers", "-c", config, "-p", "support"])
    error = json.loads(pending.stdout)["error"]
    assert pending.exit_code == 1 and error["type"] == "confirmation_required"
    assert error["details"]["tool"] == "get_transfers" and error["details"]["approval_id"]
    approved = runner.invoke(app, ["call", "get_transfers", "-c", config, "-p", "support", "--yes"])
    assert (
        approved.exit_code == 0 and json.loads(approved.stdout)["source_id"] == "tool:transfers:v1"
    )
    denied = runner.invoke(
        app, ["call", "get_transfers", "-c", config, "-p", "support"], input="n\n"
    )
    # CliRunner's stdin is not a terminal: no prompt, so the call waits for approval
    assert json.loads(denied.stdout)["error"]["type"] == "confirmation_required"


@pytest.mark.integration
def test_explain_shows_each_value_and_its_source(tmp_path: Path) -> None:
    config = str(write_config(tmp_path))
    result = runner.invoke(
        app,
        ["tools", "-c", config, "--explain", "get_quotes", "--profile", "support"],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    assert "get_quotes from provider local in profile support: visible" in result.stdout
    row = next(line for line in result.stdout.splitlines() if "timeout_s" in line)
    assert "2.0" in row and "profile support tool get_quotes" in row
    hidden = runner.invoke(
        app,
        ["tools", "-c", config, "--explain", "get_activity", "-p", "support"],
        env={"COLUMNS": "200"},
    )
    assert "hidden (calls answer not_found)" in hidden.stdout
    unknown = runner.invoke(app, ["tools", "-c", config, "--explain", "get_quote"])
    assert unknown.exit_code == 2 and "did you mean get_quotes" in unknown.stderr


def test_unknown_profile_exits_2_listing_profiles(tmp_path: Path) -> None:
    (tmp_path / "tooldeck.toml").write_text("[profiles.a]\n[profiles.b]\n")
    result = runner.invoke(app, ["tools", "-c", str(tmp_path / "tooldeck.toml"), "-p", "c"])
    assert result.exit_code == 2
    assert "unknown profile 'c'; profiles: a, b, rag" in result.stderr


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        ("[profiles.a]\ntool = ['x']\n", "profiles.a.tool: Extra inputs are not permitted"),
        ("[mcp_servers.t]\nargs = ['x']\n", 'mcp_servers.t: Value error, give either "command"'),
        ("[profiles.a]\nmcp_servers = ['nope']\n", "unknown server(s) ['nope']"),
        (
            "[profiles.a.policy]\nmax_concurrency = 2\n",
            "profiles.a.policy.max_concurrency: Extra inputs",
        ),
        ("[mcp_servers.t]\ncommand = 'x'\ntransport = 'sse'\n", 'transport "sse" does not fit'),
    ],
)
def test_malformed_config_names_file_key_and_reason(
    tmp_path: Path, toml: str, expected: str
) -> None:
    path = tmp_path / "tooldeck.toml"
    path.write_text(toml)
    with pytest.raises(ConfigError) as info:
        load_settings(path)
    assert str(path) in str(info.value) and expected in str(info.value)


def test_mcp_config_json_is_imported_and_duplicate_ids_rejected(tmp_path: Path) -> None:
    servers = tmp_path / "mcp.json"
    servers.write_text('{"mcpServers": {"time": {"command": "mcp-server-time"}}}')
    path = tmp_path / "tooldeck.toml"
    path.write_text(f'mcp_config = "{servers}"\n')
    assert list(load_settings(path).all_mcp_servers()) == ["time"]
    path.write_text(f'mcp_config = "{servers}"\n[mcp_servers.time]\ncommand = "other"\n')
    with pytest.raises(ConfigError, match=r"\['time'\] are in both"):
        load_settings(path)


def test_explain_names_the_file_or_variable_that_set_each_value(tmp_path: Path) -> None:
    config = tmp_path / "tooldeck.toml"
    config.write_text(
        "[policy]\nmax_attempts = 2\n[policy.tools.get_quotes]\ntimeout_s = 5\n"
        '[profiles.support]\ntools = ["get_*"]\n[profiles.support.policy]\njitter_s = 0.5\n'
    )
    result = runner.invoke(
        app,
        ["tools", "--explain", "get_quotes", "-p", "support", "-c", str(config)],
        env={"TOOLDECK_POLICY__INITIAL_BACKOFF_S": "0.2", "COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    rows = {
        line.split("│")[1].strip(): line.split("│")[3].strip()
        for line in result.output.splitlines()
        if line.count("│") == 4
    }
    assert rows["timeout_s"] == f"tool get_quotes: {config} [policy.tools.get_quotes]"
    assert rows["max_attempts"] == f"{config} [policy]"
    assert rows["initial_backoff_s"] == "environment TOOLDECK_POLICY__INITIAL_BACKOFF_S"
    assert rows["jitter_s"] == f"profile support: {config} [profiles.support.policy]"
    assert rows["max_backoff_s"] == "built-in default"
