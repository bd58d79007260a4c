"""``known_valid`` against ``jsonschema``'s own check, on schemas written elsewhere.

The corpus is what ships in installed packages: the 2020-12 meta-schema and its
vocabularies (``jsonschema-specifications``), the Swagger 2.0 schema in
``jsonschema``'s benchmarks, schemathesis' configuration schemas, and the JSON Schema
of every Pydantic model in the MCP SDK's ``mcp.types``. Each is checked as it is and
after thousands of mutations (each keyword given each wrong kind of value).
"""

from __future__ import annotations

import copy
import inspect
import json
import random
from pathlib import Path
from typing import Any

import jsonschema
import jsonschema_specifications
import pydantic
import pytest

from tooldeck.core.meta_schema import _RULES, known_valid
from tooldeck.core.validation import compile_schema
from tooldeck.exceptions import RegistrationError

WRONG = [5, -1, 1.5, 0, "x", "(", "strin", "#a#b", [], [1], ["a", "a"], ["string", "strin"]]
WRONG += [{}, {"a": 5}, {"a": {"type": "strin"}}, True, None]


def _corpus() -> list[tuple[str, Any]]:
    schemas: list[tuple[str, Any]] = []
    specs = Path(jsonschema_specifications.__file__).parent / "schemas" / "draft202012"
    for path in sorted(p for p in specs.rglob("*") if p.is_file()):
        schemas.append((path.name, json.loads(path.read_text())))
    benchmarks = Path(jsonschema.__file__).parent / "benchmarks" / "issue232" / "issue.json"
    swagger = dict(json.loads(benchmarks.read_text())[0]["schema"])
    swagger.pop("$schema")  # a draft-04 document, read here as 2020-12
    swagger.pop("id")
    schemas.append(("swagger-2.0", swagger))
    schemathesis = pytest.importorskip("schemathesis")
    for path in sorted(Path(schemathesis.__file__).parent.rglob("schema.json")):
        schemas.append((f"schemathesis/{path.parent.name}", json.loads(path.read_text())))
    mcp_types = pytest.importorskip("mcp.types")
    for name in sorted(dir(mcp_types)):
        model = getattr(mcp_types, name)
        if inspect.isclass(model) and issubclass(model, pydantic.BaseModel):
            schemas.append((f"mcp.types.{name}", model.model_json_schema()))
    return schemas


def _valid(schema: Any) -> bool:
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError:
        return False
    return True


def _objects(node: Any) -> list[dict[str, Any]]:
    """Every object in ``node``: the schema, its subschemas, and other objects."""
    found = []
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _mutations(schema: Any, rng: random.Random, n: int) -> list[Any]:
    """``n`` copies of ``schema``, each with one keyword of one object given a wrong value."""
    out = []
    for _ in range(n):
        copied = copy.deepcopy(schema)
        target = rng.choice(_objects(copied))
        keyword = rng.choice([*target, *_RULES]) if target else rng.choice(list(_RULES))
        target[keyword] = copy.deepcopy(rng.choice(WRONG))
        out.append(copied)
    return out


def test_known_valid_never_accepts_what_the_meta_schema_rejects() -> None:
    rng = random.Random(20261126)
    corpus = _corpus()
    assert len(corpus) > 150
    accepted_wrongly = []
    decided = rejected = 0
    for name, schema in corpus:
        assert _valid(schema), name  # the corpus itself is valid
        decided += known_valid(schema)
        for mutated in _mutations(schema, rng, 6 if len(json.dumps(schema)) < 5_000 else 1):
            valid = _valid(mutated)
            rejected += not valid
            if known_valid(mutated) and not valid:
                accepted_wrongly.append((name, mutated))
    assert accepted_wrongly == []
    assert rejected > 300  # the mutations do break schemas
    # the fast path decides real schemas: those left to the full check name a URI in $id
    assert decided >= 0.9 * len(corpus), decided


@pytest.mark.parametrize("keyword", sorted(_RULES))
def test_each_keyword_with_each_wrong_value(keyword: str) -> None:
    for value in WRONG:
        schema = {"type": "object", keyword: value}
        if known_valid(schema):
            assert _valid(schema), schema
        if not _valid(schema):
            with pytest.raises(RegistrationError, match="invalid JSON Schema"):
                compile_schema(schema)


def test_the_full_check_still_words_the_error() -> None:
    schema = {"type": "object", "properties": {"limit": {"type": "integr"}}}
    assert not known_valid(schema)
    with pytest.raises(RegistrationError, match=r"at properties/limit/type: .*'integr'"):
        compile_schema(schema)
    deep: dict[str, Any] = {}
    for _ in range(5000):  # deeper than the recursion limit: not known, not a crash
        deep = {"items": deep}
    assert known_valid(deep) is False
