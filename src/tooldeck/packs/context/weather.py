"""Weather: the Open-Meteo forecast API (https://open-meteo.com, no key needed).

``GET {base_url}/v1/forecast?latitude=..&longitude=..&current=..&daily=..&timezone=..``;
the answer's ``current`` and ``daily`` blocks become one record of the current
conditions and one per day: ``{kind: "current"|"day", time|date, temperature...}``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

from tooldeck.packs.context.adapter import ContextAdapter, SourceError

__all__ = ["WEATHER_CODES", "OpenMeteoAdapter"]

WEATHER_CODES = {
    0: "clear", 1: "mainly clear", 2: "partly cloudy", 3: "overcast", 45: "fog",
    48: "rime fog", 51: "light drizzle", 53: "drizzle", 55: "dense drizzle",
    61: "light rain", 63: "rain", 65: "heavy rain", 66: "freezing rain",
    67: "heavy freezing rain", 71: "light snow", 73: "snow", 75: "heavy snow",
    77: "snow grains", 80: "rain showers", 81: "heavy rain showers",
    82: "violent rain showers", 85: "snow showers", 86: "heavy snow showers",
    95: "thunderstorm", 96: "thunderstorm with hail", 99: "thunderstorm with heavy hail",
}  # fmt: skip
"""WMO weather interpretation codes, as Open-Meteo documents them."""

_CURRENT = "temperature_2m,apparent_temperature,precipitation,weather_code,wind_speed_10m"
_DAILY = "weather_code,temperature_2m_max,temperature_2m_min,precipitation_sum,precipitation_probability_max"


class OpenMeteoAdapter(ContextAdapter):
    """Current conditions and the next days at one place.

    Args:
        latitude: Degrees north.
        longitude: Degrees east.
        timezone: IANA zone the days are counted in.
        base_url: Open-Meteo's API, or a mirror (tests serve a recorded answer).
        days: Days of forecast (1–16).
        timeout_s: Seconds per request.
    """

    category = "weather"
    platform = "open-meteo"

    def __init__(
        self,
        latitude: float,
        longitude: float,
        timezone: str = "UTC",
        base_url: str = "https://api.open-meteo.com",
        days: int = 3,
        timeout_s: float = 10.0,
    ) -> None:
        self.latitude, self.longitude = latitude, longitude
        self.timezone = timezone
        self.base_url = base_url.rstrip("/")
        self.days = days
        self.timeout_s = timeout_s

    async def read(self) -> tuple[list[dict[str, Any]], int, dict[str, Any]]:
        """The current record and one per day.

        Raises:
            SourceError: the API cannot be reached, answers an error, or in another shape.
        """
        import httpx

        params: dict[str, str | float | int] = {
            "latitude": self.latitude, "longitude": self.longitude, "current": _CURRENT,
            "daily": _DAILY, "timezone": self.timezone, "forecast_days": self.days,
        }  # fmt: skip
        try:
            async with httpx.AsyncClient(timeout=self.timeout_s) as client:
                response = await client.get(f"{self.base_url}/v1/forecast", params=params)
        except httpx.HTTPError as exc:
            raise SourceError(f"Open-Meteo cannot be reached: {exc}", retryable=True) from None
        if response.status_code != 200:
            reason = response.text[:200]
            with contextlib.suppress(ValueError):
                reason = response.json().get("reason", reason)
            raise SourceError(
                f"Open-Meteo answered HTTP {response.status_code}: {reason}",
                retryable=response.status_code >= 500,
            )
        try:
            body = response.json()
            current, daily = body["current"], body["daily"]
            units = body.get("current_units", {})
            records = [{
                "kind": "current", "time": current["time"],
                "temperature": current["temperature_2m"],
                "feels_like": current.get("apparent_temperature"),
                "precipitation": current.get("precipitation"),
                "conditions": WEATHER_CODES.get(current.get("weather_code"), "unknown"),
                "wind_speed": current.get("wind_speed_10m"),
            }]  # fmt: skip
            for i, day in enumerate(daily["time"]):
                records.append({
                    "kind": "day", "date": day,
                    "high": daily["temperature_2m_max"][i], "low": daily["temperature_2m_min"][i],
                    "precipitation": daily["precipitation_sum"][i],
                    "precipitation_chance": (daily.get("precipitation_probability_max") or [None] * (i + 1))[i],
                    "conditions": WEATHER_CODES.get(daily["weather_code"][i], "unknown"),
                })  # fmt: skip
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise SourceError(f"Open-Meteo answered in an unknown shape: {exc!r}") from None
        return records, len(records), {"units": units, "place": [self.latitude, self.longitude]}

    def normalize_for_tools(
        self, records: Sequence[Mapping[str, Any]], *, include_alerts: bool = True
    ) -> dict[str, Any]:
        """Now and the days ahead; alerts for rain likely (≥ 60 %) or storms today."""
        current = next((r for r in records if r["kind"] == "current"), None)
        days = [dict(r) for r in records if r["kind"] == "day"]
        shaped: dict[str, Any] = {
            "summary": {"now": dict(current) if current else None, "days": days}
        }
        if include_alerts and days:
            first = days[0]
            alerts = []
            if (first.get("precipitation_chance") or 0) >= 60:
                alerts.append(f"{first['precipitation_chance']}% chance of rain on {first['date']}")
            if "thunderstorm" in first["conditions"]:
                alerts.append(f"{first['conditions']} on {first['date']}")
            shaped["alerts"] = alerts
        return shaped
