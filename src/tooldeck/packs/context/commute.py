"""Commute: travel times from an OSRM-compatible routing API to an address book's places.

``GET {base_url}/route/v1/{profile}/{lon},{lat};{lon},{lat}?overview=false`` per place.

Places are named in the configuration with their coordinates (the address book is the
geocoder); each becomes one record ``{destination, address, minutes, km, profile}``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tooldeck.packs.context.adapter import ContextAdapter, SourceError

__all__ = ["OsrmAdapter", "Place"]


class Place(BaseModel):
    """A place of the address book."""

    model_config = ConfigDict(extra="forbid")

    latitude: float = Field(ge=-90, le=90)
    longitude: float = Field(ge=-180, le=180)
    address: str = ""


class OsrmAdapter(ContextAdapter):
    """Travel time from ``origin`` to every other place of ``places``.

    Args:
        places: The address book, name → place.
        origin: The name of the place trips start from (home).
        base_url: The routing server (``http://router.project-osrm.org`` or your own).
        profile: ``driving``, ``cycling`` or ``walking`` (what the server offers).
        timeout_s: Seconds per request.
    """

    category = "commute"
    platform = "osrm"

    def __init__(
        self,
        places: Mapping[str, Place],
        origin: str,
        base_url: str,
        profile: str = "driving",
        timeout_s: float = 10.0,
    ) -> None:
        self.places = dict(places)
        self.origin = origin
        self.base_url = base_url.rstrip("/")
        self.profile = profile
        self.timeout_s = timeout_s

    @property
    def destinations(self) -> list[str]:
        """The places a trip can go to (all but the origin)."""
        return [name for name in self.places if name != self.origin]

    async def read(self) -> tuple[list[dict[str, Any]], int, dict[str, Any]]:
        """One route per destination, asked concurrently.

        Raises:
            SourceError: the server cannot be reached, or finds no route.
        """
        import httpx

        start = self.places[self.origin]
        async with httpx.AsyncClient(timeout=self.timeout_s) as client:
            records = await asyncio.gather(
                *(self._route(client, start, name) for name in self.destinations)
            )
        return list(records), len(records), {"origin": self.origin, "profile": self.profile}

    async def _route(self, client: Any, start: Place, name: str) -> dict[str, Any]:
        import httpx

        end = self.places[name]
        path = (
            f"/route/v1/{self.profile}/{start.longitude},{start.latitude};"
            f"{end.longitude},{end.latitude}"
        )
        try:
            response = await client.get(f"{self.base_url}{path}", params={"overview": "false"})
            body = response.json()
        except httpx.HTTPError as exc:
            raise SourceError(
                f"the routing server cannot be reached: {exc}", retryable=True
            ) from None
        except ValueError:
            raise SourceError(
                f"the routing server answered HTTP {response.status_code}, not JSON",
                retryable=response.status_code >= 500,
            ) from None
        if body.get("code") != "Ok" or not body.get("routes"):
            raise SourceError(
                f"no route from {self.origin} to {name}: "
                f"{body.get('message') or body.get('code') or response.status_code}"
            )
        route = body["routes"][0]
        return {
            "destination": name,
            "address": end.address,
            "minutes": round(route["duration"] / 60, 1),
            "km": round(route["distance"] / 1000, 1),
            "profile": self.profile,
        }

    def normalize_for_tools(
        self, records: Sequence[Mapping[str, Any]], *, include_alerts: bool = True
    ) -> dict[str, Any]:
        """Minutes and km from the origin to each place."""
        shaped: dict[str, Any] = {
            "summary": {"from": self.origin, "trips": [dict(r) for r in records]}
        }
        if include_alerts:
            shaped["alerts"] = []
        return shaped
