"""Plain data of the sandbox: limits in, result out, isolation levels.

Slim (pydantic + stdlib) so the reward service and clients can import it without the
runner.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class Isolation(StrEnum):
    """How strongly an execution is isolated, strongest first.

    - `bwrap+cgroup`: bubblewrap with every namespace unshared (no network), read-only
      binds of the interpreter only, tmpfs work dir, privileges dropped to a per-slot uid
      before entering, rlimits, and cgroup v1 memory + pids limits.
    - `bwrap`: the same without cgroup limits (cgroups not writable).
    - `rlimit`: no namespaces: a plain child process with rlimits in a private temp dir
      (uid dropped when root). Weak: the network and the host file system are reachable.
      Only used when the operator allows it (`min_isolation`).
    """

    BWRAP_CGROUP = "bwrap+cgroup"
    BWRAP = "bwrap"
    RLIMIT = "rlimit"

    @property
    def rank(self) -> int:
        return {"bwrap+cgroup": 3, "bwrap": 2, "rlimit": 1}[self.value]


class Status(StrEnum):
    OK = "ok"  # exited 0
    ERROR = "error"  # non-zero exit (an exception), or the sandbox itself failed
    TIMEOUT = "timeout"  # wall-clock or CPU-time limit
    MEMORY = "memory"  # memory limit (MemoryError or the cgroup OOM killer)
    KILLED = "killed"  # terminated by another signal (e.g. it killed its own parent)


class Limits(BaseModel):
    """Per-execution resource limits. Servers clamp them to their configured maxima."""

    model_config = ConfigDict(extra="forbid")

    wall_time_s: float = Field(10.0, gt=0, le=600, description="Wall-clock limit (seconds).")
    cpu_time_s: float = Field(10.0, gt=0, le=600, description="CPU-time limit per process.")
    memory_mb: int = Field(
        512, ge=32, le=65536, description="Address-space limit and cgroup memory limit (MiB)."
    )
    max_processes: int = Field(
        32, ge=1, le=4096, description="Most processes/threads at once (cgroup pids, NPROC)."
    )
    max_file_size_mb: int = Field(16, ge=0, le=4096, description="Largest file it may write.")
    max_open_files: int = Field(64, ge=8, le=65536, description="Open file descriptors.")
    disk_mb: int = Field(64, ge=1, le=16384, description="Size of the tmpfs work dir (MiB).")
    max_output_bytes: int = Field(
        65536, ge=0, le=16 * 2**20, description="Stdout and stderr are each cut at this."
    )

    def clamp(self, ceiling: Limits) -> Limits:
        """Each limit lowered to `ceiling`'s where it is higher."""
        return Limits(**{k: min(v, getattr(ceiling, k)) for k, v in self.model_dump().items()})


class SandboxResult(BaseModel):
    """What one execution did. `isolation` is always set: the level it really ran at."""

    model_config = ConfigDict(extra="forbid")

    status: Status
    exit_code: int | None = Field(None, description="Exit status; None when killed by us.")
    signal: int | None = Field(None, description="Terminating signal, if any.")
    stdout: str = ""
    stderr: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    wall_time_s: float = Field(0.0, description="Wall-clock seconds, sandbox set-up included.")
    cpu_time_s: float = Field(0.0, description="User + system CPU seconds of the whole tree.")
    memory_bytes: int = Field(0, description="Peak resident memory (cgroup peak when known).")
    isolation: Isolation
    error: str | None = Field(None, description="Why the sandbox itself failed, if it did.")

    @property
    def ok(self) -> bool:
        return self.status is Status.OK
