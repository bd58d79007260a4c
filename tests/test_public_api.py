from __future__ import annotations

import importlib
import inspect

import pytest

import tooldeck

PACKAGES = [
    "tooldeck",
    "tooldeck.core",
    "tooldeck.providers",
    "tooldeck.exporters",
    "tooldeck.observability",
    "tooldeck.observability.metrics",
    "tooldeck.packs.brokerage",
    "tooldeck.packs.builtin",
    "tooldeck.exceptions",
]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_sorted_and_importable(name: str) -> None:
    module = importlib.import_module(name)
    exported = module.__all__
    # isort style, as ruff's RUF022 keeps it: CONSTANTS, then Classes, then functions
    assert exported == sorted(
        exported, key=lambda n: (0 if n.isupper() else 1 if n[0].isupper() else 2, n)
    )
    for item in exported:
        assert hasattr(module, item), f"{name}.{item} is in __all__ but missing"


def test_top_level_is_curated() -> None:
    assert len(tooldeck.__all__) <= 16
    public = {
        n for n, v in vars(tooldeck).items() if not n.startswith("_") and not inspect.ismodule(v)
    }
    assert public - set(tooldeck.__all__) == set()


@pytest.mark.parametrize("name", PACKAGES)
def test_every_public_object_has_a_docstring(name: str) -> None:
    module = importlib.import_module(name)
    for item in module.__all__:
        obj = getattr(module, item)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert inspect.getdoc(obj), f"{name}.{item} has no docstring"
