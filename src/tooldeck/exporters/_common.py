"""Schema preparation shared by the model-format exporters."""

from __future__ import annotations

import contextlib
from typing import Any

from tooldeck.core.schema import flatten_root_union, inline_refs
from tooldeck.exceptions import RegistrationError

Schema = dict[str, Any]


def model_facing(schema: Schema) -> Schema:
    """``schema`` with refs inlined (when not recursive) and a root union flattened."""
    with contextlib.suppress(RegistrationError):  # recursive: keep $defs as they are
        schema = inline_refs(schema)
    return flatten_root_union(schema)
