"""HTTP models of the code-execution API (`POST /v1/run_code`, SandboxFusion-like)."""

from __future__ import annotations

import base64
import binascii
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from environments.code.models import Limits, SandboxResult

__all__ = ["LimitsPatch", "RunCodeRequest", "RunCodeResponse", "SandboxInfo"]


class LimitsPatch(BaseModel):
    """Limits to change from the server's defaults; omitted fields keep the default."""

    model_config = ConfigDict(extra="forbid")

    wall_time_s: float | None = Field(None, gt=0, description="Wall-clock limit (seconds).")
    cpu_time_s: float | None = Field(None, gt=0, description="CPU-time limit (seconds).")
    memory_mb: int | None = Field(None, ge=32, description="Memory limit (MiB).")
    max_processes: int | None = Field(None, ge=1, description="Most processes/threads.")
    max_file_size_mb: int | None = Field(None, ge=0, description="Largest file written (MiB).")
    max_open_files: int | None = Field(None, ge=8, description="Open file descriptors.")
    disk_mb: int | None = Field(None, ge=1, description="tmpfs work dir size (MiB).")
    max_output_bytes: int | None = Field(None, ge=0, description="Cap on stdout and stderr.")

    def over(self, base: Limits) -> Limits:
        return base.model_copy(update=self.model_dump(exclude_none=True))


class RunCodeRequest(BaseModel):
    """Run one program. `files` are text, `files_base64` binary; both land in /work."""

    model_config = ConfigDict(extra="forbid")

    code: str = Field(max_length=1_000_000, description="The program (run as /work/main.py).")
    language: Literal["python"] = Field("python", description="Only Python is supported.")
    stdin: str = Field("", max_length=16_000_000, description="Standard input.")
    files: dict[str, str] = Field(
        default_factory=dict, description="Relative path -> text content, placed in /work."
    )
    files_base64: dict[str, str] = Field(
        default_factory=dict, description="Relative path -> base64 content, placed in /work."
    )
    limits: LimitsPatch = Field(
        default_factory=LimitsPatch, description="Per-run limits (clamped to the server's)."
    )

    def all_files(self) -> dict[str, str | bytes]:
        out: dict[str, str | bytes] = dict(self.files)
        for name, b64 in self.files_base64.items():
            try:
                out[name] = base64.b64decode(b64, validate=True)
            except (binascii.Error, ValueError) as exc:
                raise ValueError(f"files_base64[{name!r}] is not valid base64") from exc
        return out


class RunCodeResponse(SandboxResult):
    """The execution's outcome (see `SandboxResult`)."""


class SandboxInfo(BaseModel):
    isolation: str = Field(description="The isolation level every execution runs at.")
    details: dict[str, str] = Field(description="uid drop, cgroups, interpreter.")
    default_limits: Limits
    max_limits: Limits
    concurrency: int
    queue_size: int
