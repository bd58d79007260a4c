"""Schema preparation shared by the model-format exporters."""

from __future__ import annotations

from typing import Any

from tooldeck.core.schema import flatten_root_union, inline_refs
from tooldeck.exceptions import RegistrationError

Schema = dict[str, Any]


def model_facing(schema: Schema) -> Schema:
    """``schema`` with refs inlined (when not recursive) and a root union flattened."""
    try:
        schema = inline_refs(schema)
    except RegistrationError:
        pass  # recursive: keep the $defs, formats that support $ref take it as is
    return flatten_root_union(schema)
