"""``Day``: a calendar day argument that is written ``YYYY-MM-DD`` and nothing else.

Pydantic's lax ``date`` also reads a number as a Unix timestamp (``0`` → 1970-01-01,
``"20260101"`` → a day in 1970) and a datetime string cut to its day, none of which a
JSON Schema ``format: date`` allows. A schema-checking client (schemathesis found it)
and a model that writes ``"0"`` both deserve the error instead.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Annotated, Any

from pydantic import BeforeValidator

__all__ = ["Day"]

_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def _iso_day(value: Any) -> Any:
    """``value`` if it is a ``date`` or a ``YYYY-MM-DD`` string (stripped).

    Raises:
        ValueError: anything else, saying what was expected and what came.
    """
    if isinstance(value, str) and _ISO_DAY.fullmatch(value.strip()):
        return value.strip()
    if isinstance(value, date) or value is None:
        return value
    raise ValueError(f"expected a day as YYYY-MM-DD, got {value!r}")


Day = Annotated[date, BeforeValidator(_iso_day)]
"""A ``date`` argument accepting a ``date`` or a ``YYYY-MM-DD`` string only."""
