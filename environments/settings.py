"""Settings of the environments service (env prefix `SLIPSTREAM_ENVIRONMENTS_`)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from services.common.settings import ServiceSettings, service_settings_config


class EnvironmentsSettings(ServiceSettings):
    model_config = service_settings_config("environments")
    service_name: ClassVar[str] = "environments"

    port: int = Field(8010, ge=0, le=65535, description="TCP port the HTTP server listens on.")
