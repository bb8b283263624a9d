"""Settings of the reward service (env prefix `SLIPSTREAM_REWARD_`)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from services.common.settings import ServiceSettings, service_settings_config


class RewardSettings(ServiceSettings):
    model_config = service_settings_config("reward")
    service_name: ClassVar[str] = "reward"

    port: int = Field(8002, ge=0, le=65535, description="TCP port the HTTP server listens on.")
