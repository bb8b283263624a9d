"""Base settings shared by every service; each service subclasses with its own env prefix."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class ServiceSettings(BaseSettings):
    """Settings every service has. Subclasses set `model_config` with their own env prefix,
    e.g. `SLIPSTREAM_REPLAY_PORT=9000`."""

    model_config = SettingsConfigDict(env_prefix="SLIPSTREAM_", extra="forbid")

    service_name: ClassVar[str] = "service"

    host: str = Field("127.0.0.1", description="Interface the HTTP server binds to.")
    port: int = Field(8000, ge=0, le=65535, description="TCP port the HTTP server listens on.")
    log_level: str = Field("INFO", description="Root log level (DEBUG, INFO, WARNING, ERROR).")
    log_json: bool = Field(False, description="Emit one JSON object per log line instead of text.")


def service_settings_config(service: str) -> SettingsConfigDict:
    """The settings config for one service: env prefix `SLIPSTREAM_<SERVICE>_`."""
    return SettingsConfigDict(
        env_prefix=f"SLIPSTREAM_{service.upper()}_", extra="forbid", env_nested_delimiter="__"
    )
