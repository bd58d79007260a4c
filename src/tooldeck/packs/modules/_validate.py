"""What a validation runs inside the sandbox (``validation.py`` sends this file's text).

Never imported by tooldeck itself: the sandbox executes it with these names bound:
``files`` (relative path → text of the module's files), ``module_id``, ``entry``,
``kind`` and ``category`` (the manifest's),
``private`` (folders a module may not read: the server's data and configuration) and
``tools`` (the host's channel; ``tools.http`` performs one HTTP request to a declared
host). It sets ``result = {"checks": [{name, passed, output}], "tools": [names],
"described": {"tools": [definitions], "adapters": [...]}}`` (what ``_call.py``'s
``describe`` gives, kept by the server for the version this content becomes).

The checks, in order (a failed ``import`` or ``export`` stops the ones after it; ``tests``
and ``calls`` both run, so one report shows everything a repair needs):

- ``import``: the module's ``entry`` file loads and defines at least one tool (a context
  adapter module: at least one adapter of its ``category``, ``loading.adapters_in``).
- ``export``: each tool's definition exports to every wire format (OpenAI strict,
  OpenAI Responses, Anthropic, Gemini, MCP).
- ``tests``: every ``test*`` function in the module's ``test_*.py`` files passes.
- ``tool_calls``: each tool answers one call with its example arguments (the input
  schema's ``examples``, else each property's ``examples`` or ``default``).
- ``fetch`` (context adapters): each adapter's ``fetch()`` succeeds and
  ``normalize_for_tools`` shapes its records into JSON.
- ``behaviour``: nothing the code did was refused: an audit hook (PEP 578), installed
  before the module is imported, refuses writing outside the module's folder,
  reading the server's data or configuration, any socket connection (HTTP goes
  through httpx to the manifest's hosts, relayed by the host), running programs,
  native code and signals, and lists each refusal with the reason.
"""

import asyncio
import inspect
import json
import os
import pathlib
import sys
from collections.abc import Callable, Iterator
from typing import Any

from tooldeck.core.context import ToolContext
from tooldeck.exporters import FORMATS, export
from tooldeck.packs.modules._inside import unpack
from tooldeck.packs.modules.loading import adapters_in, load_version, version_package

_given = globals()  # bound by the sandbox before this runs
files: dict[str, str] = _given["files"]
module_id: str = _given["module_id"]
entry: str = _given["entry"]
kind: str = _given["kind"]
category: str | None = _given["category"]
private: list[str] = _given["private"]
tools: Any = _given["tools"]


def _example(schema: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """Arguments for one call from a JSON Schema's examples, or None with the reason."""
    examples = schema.get("examples")
    if isinstance(examples, list) and examples and isinstance(examples[0], dict):
        return examples[0], None
    arguments: dict[str, Any] = {}
    for name, prop in (schema.get("properties") or {}).items():
        if isinstance(prop.get("examples"), list) and prop["examples"]:
            arguments[name] = prop["examples"][0]
        elif "default" in prop:
            arguments[name] = prop["default"]
        elif name in (schema.get("required") or []):
            return None, f"argument {name!r} has no example: give it Field(examples=[...])"
    return arguments, None


def _run(function: Callable[[], Any]) -> None:
    value = function()
    if inspect.iscoroutine(value):
        asyncio.run(value)


def _checks() -> Iterator[tuple[str, list[str]]]:
    loaded = load_version(module_id, pathlib.Path(root), entry, tools_required=kind == "tool")
    package = version_package(module_id, pathlib.Path(root))
    if kind == "context_adapter" and not loaded.errors:
        module = sys.modules[f"{package}.{entry.removesuffix('.py')}"]
        adapters.extend(adapters_in(module, category or ""))
    wanted = adapters if kind == "context_adapter" else loaded.tools
    if loaded.errors or not wanted:
        what = f"a context adapter of category {category!r}" if kind != "tool" else "tool"
        problems = [str(e) for e in loaded.errors] or [f"{entry} defines no {what}"]
        yield "import", problems
        return
    found.extend(loaded.tools)
    yield "import", []
    problems = []
    for tool in loaded.tools:
        for fmt in FORMATS:
            try:
                export([tool.definition], fmt)
            except Exception as exc:
                problems.append(f"{tool.definition.name} → {fmt}: {_short(exc)}")
    yield "export", problems
    if problems:
        return
    problems = []
    for relative in sorted(files):
        name = os.path.basename(relative)
        if not (name.startswith("test_") and name.endswith(".py")):
            continue
        dotted = f"{package}.{relative.removesuffix('.py').replace('/', '.')}"
        try:
            __import__(dotted)
        except Exception as exc:
            problems.append(f"{relative}: {_short(exc)}")
            continue
        tests = sys.modules[dotted]
        for attr, function in sorted(vars(tests).items()):
            if attr.startswith("test") and inspect.isfunction(function):
                try:
                    _run(function)
                except Exception as exc:
                    problems.append(f"{relative}::{attr}: {_short(exc)}")
    yield "tests", problems
    problems = []
    for tool in loaded.tools:
        definition = tool.definition
        arguments, why = _example(definition.input_schema)
        if arguments is None:
            problems.append(f"{definition.name}: {why}")
            continue
        outcome = asyncio.run(tool.execute(arguments, ToolContext(user="module-validation")))
        if outcome.status != "success":
            error = outcome.error
            assert error is not None
            problems.append(f"{definition.name}({arguments}): {error.type}: {error.message}")
    yield "tool_calls", problems
    if kind == "context_adapter":
        problems = []
        for adapter in adapters:
            fetched = asyncio.run(adapter.fetch())
            if not fetched.success:
                problems.append(f"{adapter.platform}: fetch failed: {fetched.error}")
                continue
            try:
                json.dumps(adapter.normalize_for_tools(fetched.data))
            except Exception as exc:
                problems.append(f"{adapter.platform}: normalize_for_tools: {_short(exc)}")
        yield "fetch", problems


unpacked = unpack(files, private, tools)  # what every call of the module will see too
root, _short = unpacked.root, unpacked.short
found: list[Any] = []
adapters: list[Any] = []
report: list[dict[str, Any]] = []
try:
    for _name, _problems in _checks():
        report.append({"name": _name, "passed": not _problems, "output": "\n".join(_problems)})
except Exception as _exc:  # a check itself broke: say so, keep what ran
    report.append({"name": "validation", "passed": False, "output": _short(_exc)})
report.append(
    {"name": "behaviour", "passed": not unpacked.refused, "output": "\n".join(unpacked.refused)}
)
result = {
    "checks": report,
    "tools": [t.definition.name for t in found],
    "described": {  # what the server serves once it is installed (runner.Description)
        "tools": [t.definition.model_dump(mode="json") for t in found],
        "adapters": [{"category": a.category, "platform": a.platform} for a in adapters],
    },
}
