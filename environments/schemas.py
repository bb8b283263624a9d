"""Request/response models of the environments service's HTTP API.

Sessions use the wire objects (`SessionCreate`, `SessionInfo`, `StepRequest`, `StepResult`,
`TaskView`) from `services.common.wire`; this module holds the catalog responses.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from services.common.wire import TaskView, ToolSpec


class EnvironmentDescription(BaseModel):
    name: str = Field(description="Registered environment name.")
    description: str = Field("", description="What the environment is.")
    task_type: str = Field("", description="Verifier key of its tasks.")
    loaded: bool = Field(description="Whether its shared state and task sets are built.")
    error: str | None = Field(None, description="Why it failed to load, if it did.")
    tools: list[ToolSpec] = Field(default_factory=list, description="OpenAI tool schemas.")
    max_turns: int | None = Field(None, description="The environment's own turn cap.")
    task_sets: dict[str, dict[str, int | str]] = Field(
        default_factory=dict, description="Task set -> {train, eval, version}."
    )
    live_sessions: int = Field(0, description="Sessions open on it now.")


class EnvironmentList(BaseModel):
    environments: list[EnvironmentDescription]


class TaskList(BaseModel):
    env: str
    task_set: str
    split: str
    offset: int
    tasks: list[TaskView]
