"""What every use of an installed module runs inside the sandbox (``runner.py`` sends this text).

Never imported by tooldeck itself: the sandbox executes it with these names bound:
``files``, ``module_id``, ``entry``, ``kind``, ``category``, ``private`` (as for a
validation, ``_validate.py``), ``op``, ``name``, ``arguments``, ``user``, ``request_id``
and ``tools`` (the host's channel: ``tools.http`` relays one HTTP request to a declared
host, ``tools.secret`` reads the caller's own key for this module). The module is
unpacked and watched exactly as in its validation (``_inside.unpack``), then:

- ``op = "describe"``: ``result = {"tools": [definition as JSON], "adapters":
  [{"category", "platform"}]}``, what the server lists and exports;
- ``op = "call"``: the tool ``name`` runs once with ``arguments``, for ``user``;
  ``result = {"result": the ToolResult as JSON, without metadata}``;
- ``op = "wait"``: the module is unpacked and loaded, then the process waits for its
  one use (``tools.next()`` answers ``{op, name, arguments, user, request_id}``, or
  ``{op: "stop"}``), so a call finds the module already imported
  (``runner.ModuleSandbox.call``);
- ``op = "fetch"``: the context adapter at index ``name`` fetches;
  ``result = {"fetched": {...AdapterResult's fields}, "shaped": {"alerts": ...,
  "plain": ...}}`` (its ``normalize_for_tools`` of its own records, with and without
  alerts).

A module that fails to load gives ``result = {"errors": [...]}``. Every result also
carries ``refused``: what the audit hook refused during the run.
"""

import asyncio
import dataclasses
import pathlib
import sys
from typing import Any

from pydantic import SecretStr

from tooldeck.core.context import ServiceContainer, ToolContext
from tooldeck.core.credentials import CallerSecret
from tooldeck.packs.modules._inside import unpack
from tooldeck.packs.modules.loading import adapters_in, load_version, version_package

_given = globals()  # bound by the sandbox before this runs
files: dict[str, str] = _given["files"]
module_id: str = _given["module_id"]
entry: str = _given["entry"]
kind: str = _given["kind"]
category: str | None = _given["category"]
private: list[str] = _given["private"]
op: str = _given["op"]
name: Any = _given["name"]
arguments: dict[str, Any] = _given["arguments"]
user: str | None = _given["user"]
request_id: str | None = _given["request_id"]
tools: Any = _given["tools"]


def _secret() -> SecretStr | None:
    key = tools.secret()
    return None if key is None else SecretStr(str(key))


def _answer(unpacked: Any) -> dict[str, Any]:
    global op, name, arguments, user, request_id
    folder = pathlib.Path(unpacked.root)
    loaded = load_version(module_id, folder, entry, tools_required=kind == "tool")
    if loaded.errors:
        return {"errors": [str(e) for e in loaded.errors]}
    if op == "wait":  # loaded ahead of its call: now the call
        job = tools.next()
        if job["op"] == "stop":  # no call came: the server stops or dropped this process
            return {"stopped": True}
        op, name, arguments = job["op"], job["name"], job["arguments"]
        user, request_id = job["user"], job["request_id"]
    module = f"{version_package(module_id, folder)}.{entry.removesuffix('.py')}"
    adapters = adapters_in(sys.modules[module], category or "") if kind == "context_adapter" else []
    if op == "describe":
        return {
            "tools": [t.definition.model_dump(mode="json") for t in loaded.tools],
            "adapters": [{"category": a.category, "platform": a.platform} for a in adapters],
        }
    if op == "fetch":
        adapter = adapters[int(name)]
        fetched = asyncio.run(adapter.fetch())
        shaped = {"alerts": None, "plain": None}
        if fetched.success:
            shaped = {
                "alerts": adapter.normalize_for_tools(fetched.data, include_alerts=True),
                "plain": adapter.normalize_for_tools(fetched.data, include_alerts=False),
            }
        values = dataclasses.asdict(fetched)
        values["fetched_at"] = fetched.fetched_at.isoformat()
        return {"fetched": values, "shaped": shaped}
    tool = next(t for t in loaded.tools if t.definition.name == name)
    ctx = ToolContext(
        user=user,
        request_id=request_id,
        services=ServiceContainer({CallerSecret: CallerSecret(_secret)}),
    )
    outcome = asyncio.run(tool.execute(arguments, ctx))
    return {"result": outcome.model_dump(mode="json", exclude={"metadata", "success"})}


_unpacked = unpack(files, private, tools)
result = _answer(_unpacked)
result["refused"] = _unpacked.refused
