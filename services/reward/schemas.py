"""Request/response models of the reward service's HTTP API.

`POST /v1/score` takes `services.common.wire.ScoreRequest` and returns `ScoreResponse`;
the models below describe the verifier listing.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class VerifierInfo(BaseModel):
    name: str = Field(description="The task type this verifier scores (ScoreItem.task_type).")
    description: str = Field(description="What it checks and how the reward is computed.")
    timeout_s: float = Field(description="Per-item time limit.")


class VerifierList(BaseModel):
    verifiers: list[VerifierInfo]
