"""Schema preparation shared by the model-format exporters."""

from __future__ import annotations

import contextlib
from typing import Any

from tooldeck.core.schema import closed_objects, flatten_root_union, inline_refs
from tooldeck.exceptions import RegistrationError

Schema = dict[str, Any]


def model_facing(schema: Schema) -> Schema:
    """``schema`` as a model sees it.

    Refs inlined (when not recursive), a root union flattened, and objects closed as
    tooldeck enforces them (``core.schema.closed_objects``).
    """
    with contextlib.suppress(RegistrationError):  # recursive: keep $defs as they are
        schema = inline_refs(schema)
    return closed_objects(flatten_root_union(schema))  # type: ignore[no-any-return]
