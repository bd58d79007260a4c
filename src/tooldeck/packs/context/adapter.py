"""``ContextAdapter``: one source of one category of the user's context (seed 000).

An adapter reads its source in its real format (an OFX statement, an iCalendar file,
an HTTP API), returns an ``AdapterResult`` (seed 000's shape), and says how its data is
shaped for tools (``normalize_for_tools``), so that adding an adapter touches no other
file: the bridge and the tool only call these two methods.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

from tooldeck.core.extensions import AdapterResult

__all__ = ["AdapterResult", "ContextAdapter", "SourceError"]  # AdapterResult: core.extensions


class SourceError(Exception):
    """A source that cannot be read right now, and why.

    Args:
        message: What went wrong, for a person (a file missing, HTTP 503, a bad row).
        retryable: Whether asking again later may succeed (a server down: yes; a file
            in a format the adapter cannot read: no).
    """

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


class ContextAdapter(ABC):
    """A source of one category (``finance``, ``calendar``...) on one ``platform``.

    Subclasses implement ``read`` (the records, in the adapter's canonical shape) and
    ``normalize_for_tools`` (what a tool shows of them); ``fetch`` wraps ``read`` in an
    ``AdapterResult`` and never raises for a source's failure.
    """

    category: str
    """The category it serves, e.g. ``finance``."""
    platform: str
    """Where the data comes from, e.g. ``ofx``, ``ical``, ``open-meteo``."""

    @abstractmethod
    async def read(self) -> tuple[list[dict[str, Any]], int, dict[str, Any]]:
        """(records, how many the source had, metadata).

        Raises:
            SourceError: the source cannot be read, and why.
        """

    @abstractmethod
    def normalize_for_tools(
        self, records: Sequence[Mapping[str, Any]], *, include_alerts: bool = True
    ) -> dict[str, Any]:
        """The records shaped for a tool's answer.

        ``summary`` (JSON values) and, when ``include_alerts``, ``alerts`` (short
        sentences worth a person's attention).
        """

    async def fetch(self) -> AdapterResult:
        """``read`` as an ``AdapterResult``; never raises for the source.

        A ``SourceError`` (or any failure of the source) is a result with ``success``
        false and the reason in ``error``.
        """
        try:
            records, raw, metadata = await self.read()
        except SourceError as exc:
            return AdapterResult(
                False, self.category, self.platform, error=str(exc), retryable=exc.retryable
            )
        except ModuleNotFoundError as exc:
            why = f"reading it needs {exc.name}: pip install 'tooldeck[context]'"
            return AdapterResult(False, self.category, self.platform, error=why)
        except Exception as exc:  # an adapter's bug is its category's error, not the tool's
            return AdapterResult(
                False, self.category, self.platform, error=f"{type(exc).__name__}: {exc}"
            )
        return AdapterResult(
            True,
            self.category,
            self.platform,
            data=records,
            raw_count=raw,
            transformed_count=len(records),
            metadata=metadata,
        )
