"""Fuzz: no call raises, every answer is a ToolResult, bad input is ``validation`` (issue 19).

Hypothesis throws arbitrary arguments at every tool of the default runtime: JSON text
(valid, broken, deeply nested, with lone surrogates and NUL), mappings built from
the tool's own argument names with hostile values, non-mappings, and non-string tool
names. Three layers are driven: the registry, the full provider stack (policy,
confirmation, audit), and REST through the real app. ``TOOLDECK_FUZZ_EXAMPLES`` sets
the calls per tool and layer (default 200 for the suite; CI may raise it).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tooldeck.config import load_settings
from tooldeck.core.result import ToolResult
from tooldeck.runtime import Runtime, build_runtime
from tooldeck.server.app import create_app

EXAMPLES = int(os.environ.get("TOOLDECK_FUZZ_EXAMPLES", "200"))
NETWORK_TOOLS = {"web", "github", "llm"}  # would reach out (refused offline, but slowly)
CODE_TOOLS = {"python", "execute_script", "shell"}  # run real processes per call

text = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["\ud800", "a\x00b", "../../etc/passwd", "x" * 5000, "", "null", "🙂"]),
)
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), text)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def arguments_for(properties: list[str]) -> st.SearchStrategy[Any]:
    names = st.sampled_from(properties) if properties else st.text(max_size=8)
    return st.one_of(
        st.dictionaries(st.one_of(names, st.text(max_size=8)), values, max_size=6),
        values,
        st.text(max_size=60),
        st.binary(max_size=40),
        st.builds(lambda d: json.dumps({"a": json.loads(deep(d))}), st.integers(10, 50)),
        st.sampled_from(
            [
                deep(5_000),
                '{"a": "\\ud800"}',
                '{"action": "read", "path": "' + "x" * 5000 + '"}',
                '{"action": "read", "encoding": "utf\\u0000-8", "path": "README.md"}',
                '{"action": "solve", "expression": "1/0"}',
                "{",
                "[]",
                "null",
                b"\xff\xfe",
            ]
        ),
    )


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


@pytest.fixture(scope="module")
def runtime(
    tmp_path_factory: pytest.TempPathFactory, loop: asyncio.AbstractEventLoop
) -> Iterator[Runtime]:
    root = tmp_path_factory.mktemp("fuzz")
    (root / "README.md").write_text("hello\n")
    settings = load_settings(
        data_dir=root / "data",
        builtin={"roots": [str(root)], "disabled": sorted(NETWORK_TOOLS)},
        policy={"max_attempts": 1, "breaker_enabled": False, "timeout_s": 10},
    )
    rt = build_runtime(settings)
    yield rt
    loop.run_until_complete(rt.aclose())


def tool_names(runtime: Runtime) -> list[str]:
    return sorted(n for n in runtime.registry.names if n not in CODE_TOOLS)


def properties(runtime: Runtime, name: str) -> list[str]:
    schema = runtime.registry.get(name).definition.input_schema  # type: ignore[union-attr]
    found = set(schema.get("properties") or {})
    for option in schema.get("oneOf") or schema.get("anyOf") or []:
        found |= set(option.get("properties") or {})
    return sorted(found)


def check(result: Any, arguments: Any) -> None:
    assert isinstance(result, ToolResult), (type(result), arguments)
    if result.error is not None:
        assert result.error.type != "execution" or not _is_input_error(result), (
            result.error.message[:300],
            repr(arguments)[:200],
        )


def _is_input_error(result: ToolResult) -> bool:
    details = result.error.details or {}  # type: ignore[union-attr]
    return details.get("exception") in {"RecursionError", "UnicodeEncodeError", "TypeError"}


FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)


def fuzz_tool(name: str, call: Any, names: list[str] | None = None) -> None:
    """Run ``call(name, arguments)`` on ``EXAMPLES`` generated arguments."""

    @FUZZ
    @given(arguments=arguments_for(names or []))
    def fuzz(arguments: Any) -> None:
        result = call(name, arguments)
        if result is not None:
            check(result, arguments)

    fuzz()


@pytest.mark.parametrize("layer", ["registry", "stack"])
def test_no_exception_escapes_and_every_answer_is_an_envelope(
    runtime: Runtime, loop: asyncio.AbstractEventLoop, layer: str
) -> None:
    provider = runtime.registry if layer == "registry" else runtime.provider
    for name in tool_names(runtime):
        fuzz_tool(
            name,
            lambda n, a: loop.run_until_complete(provider.execute(n, a, runtime.context())),
            properties(runtime, name),
        )

    names = {n for d in runtime.registry.list_definitions() for n in (d.name, *d.aliases)}

    @FUZZ
    @given(name=st.one_of(st.none(), st.integers(), st.text(max_size=30), values))
    def odd_names(name: Any) -> None:
        # hypothesis draws text from the code's own string constants too, tool names among
        # them; a real tool may well succeed with no arguments
        assume(not (isinstance(name, str) and name in names))
        result = loop.run_until_complete(provider.execute(name, {}, runtime.context()))
        assert isinstance(result, ToolResult)
        assert result.error is not None and result.error.type in ("not_found", "validation")

    odd_names()


def test_rest_answers_every_body_with_an_envelope(runtime: Runtime) -> None:
    app = create_app(build_runtime(runtime.settings))
    with TestClient(app, base_url="http://127.0.0.1") as client:

        def post(name: str, arguments: Any) -> None:
            if isinstance(arguments, bytes):
                body = arguments
            elif isinstance(arguments, str):
                body = arguments.encode("utf-8", "surrogatepass")
            else:
                try:
                    body = json.dumps(arguments).encode()
                except (ValueError, TypeError):
                    return
            response = client.post(
                f"/api/tools/execute/{name}",
                content=body,
                headers={"content-type": "application/json"},
            )
            assert response.headers["content-type"] == "application/json", response.text
            envelope = response.json()
            assert envelope["status"] in ("success", "error"), envelope
            assert response.status_code != 500 or envelope["error"]["type"] == "execution"

        for name in [*tool_names(runtime), "shell", "python"]:
            fuzz_tool(name, post, properties(runtime, name))


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("files", {"action": "read", "path": "x" * 300}),  # ENAMETOOLONG
        ("files", {"action": "list", "path": "x" * 300}),
        ("files", {"action": "read", "path": "README.md", "encoding": "utf\x00-8"}),
        ("files", {"action": "read", "path": "loop"}),  # a symlink to itself
        ("files", '{"action": "read", "path": "\\ud800"}'),
        ("files", deep(5_000)),
        ("math", {"action": "solve", "expression": "1/0"}),
        ("get_quotes", {"symbol": "\ud800"}),
        ("get_quotes", '{"symbol": "\\ud800"}'),
        ("get_quotes", [1, 2]),
        ("get_quotes", 42),
    ],
)
def test_known_bad_inputs_are_validation_errors(
    runtime: Runtime, loop: asyncio.AbstractEventLoop, name: str, arguments: Any
) -> None:
    root = Path(runtime.settings.builtin.roots[0])
    if not (root / "loop").is_symlink():
        (root / "loop").symlink_to(root / "loop")
    for provider in (runtime.registry, runtime.provider):
        result = loop.run_until_complete(provider.execute(name, arguments, runtime.context()))
        assert result.error is not None, result
        assert result.error.type == "validation", result.error.message[:300]


def test_non_string_names_are_not_found(runtime: Runtime, loop: asyncio.AbstractEventLoop) -> None:
    for provider in (runtime.registry, runtime.provider, runtime.view(None)):
        for name in (None, 3, ["get_quotes"], {"a": 1}):
            result = loop.run_until_complete(provider.execute(name, {}, runtime.context()))  # type: ignore[arg-type]
            assert result.error is not None and result.error.type == "not_found"
