"""Settings of the rollout service (env prefix `SLIPSTREAM_ROLLOUT_`)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from services.common.settings import ServiceSettings, service_settings_config


class RolloutSettings(ServiceSettings):
    model_config = service_settings_config("rollout")
    service_name: ClassVar[str] = "rollout"

    port: int = Field(8004, ge=0, le=65535, description="TCP port the HTTP server listens on.")
