"""A remote dashboard's ``/context`` endpoint as a source.

Seed 000's deployment runs the adapters in a dashboard service and the tools in
another.

``GET {dashboard_url}/context?categories=<category>`` answers
``{"<category>": {"platform": "...", "data": [records], "fetched_at": "ISO time"}}`` with
the records in the category's canonical shape; they are shaped for tools here, by the
local adapter of that category (seed 000, Q7: normalisation happens after the fetch).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tooldeck.packs.context.adapter import ContextAdapter, SourceError

__all__ = ["DashboardAdapter"]


class DashboardAdapter(ContextAdapter):
    """One category served by a remote dashboard.

    Args:
        category: The category it serves.
        base_url: The dashboard, e.g. ``http://dashboard:8080``.
        shaper: A local adapter of the category whose ``normalize_for_tools`` shapes the
            records; None: the records are shown as they come (at most 50).
        timeout_s: Seconds per request.
    """

    platform = "dashboard"

    def __init__(
        self, category: str, base_url: str, shaper: ContextAdapter | None, timeout_s: float = 10.0
    ) -> None:
        self.category = category
        self.base_url = base_url.rstrip("/")
        self.shaper = shaper
        self.timeout_s = timeout_s

    async def read(self) -> tuple[list[dict[str, Any]], int, dict[str, Any]]:
        """The dashboard's records of the category.

        Raises:
            SourceError: the dashboard cannot be reached, fails, or lacks the category.
        """
        import httpx

        try:
            async with httpx.AsyncClient(timeout=self.timeout_s) as client:
                response = await client.get(
                    f"{self.base_url}/context", params={"categories": self.category}
                )
        except httpx.HTTPError as exc:
            raise SourceError(f"the dashboard cannot be reached: {exc}", retryable=True) from None
        if response.status_code != 200:
            raise SourceError(
                f"the dashboard answered HTTP {response.status_code}",
                retryable=response.status_code >= 500,
            )
        try:
            entry = response.json()[self.category]
            records = [dict(r) for r in entry["data"]]
        except (ValueError, KeyError, TypeError) as exc:
            raise SourceError(f"the dashboard has no {self.category} data ({exc!r})") from None
        metadata = {"platform": entry.get("platform"), "fetched_at": entry.get("fetched_at")}
        return records, len(records), metadata

    def normalize_for_tools(
        self, records: Sequence[Mapping[str, Any]], *, include_alerts: bool = True
    ) -> dict[str, Any]:
        """The local adapter's shape, or the records themselves."""
        if self.shaper is not None:
            return self.shaper.normalize_for_tools(records, include_alerts=include_alerts)
        return {"summary": {"records": [dict(r) for r in records[:50]]}}
