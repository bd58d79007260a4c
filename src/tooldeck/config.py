"""Settings: ``tooldeck.toml`` plus ``TOOLDECK_*`` environment overrides (pydantic-settings).

Read by entry points only (ARCHITECTURE.md, "Layers"). Every field has a default, so
the embedded default needs no file. Precedence, highest first: arguments to
``load_settings``, environment (``TOOLDECK_SERVER__PORT=9000``; nested fields use
``__``), the TOML file, defaults.

Example ``tooldeck.toml``::

    data_dir = "/var/lib/tooldeck"

    [server]
    port = 8765
    api_key = "change-me"

    [policy]
    timeout_s = 30
    [policy.tools.get_quotes]
    timeout_s = 5
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from tooldeck.exceptions import ConfigError
from tooldeck.providers.policy import PolicyConfig

__all__ = ["AuditSettings", "BrokerageSettings", "ServerSettings", "Settings", "load_settings"]

DEFAULT_CONFIG_FILE = Path("tooldeck.toml")


class ServerSettings(BaseModel):
    """The REST server."""

    model_config = ConfigDict(extra="forbid")

    host: str = "127.0.0.1"
    """Interface to bind; 127.0.0.1 unless you mean to expose it."""
    port: int = Field(8765, ge=1, le=65535)
    """TCP port."""
    api_key: SecretStr | None = None
    """When set, ``/api/*`` requires ``Authorization: Bearer <api_key>``."""


class AuditSettings(BaseModel):
    """The audit store."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    """Record every call."""
    url: str | None = None
    """SQLAlchemy URL; default ``sqlite:///<data_dir>/audit.db``."""


class BrokerageSettings(BaseModel):
    """The brokerage data pack."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    """Register the brokerage tools."""
    data_path: Path | None = None
    """Data file; default: the file shipped with the package."""


class Settings(BaseSettings):
    """All of tooldeck's configuration."""

    model_config = SettingsConfigDict(
        env_prefix="TOOLDECK_", env_nested_delimiter="__", extra="forbid", toml_file=None
    )

    data_dir: Path = Field(default_factory=lambda: Path(platformdirs.user_data_dir("tooldeck")))
    """Where the audit database and other state live."""
    server: ServerSettings = Field(default_factory=ServerSettings)
    audit: AuditSettings = Field(default_factory=AuditSettings)
    brokerage: BrokerageSettings = Field(default_factory=BrokerageSettings)
    policy: PolicyConfig = Field(default_factory=PolicyConfig)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Arguments, then environment, then the TOML file named in ``model_config``."""
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls))

    @property
    def audit_url(self) -> str:
        """The audit store's SQLAlchemy URL."""
        return self.audit.url or f"sqlite:///{self.data_dir / 'audit.db'}"


def load_settings(config_file: Path | str | None = None, **overrides: Any) -> Settings:
    """Load settings from ``config_file`` (default ``./tooldeck.toml`` if it exists) and env.

    Raises:
        ConfigError: the file named does not exist, is not TOML, or a value is invalid;
            the message names the file and each bad field.
    """
    path = Path(config_file) if config_file is not None else DEFAULT_CONFIG_FILE
    if config_file is not None and not path.is_file():
        raise ConfigError(f"config file {path} does not exist")
    toml_file = path if path.is_file() else None

    class _Settings(Settings):
        model_config = SettingsConfigDict(toml_file=toml_file)

    try:
        return _Settings(**overrides)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
            for e in exc.errors(include_url=False)
        )
        raise ConfigError(
            f"invalid configuration ({toml_file or 'defaults + environment'}): {problems}"
        ) from None
    except ValueError as exc:  # TOML syntax errors
        raise ConfigError(f"cannot read config file {toml_file}: {exc}") from None
