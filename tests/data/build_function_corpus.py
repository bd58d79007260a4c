"""Rebuild ``function_schemas.json``: real-world function schemas for the strict round-trip test.

    .venv/bin/python tests/data/build_function_corpus.py

Source: the Berkeley Function Calling Leaderboard's data files, as published on PyPI in
``bfcl-eval`` (Apache-2.0; https://github.com/ShishirPatil/gorilla). Its function docs
use Python-ish type names (``dict``, ``float``, ``tuple``, ``any``; Java and JavaScript
ones for those categories); they are mapped to JSON Schema types here, everything else
(``default``, ``optional``, ``enum``, nested ``items``/``properties``) is kept as written,
non-standard keywords included. Schemas that are still not valid JSON Schema, or whose
``enum`` lists values of another type than its ``type`` (no call can fit), are left
out; duplicates (same name and schema) are kept once.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import jsonschema

VERSION = "2026.3.23"
SIZE = 600
"""How many schemas are kept: a sample chosen by a hash of each, so that the corpus is
the same on every rebuild and spreads over every category."""
OUT = Path(__file__).with_name("function_schemas.json")

TYPES = {
    "dict": "object", "object": "object", "HashMap": "object", "Hashtable": "object",
    "float": "number", "double": "number", "number": "number",
    "integer": "integer", "int": "integer", "long": "integer", "short": "integer",
    "byte": "integer", "Bigint": "integer",
    "string": "string", "String": "string", "char": "string",
    "boolean": "boolean", "bool": "boolean", "Boolean": "boolean",
    "array": "array", "list": "array", "tuple": "array", "ArrayList": "array",
    "Array": "array", "Queue": "array", "Stack": "array",
}  # fmt: skip


def to_json_schema(node: Any) -> Any:
    """BFCL type names mapped to JSON Schema; ``any`` (and unknown names) lose ``type``."""
    if isinstance(node, list):
        return [to_json_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "type" and isinstance(value, str):
            if value in TYPES:
                out[key] = TYPES[value]
        elif key == "properties" and isinstance(value, dict):
            out[key] = {name: to_json_schema(prop) for name, prop in value.items()}
        else:
            out[key] = to_json_schema(value)
    return out


def contradictory(node: Any) -> bool:
    """Whether an ``enum`` somewhere lists a value its own ``type`` refuses (no call fits)."""
    if isinstance(node, list):
        return any(contradictory(n) for n in node)
    if not isinstance(node, dict):
        return False
    if isinstance(node.get("enum"), list) and "type" in node:
        check = jsonschema.Draft202012Validator({"type": node["type"]})
        if any(not check.is_valid(v) for v in node["enum"]):
            return True
    return any(contradictory(v) for v in node.values())


def functions(wheel: Path) -> list[tuple[str, dict[str, Any]]]:
    found = []
    with zipfile.ZipFile(wheel) as zf:
        for name in sorted(zf.namelist()):
            if not name.startswith("bfcl_eval/data/") or not name.endswith(".json"):
                continue
            if "possible_answer" in name or "memory_prereq" in name:
                continue
            text = zf.read(name).decode()
            try:
                entries = [json.loads(text)]
            except ValueError:  # JSON Lines
                entries = [json.loads(line) for line in text.splitlines() if line.strip()]
            for entry in entries:
                docs = entry.get("function", entry) if isinstance(entry, dict) else entry
                for doc in docs if isinstance(docs, list) else [docs]:
                    if isinstance(doc, dict) and "parameters" in doc and "name" in doc:
                        found.append((name.rsplit("/", 1)[-1], doc))
    return found


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", tmp,
             f"bfcl-eval=={VERSION}"],
            check=True,
        )  # fmt: skip
        (wheel,) = Path(tmp).glob("*.whl")
        docs = functions(wheel)
    seen: set[str] = set()
    corpus: list[dict[str, Any]] = []
    invalid = 0
    for source, doc in docs:
        params = to_json_schema(doc["parameters"])
        params["type"] = "object"
        key = json.dumps([doc["name"], params], sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        try:
            jsonschema.Draft202012Validator.check_schema(params)
        except jsonschema.SchemaError:
            invalid += 1
            continue
        if contradictory(params):
            invalid += 1
            continue
        corpus.append(
            {"name": doc["name"], "description": doc.get("description", ""),
             "parameters": params, "source": source}
        )  # fmt: skip
    corpus.sort(key=lambda c: hashlib.sha1(json.dumps(c, sort_keys=True).encode()).hexdigest())
    corpus = sorted(corpus[:SIZE], key=lambda c: (c["source"], c["name"]))
    OUT.write_text(json.dumps(corpus, indent=None, separators=(",", ":")) + "\n")
    print(f"{len(corpus)} schemas kept of {len(seen)} distinct in {len(docs)} function docs "
          f"({invalid} invalid left out)")  # fmt: skip


if __name__ == "__main__":
    main()
