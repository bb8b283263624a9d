"""Settings of the replay service (env prefix `SLIPSTREAM_REPLAY_`).

The store backend is a tagged union, e.g.
`SLIPSTREAM_REPLAY_BACKEND='{"type": "redis", "url": "redis://127.0.0.1:6379/0"}'`
or field by field: `SLIPSTREAM_REPLAY_BACKEND__TYPE=redis`.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from services.common.settings import ServiceSettings, service_settings_config


class StoreLimits(BaseModel):
    """Bounds every backend honours."""

    model_config = ConfigDict(extra="forbid")

    max_len: int = Field(
        100_000,
        ge=1,
        description="Most trajectories waiting per job (not yet taken); puts beyond it are "
        "refused with 429 so producers back off.",
    )
    archive_max: int = Field(
        2_000, ge=0, description="Most recent trajectories kept per job for browsing."
    )
    visibility_timeout_s: float = Field(
        900.0,
        gt=0,
        description="A taken batch not acknowledged within this long is redelivered.",
    )


class MemoryBackend(StoreLimits):
    """In-process store: the embedded default. Nothing survives the process."""

    type: Literal["memory"] = Field("memory", description="Backend tag.")


class RedisBackend(StoreLimits):
    """Redis store (lists + hashes, binary token arrays): survives crashes of the learner,
    the workers and this service."""

    type: Literal["redis"] = Field("redis", description="Backend tag.")
    url: str = Field("redis://127.0.0.1:6379/0", description="Redis URL.")
    prefix: str = Field(
        "slipstream:replay",
        pattern=r"^[A-Za-z0-9:._-]+$",
        description="Key prefix; each job's keys live under `<prefix>:{<job_id>}:`.",
    )
    socket_timeout_s: float = Field(
        10.0, gt=0, description="Timeout of every Redis command (connect and read)."
    )
    poll_interval_s: float = Field(
        0.05, gt=0, description="How often a blocking take re-checks for complete groups."
    )


StoreBackend = Annotated[MemoryBackend | RedisBackend, Field(discriminator="type")]


class ReplaySettings(ServiceSettings):
    model_config = service_settings_config("replay")
    service_name: ClassVar[str] = "replay"

    port: int = Field(8003, ge=0, le=65535, description="TCP port the HTTP server listens on.")
    backend: StoreBackend = Field(
        default_factory=MemoryBackend, description="Where trajectories are kept."
    )
    take_poll_s: float = Field(
        0.05, gt=0, description="Poll interval of a blocking take served over HTTP."
    )
