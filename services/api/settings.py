"""Settings of the api service (env prefix `SLIPSTREAM_API_`)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from services.common.settings import ServiceSettings, service_settings_config


class ApiSettings(ServiceSettings):
    model_config = service_settings_config("api")
    service_name: ClassVar[str] = "api"

    port: int = Field(8000, ge=0, le=65535, description="TCP port the HTTP server listens on.")
