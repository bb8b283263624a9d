"""Settings of the inference service (env prefix `SLIPSTREAM_INFERENCE_`)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from services.common.settings import ServiceSettings, service_settings_config


class InferenceSettings(ServiceSettings):
    model_config = service_settings_config("inference")
    service_name: ClassVar[str] = "inference"

    port: int = Field(8001, ge=0, le=65535, description="TCP port the HTTP server listens on.")
