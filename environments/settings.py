"""Settings of the environments service (env prefix `SLIPSTREAM_ENVIRONMENTS_`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from services.common.settings import ServiceSettings, service_settings_config


class EnvironmentsSettings(ServiceSettings):
    model_config = service_settings_config("environments")
    service_name: ClassVar[str] = "environments"

    port: int = Field(8010, ge=0, le=65535, description="TCP port the HTTP server listens on.")
    envs: list[str] = Field(
        default_factory=list,
        description='Environments to serve (JSON list, e.g. \'["search","sql"]\'); '
        "empty serves every registered environment whose code is present.",
    )
    data_dir: Path | None = Field(
        None,
        description="Where task sets, indexes and databases are cached; "
        "default $SLIPSTREAM_HOME/data (~/.slipstream/data).",
    )
    env_options: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description='Per-environment options, e.g. {"search": {"dense": true}}.',
    )
    preload: bool = Field(
        True,
        description="Build each environment's shared state (index, databases) and "
        "default task set at start-up rather than on the first session.",
    )
    max_sessions: int = Field(
        1024, ge=1, description="Cap on live sessions; creating one past it answers 429."
    )
    session_ttl_s: float = Field(
        900.0, gt=0, description="A session idle this long is closed and forgotten."
    )
    reset_timeout_s: float = Field(
        60.0, gt=0, description="Time limit for opening a session (reset)."
    )
    step_timeout_s: float = Field(
        10.0,
        gt=0,
        description="Time limit for one tool call; past it the step answers a "
        "'timeout' observation.",
    )
    tool_threads: int = Field(
        32, ge=1, description="Worker threads that run resets and tool calls."
    )
    max_observation_chars: int = Field(
        8000, ge=100, description="Observations longer than this are truncated (with a note)."
    )
    sweep_interval_s: float = Field(5.0, gt=0, description="How often expired sessions are swept.")
    gil_switch_interval_s: float = Field(
        0.0005,
        gt=0,
        description="Python's thread switch interval while serving (sys.setswitchinterval). "
        "Tool calls run in threads; a short interval hands results back to the event loop "
        "sooner (about 2x steps/s on 2 cores vs the 5 ms default).",
    )
    mcp: bool = Field(True, description="Mount the MCP view of the tools at /mcp.")
