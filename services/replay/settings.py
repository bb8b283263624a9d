"""Settings of the replay service (env prefix `SLIPSTREAM_REPLAY_`)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from services.common.settings import ServiceSettings, service_settings_config


class ReplaySettings(ServiceSettings):
    model_config = service_settings_config("replay")
    service_name: ClassVar[str] = "replay"

    port: int = Field(8003, ge=0, le=65535, description="TCP port the HTTP server listens on.")
