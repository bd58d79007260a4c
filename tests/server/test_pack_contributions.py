"""A user's own pack brings REST routes, a console page and a CLI command, as the shipped
packs do (issue 28: one plug-in interface; the server and the CLI name no pack)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tooldeck.config import load_settings
from tooldeck.exceptions import ConfigError
from tooldeck.runtime import build_runtime
from tooldeck.server.app import create_app

PACK = """
from pathlib import Path

from fastapi import APIRouter

from tooldeck.core import ConsolePage, PackParts, PackRoutes

router = APIRouter(prefix="/api/weather")


@router.get("/today")
async def today() -> dict:
    return {"sky": "clear"}


class WeatherPack:
    name = "weather"
    config_model = None

    def setup(self, config, services):
        page = Path(__file__).with_name("weather_page.js")
        return PackParts(
            routes=lambda: PackRoutes([router], body_limits={"/api/weather/": 5_000_000}),
            console=[ConsolePage("{page}", "Weather", page)],
        )


pack = WeatherPack()
"""


def _project(tmp_path: Path, page: str = "weather") -> Path:
    (tmp_path / "weather.py").write_text(PACK.replace("{page}", page))
    (tmp_path / "weather_page.js").write_text("export default async function (app) {}\n")
    (tmp_path / "tooldeck.toml").write_text('tools = ["weather.py"]\n')
    return tmp_path / "tooldeck.toml"


def test_a_users_pack_serves_its_routes_and_its_console_page(tmp_path: Path) -> None:
    runtime = build_runtime(load_settings(_project(tmp_path)), load_entry_points=False)
    with TestClient(create_app(runtime), base_url="http://127.0.0.1") as client:
        assert client.get("/api/weather/today").json() == {"sky": "clear"}
        pages = client.get("/tools/pack/pages.json").json()
        assert {"name": "weather", "title": "Weather", "script": "/tools/pack/weather.js"} in pages
        script = client.get("/tools/pack/weather.js")
        assert script.status_code == 200 and "export default" in script.text
        assert script.headers["content-type"].startswith("text/javascript")
        assert client.get("/tools/pack/nothing.js").status_code == 404


@pytest.mark.parametrize("page", ["chat", "../etc", "Weather"])
def test_a_page_name_that_is_taken_or_not_plain_is_refused(tmp_path: Path, page: str) -> None:
    with pytest.raises(ConfigError, match=f"console page '{page}' is taken or not a plain"):
        build_runtime(load_settings(_project(tmp_path, page)), load_entry_points=False)


def test_an_installed_packages_command_joins_the_cli(tmp_path: Path) -> None:
    """The ``tooldeck.commands`` entry-point group, from a real dist-info on the path."""
    (tmp_path / "weather_cli.py").write_text(
        textwrap.dedent(
            """
            import typer

            app = typer.Typer(help="The weather, from your own package.")


            @app.command()
            def today() -> None:
                print("clear")
            """
        )
    )
    info = tmp_path / "weather_cli-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: weather-cli\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[tooldeck.commands]\nweather = weather_cli:app\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "tooldeck", "weather", "today"],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "clear", done.stderr
    listed = subprocess.run(
        [sys.executable, "-m", "tooldeck", "--help"],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert "The weather, from your own package." in listed.stdout
