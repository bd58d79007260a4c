"""Your own tools from files, modules, objects and installed packs (``packs.loader``)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tooldeck import ToolDefinition
from tooldeck.config import load_settings
from tooldeck.exceptions import ConfigError
from tooldeck.packs.loader import load_tools
from tooldeck.runtime import Runtime, build_runtime

pytestmark = pytest.mark.anyio

TOOLS = '''
from pydantic import BaseModel
from tooldeck import BaseTool, ToolRegistry, tool
from tooldeck.core import ToolContext

@tool
def shout(text: str) -> dict:
    """Upper-case a text."""
    return {"text": text.upper()}

class EchoArgs(BaseModel):
    text: str

class Echo(BaseTool[EchoArgs, dict]):
    name = "echo_back"
    description = "Echo a text."
    RequestModel = EchoArgs

    def execute_internal(self, request: EchoArgs, ctx: ToolContext) -> dict:
        return {"text": request.text}

def helper():  # not a tool
    return 1

def _whisper(text: str) -> dict:
    """Lower-case a text."""
    return {"text": text.lower()}

extra = ToolRegistry([tool(name="whisper")(_whisper)], id="extra")
'''


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "mytools.py").write_text(TOOLS)
    (tmp_path / "broken.py").write_text("x = 1\ny = (\n")
    (tmp_path / "raises.py").write_text("import os\nraise RuntimeError('no key set')\n")
    (tmp_path / "empty.py").write_text("VALUE = 1\n")
    yield tmp_path
    for name in list(sys.modules):
        if name.startswith("tooldeck_user_") or name == "mytools":
            del sys.modules[name]


def test_a_file_gives_its_functions_classes_and_providers(project: Path) -> None:
    loaded = load_tools(["./mytools.py"], project, entry_points=False)
    assert [t.definition.name for t in loaded.tools] == ["shout", "echo_back"]
    assert [p.id for p in loaded.providers] == ["extra"]
    assert loaded.errors == []


def test_module_and_module_object_specs(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(project))
    loaded = load_tools(["mytools:shout", "mytools:extra"], entry_points=False)
    assert [t.definition.name for t in loaded.tools] == ["shout"]
    assert [p.id for p in loaded.providers] == ["extra"]
    missing = load_tools(["mytools:shuot", "mytools:helper"], entry_points=False).errors
    assert "mytools has no 'shuot'" in missing[0].message and "shout" in missing[0].message
    assert "not a tool" in missing[1].message and "@tool" in missing[1].message


def test_a_spec_that_fails_names_file_and_line_and_the_rest_loads(project: Path) -> None:
    loaded = load_tools(
        ["broken.py", "raises.py", "nosuch.module", "empty.py", "./mytools.py"],
        project,
        entry_points=False,
    )
    assert [t.definition.name for t in loaded.tools] == ["shout", "echo_back"]
    messages = [str(e) for e in loaded.errors]
    assert f"{project / 'broken.py'}:2: SyntaxError" in messages[0]
    assert f"{project / 'raises.py'}:2: RuntimeError: no key set" in messages[1]
    assert "No module named 'nosuch'" in messages[2]
    assert "defines no tools" in messages[3]


async def test_the_runtime_serves_them_with_the_built_in_ones(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOOLDECK_DATA_DIR", raising=False)  # the default: beside the file
    (project / "tooldeck.toml").write_text('tools = ["./mytools.py", "raises.py"]\n')
    runtime = build_runtime(load_settings(project / "tooldeck.toml"), load_entry_points=False)
    try:
        await runtime.start()
        result = await runtime.provider.execute("shout", {"text": "hi"}, runtime.context())
        assert result.data == {"text": "HI"}
        assert (await runtime.provider.execute("whisper", {"text": "HI"})).data == {"text": "hi"}
        typo = await runtime.provider.execute("shout", {"txt": "hi"})
        assert typo.error is not None and "did you mean 'text'" in typo.error.message
        assert [e.spec for e in runtime.load_errors] == ["raises.py"]
        assert runtime.settings.data_dir == project / ".tooldeck"  # this project's own
    finally:
        await runtime.aclose()


def test_a_user_tool_named_like_a_built_in_one_is_a_load_error(tmp_path: Path) -> None:
    (tmp_path / "clash.py").write_text(
        "from tooldeck import tool\n\n@tool\ndef shell(command: str) -> str:\n"
        '    """Not the real shell."""\n    return command\n'
    )
    (tmp_path / "tooldeck.toml").write_text('tools = ["clash.py"]\n[builtin]\nenabled = true\n')
    runtime = build_runtime(load_settings(tmp_path / "tooldeck.toml"), load_entry_points=False)
    runtime.close()
    (error,) = runtime.load_errors
    assert error.spec == "shell" and "shell" in error.message


def test_installed_packs_load_through_their_entry_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real distribution on sys.path, with an entry point in ``tooldeck.packs``."""
    (tmp_path / "acme_pack.py").write_text(
        "from tooldeck import tool\n\n@tool\ndef acme_ping() -> dict:\n"
        '    """Ping."""\n    return {"pong": True}\n'
    )
    info = tmp_path / "acme_pack-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-pack\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[tooldeck.packs]\nacme = acme_pack\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    loaded = load_tools([], tmp_path)
    assert "acme_ping" in [t.definition.name for t in loaded.tools]


PACK = '''
from pydantic import BaseModel, ConfigDict
from tooldeck import tool
from tooldeck.core import PackParts

class WeatherConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    city: str = "Oslo"

class WeatherPack:
    name = "weather"
    config_model = WeatherConfig

    def setup(self, config, services):
        @tool
        def forecast() -> dict:
            """Tomorrow's forecast."""
            return {"city": config.city, "sky": "clear"}

        return PackParts(tools=[forecast], policy_defaults={"forecast": {"timeout_s": 2}})

pack = WeatherPack()
'''


def _definition(runtime: Runtime, name: str) -> ToolDefinition:
    (found,) = [d for d in runtime.registry.list_definitions() if d.name == name]
    return found


def _pack_runtime(tmp_path: Path, toml: str, source: str = PACK) -> Runtime:
    (tmp_path / "weather.py").write_text(source)
    shipped = "[builtin]\nenabled = true\n[brokerage]\nenabled = true\n"  # beside your tools
    (tmp_path / "tooldeck.toml").write_text('tools = ["weather.py"]\n' + shipped + toml)
    return build_runtime(load_settings(tmp_path / "tooldeck.toml"), load_entry_points=False)


async def test_a_pack_reads_its_own_table_and_adds_tools_and_policy_defaults(
    tmp_path: Path,
) -> None:
    runtime = _pack_runtime(tmp_path, '[packs.weather]\ncity = "Bergen"\n')
    try:
        result = await runtime.provider.execute("forecast", {})
        assert result.data == {"city": "Bergen", "sky": "clear"}
        policy = runtime.policy_config.resolve
        assert policy(_definition(runtime, "forecast")).timeout_s == 2
        # the shipped packs load the same way, with their own defaults
        assert policy(_definition(runtime, "python")).breaker_enabled is False
        quotes = await runtime.provider.execute("get_quotes", {"symbols": ["AAPL"]})
        assert quotes.source_id == "tool:quotes:v1"
    finally:
        await runtime.aclose()


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        ('[packs.wether]\ncity = "x"\n', "no pack named 'wether' (did you mean 'weather'?)"),
        ('[packs.weather]\ncty = "x"\n', "[packs.weather]: 1 validation error"),
    ],
)
def test_a_pack_table_with_a_typo_stops_the_start(tmp_path: Path, toml: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _pack_runtime(tmp_path, toml)
    assert expected in str(caught.value)


def test_a_pack_whose_setup_fails_is_a_load_error_and_the_rest_starts(tmp_path: Path) -> None:
    broken = PACK.replace("@tool\n", "raise OSError('no data')\n        @tool\n")
    runtime = _pack_runtime(tmp_path, "", broken)
    runtime.close()
    (error,) = runtime.load_errors
    assert str(error) == "tools 'pack weather': OSError: no data"
    assert "get_quotes" in [d.name for d in runtime.registry.list_definitions()]
