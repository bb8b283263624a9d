"""Sandbox settings (env prefix `SLIPSTREAM_SANDBOX_`)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from environments.code.models import Isolation, Limits


class SandboxSettings(BaseSettings):
    """How code is executed: interpreter, isolation floor, uid range, limits, pool size."""

    model_config = SettingsConfigDict(
        env_prefix="SLIPSTREAM_SANDBOX_", extra="forbid", env_nested_delimiter="__"
    )

    python: str = Field(
        "/usr/bin/python3", description="Interpreter run inside the sandbox (Debian's)."
    )
    bwrap: str = Field("/usr/bin/bwrap", description="The bubblewrap binary.")
    min_isolation: Isolation = Field(
        Isolation.BWRAP,
        description="Refuse to start below this level. Set to 'rlimit' to explicitly allow "
        "running without bubblewrap (weak: no namespaces).",
    )
    use_cgroups: bool = Field(
        True, description="Apply cgroup v1 memory/pids limits where the hierarchy is writable."
    )
    cgroup_parent: str = Field(
        "slipstream-sandbox", description="Name of the parent cgroup of every execution."
    )
    uid_base: int = Field(
        61000,
        ge=1000,
        description="First unprivileged uid executions run as (when started as root); "
        "each concurrent execution gets its own uid from [uid_base, uid_base + slots).",
    )
    slots: int = Field(
        16, ge=1, le=1024, description="How many executions may run at once in one process."
    )
    lock_dir: str = Field(
        "/tmp/slipstream-sandbox-locks",
        description="Directory of per-uid lock files, so several processes on one host "
        "(environment server, reward service) never run two executions under one uid; "
        "empty disables cross-process locking.",
    )
    extra_ro_binds: list[str] = Field(
        default_factory=list,
        description="More host directories bound read-only (e.g. a site-packages dir).",
    )
    workdir_base: str = Field(
        "/tmp", description="Where the weak 'rlimit' level creates its private work dirs."
    )
    default_limits: Limits = Field(
        default_factory=Limits, description="Limits used when a request gives none."
    )
    max_limits: Limits = Field(
        default_factory=lambda: Limits(
            wall_time_s=60,
            cpu_time_s=60,
            memory_mb=2048,
            max_processes=64,
            max_file_size_mb=64,
            max_open_files=256,
            disk_mb=256,
            max_output_bytes=1 << 20,
        ),
        description="Ceiling every requested limit is clamped to.",
    )
    concurrency: int = Field(
        2, ge=1, le=1024, description="Executions the pool runs at once (<= slots)."
    )
    queue_size: int = Field(
        64, ge=0, description="Executions that may wait for a free slot; beyond: 429."
    )
