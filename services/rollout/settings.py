"""Settings of the rollout service and its workers (env prefix `SLIPSTREAM_ROLLOUT_`)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from services.common.settings import ServiceSettings, service_settings_config


class WorkerConfig(BaseModel):
    """How a rollout worker behaves (the job spec says what to run; this says how)."""

    model_config = ConfigDict(extra="forbid")

    generate_timeout_s: float = Field(
        300.0, gt=0, description="Give up on one generation call after this long."
    )
    env_timeout_s: float = Field(
        60.0, gt=0, description="Give up on one environment reset/step after this long."
    )
    score_timeout_s: float = Field(120.0, gt=0, description="Give up scoring a group after this.")
    max_consecutive_failures: int = Field(
        32, ge=1, description="Stop the worker (non-zero exit) after this many failed episodes "
        "in a row (env errors, inference errors, timeouts)."
    )
    max_failure_rate: float = Field(
        0.9, gt=0, le=1, description="Stop the worker when this fraction of the last "
        "`failure_window` episodes failed."
    )
    failure_window: int = Field(
        64, ge=1, description="Episodes the failure rate is computed over."
    )
    admission_poll_s: float = Field(
        0.05, gt=0, description="First back-off when admission refuses (doubles up to max)."
    )
    admission_poll_max_s: float = Field(
        1.0, gt=0, description="Longest back-off between admission attempts."
    )
    push_retries: int = Field(
        20, ge=0, description="Retries of a refused (429) or failed push to replay."
    )
    max_train_tasks: int = Field(
        20_000, ge=1, description="Most train task ids a worker caches for drawing tasks."
    )


class RolloutSettings(ServiceSettings):
    model_config = service_settings_config("rollout")
    service_name: ClassVar[str] = "rollout"

    port: int = Field(8004, ge=0, le=65535, description="TCP port the HTTP server listens on.")
    worker: WorkerConfig = Field(
        default_factory=WorkerConfig, description="Behaviour of the workers this process runs."
    )
    max_workers: int = Field(
        16, ge=1, description="Most workers this process runs at once (429 beyond)."
    )
