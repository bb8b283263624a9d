"""Settings of the api service (env prefix `SLIPSTREAM_API_`, nested with `__`).

Examples::

    SLIPSTREAM_API_DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1:5432/slipstream
    SLIPSTREAM_API_RUNNER__TYPE=ray
    SLIPSTREAM_API_RUNNER__LEARNER_COMMAND='["{python}", "my_learner.py", "{runtime}"]'
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from services.common.jobspec import Endpoints
from services.common.paths import slipstream_home
from services.common.settings import ServiceSettings, service_settings_config

# Placeholders a command line may use: {python} (this interpreter), {runtime} (the
# process's JobRuntime JSON file), {job_id}, {run_dir}, {worker_index} (workers only).
DEFAULT_LEARNER_COMMAND = ["{python}", "-m", "learner", "--runtime", "{runtime}"]
DEFAULT_WORKER_COMMAND = ["{python}", "-m", "services.rollout", "worker", "--runtime", "{runtime}"]




class _RunnerBase(BaseModel):
    model_config = ConfigDict(extra="forbid")

    learner_command: list[str] = Field(
        default_factory=lambda: list(DEFAULT_LEARNER_COMMAND),
        description="Command line of a job's learner. Placeholders: {python}, {runtime}, "
        "{job_id}, {run_dir}.",
    )
    worker_command: list[str] = Field(
        default_factory=lambda: list(DEFAULT_WORKER_COMMAND),
        description="Command line of one rollout worker (one per resources.rollout_workers). "
        "Placeholders: {python}, {runtime}, {job_id}, {run_dir}, {worker_index}.",
    )
    extra_env: dict[str, str] = Field(
        default_factory=dict, description="Environment variables added to every job process."
    )
    poll_interval_s: float = Field(
        0.5, gt=0, description="How often the runner looks for queued jobs and exited processes."
    )
    stop_grace_s: float = Field(
        10.0, ge=0, description="SIGTERM-to-SIGKILL grace period when stopping a job's processes."
    )
    max_running_jobs: int = Field(
        1, ge=1, description="Jobs running at once; further jobs wait in the queue."
    )
    log_tail_lines: int = Field(
        20, ge=0, description="Log lines of a failed process quoted in the failure reason."
    )
    forward_log_lines: int = Field(
        50,
        ge=0,
        description="Most new log lines per process and poll published as job events (0 = off).",
    )


class LocalRunnerSettings(_RunnerBase):
    """Job processes are local subprocesses, each in its own process group."""

    type: Literal["local"] = Field("local", description="Run job processes on this machine.")


class RayRunnerSettings(_RunnerBase):
    """Job processes run inside Ray actors (one per process), placed by the Ray scheduler."""

    type: Literal["ray"] = Field("ray", description="Run job processes as Ray actors.")
    address: str | None = Field(
        None, description="Ray cluster address ('auto', 'ray://host:10001'); None starts local."
    )
    num_cpus_per_process: float = Field(1.0, gt=0, description="CPUs Ray reserves per process.")


RunnerSettings = Annotated[LocalRunnerSettings | RayRunnerSettings, Field(discriminator="type")]


class ApiSettings(ServiceSettings):
    model_config = service_settings_config("api")
    service_name: ClassVar[str] = "api"

    port: int = Field(8000, ge=0, le=65535, description="TCP port the HTTP server listens on.")
    home: Path = Field(
        default_factory=slipstream_home,
        description="State directory ($SLIPSTREAM_HOME): database, run dirs, bootstrap token.",
    )
    database_url: str | None = Field(
        None,
        description="SQLAlchemy URL of the job store, e.g. "
        "'postgresql+psycopg://postgres@127.0.0.1:5432/slipstream'. "
        "None means the SQLite file {home}/slipstream.db.",
    )
    bootstrap_token: bool = Field(
        True,
        description="On start, if the database holds no usable token, create an admin token "
        "and write it to `token_file` (mode 0600) for the CLI.",
    )
    token_file: Path | None = Field(
        None, description="Where the bootstrap token is written; None means {home}/token."
    )
    admin_token: SecretStr | None = Field(
        None,
        description="A plaintext admin token to register on start (compose/Helm secrets); "
        "stored hashed like any other token.",
    )
    runner: RunnerSettings = Field(
        default_factory=LocalRunnerSettings, description="How job processes are started."
    )
    runner_enabled: bool = Field(
        True, description="Start the job runner in this process (off for read-only replicas)."
    )
    endpoints: Endpoints = Field(
        default_factory=Endpoints,
        description="Service URLs handed to job processes; `api` None means this server.",
    )
    replay_timeout_s: float = Field(
        10.0, gt=0, description="Timeout of calls to the replay service (trajectory pages)."
    )
    sse_poll_interval_s: float = Field(
        0.5, gt=0, description="How often an open event stream checks for new events."
    )
    sse_ping_s: float = Field(15.0, gt=0, description="Keep-alive comment interval on SSE.")

    def resolved_database_url(self) -> str:
        return self.database_url or f"sqlite:///{self.home / 'slipstream.db'}"

    def resolved_token_file(self) -> Path:
        return self.token_file or self.home / "token"

    def runs_dir(self) -> Path:
        return self.home / "runs"

    def job_endpoints(self) -> Endpoints:
        """Endpoints for job processes, with `api` pointing at this server by default."""
        if self.endpoints.api:
            return self.endpoints
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host
        return self.endpoints.model_copy(update={"api": f"http://{host}:{self.port}"})
