"""The wire objects every Slipstream part exchanges.

This module is deliberately slim: it imports pydantic and the standard library only —
never torch, vllm, transformers or numpy — so any process (CLI, environment server,
dashboard) can speak the protocol without paying for a deep-learning stack. A unit test
checks that in a fresh interpreter.

Objects (see DESIGN.md, "Wire objects"):
- `Trajectory`: one finished episode, token-in/token-out, ready for the learner.
- `PolicyVersion`: an int, +1 at each learner publication.
- `GenerateRequest`/`GenerateResponse`: the token-level inference contract.
- `SessionCreate`/`SessionInfo`/`StepRequest`/`StepResult`: the environment contract.
- `WeightUpdate`/`PolicyPublication`: how new weights reach inference and workers.
- `JobSpec` lives in `services.common.jobspec` (same slimness rule).
"""

from __future__ import annotations

import time
import uuid
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, model_validator

PolicyVersion = Annotated[
    NonNegativeInt, Field(description="Learner policy version: +1 at each weight publication.")
]


class WireModel(BaseModel):
    """Base for wire objects: unknown fields are rejected so typos fail loudly."""

    model_config = ConfigDict(extra="forbid")


def new_id() -> str:
    return uuid.uuid4().hex


# --------------------------------------------------------------------------- messages


class ToolCall(WireModel):
    """One tool call as the model wrote it, parsed into OpenAI's shape."""

    id: str = Field(default_factory=lambda: "call_" + uuid.uuid4().hex[:12])
    name: str = Field(description="Tool name as declared by the environment.")
    arguments: dict[str, Any] = Field(
        default_factory=dict, description="Parsed JSON arguments of the call."
    )


class Message(WireModel):
    """A chat message, OpenAI style. For people and templates; the learner uses tokens."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = Field(None, description="For role=tool: the call answered.")
    name: str | None = Field(None, description="For role=tool: the tool that answered.")
    tool_call_error: str | None = Field(
        None, description="For role=assistant: why the tool-call text could not be parsed."
    )


class ToolFunction(WireModel):
    name: str
    description: str
    parameters: dict[str, Any] = Field(description="JSON schema of the arguments object.")


class ToolSpec(WireModel):
    """An OpenAI tool schema (`{"type": "function", "function": {...}}`)."""

    type: Literal["function"] = "function"
    function: ToolFunction


# ----------------------------------------------------------------------- trajectories


class TrajectoryStatus(StrEnum):
    OK = "ok"  # the episode ended normally (the agent finished or the env said done)
    TRUNCATED = "truncated"  # max_turns or a token budget cut it
    ENV_ERROR = "env_error"  # the environment/session died or timed out
    ABORTED = "aborted"  # inference failed, the job was cancelled, or the worker stopped it


class EpisodeError(WireModel):
    """Why an episode did not end normally: a bad episode is data, not a crash."""

    kind: Literal[
        "env_unavailable",
        "env_timeout",
        "env_error",
        "inference_error",
        "inference_timeout",
        "reward_error",
        "cancelled",
        "internal",
    ]
    message: str
    turn: int | None = Field(None, description="Turn index at which it happened.")


class TurnSpan(WireModel):
    """Half-open token range [start, end) of one model turn inside `token_ids`."""

    turn: NonNegativeInt
    start: NonNegativeInt
    end: NonNegativeInt


class Timings(WireModel):
    started_at: float = Field(default_factory=time.time, description="Unix time, episode start.")
    finished_at: float | None = Field(None, description="Unix time, episode end.")
    generation_s: float = Field(0.0, description="Time spent waiting on inference.")
    env_s: float = Field(0.0, description="Time spent waiting on the environment.")
    reward_s: float = Field(0.0, description="Time spent scoring.")


class Trajectory(WireModel):
    """One episode, exactly as the engine saw and produced it.

    Parallel per-token arrays (`token_ids`, `loss_mask`, `behavior_logprobs`,
    `policy_versions`) all have the same length. `loss_mask` is 1 on model-generated tokens
    only; `behavior_logprobs` and `policy_versions` are meaningful only there (0 elsewhere).
    """

    trajectory_id: str = Field(default_factory=new_id)
    job_id: str
    task_id: str
    group_id: str = Field(description="Shared by the group_size samples of one task.")
    group_size: int = Field(ge=1, description="How many samples the group has in total.")
    sample_index: NonNegativeInt = Field(0, description="Index of this sample in its group.")
    env: str = Field(description="Environment name, e.g. 'arithmetic'.")
    task_type: str = Field("", description="Verifier key, e.g. 'exact_match', 'sql'.")
    messages: list[Message] = Field(default_factory=list)
    token_ids: list[int]
    loss_mask: list[Literal[0, 1]]
    behavior_logprobs: list[float]
    policy_versions: list[NonNegativeInt]
    prompt_length: NonNegativeInt = Field(
        0, description="Tokens of the initial prompt (before the first model turn)."
    )
    start_version: PolicyVersion = Field(0, description="Learner version at admission.")
    reward: float = 0.0
    turn_rewards: list[float] | None = None
    turn_spans: list[TurnSpan] = Field(default_factory=list)
    step_keys: list[str] | None = Field(
        None,
        description="Per model turn, a hash of the environment state it acted from "
        "(GiGPO step groups: turns with equal keys share a step group).",
    )
    status: TrajectoryStatus = TrajectoryStatus.OK
    error: EpisodeError | None = None
    reward_error: str | None = Field(None, description="Verifier failure, if any.")
    timings: Timings = Field(default_factory=Timings)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _parallel_arrays(self) -> Trajectory:
        n = len(self.token_ids)
        for name in ("loss_mask", "behavior_logprobs", "policy_versions"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"{name} has {len(getattr(self, name))} entries, token_ids {n}")
        if self.sample_index >= self.group_size:
            raise ValueError("sample_index must be < group_size")
        for span in self.turn_spans:
            if not span.start <= span.end <= n:
                raise ValueError(f"turn span {span} outside token_ids (len {n})")
        return self

    @property
    def num_model_tokens(self) -> int:
        return sum(self.loss_mask)

    @property
    def oldest_version(self) -> int:
        """The oldest policy that produced any of this trajectory's tokens (its staleness
        anchor); the admission version when the model produced nothing."""
        versions = [v for v, m in zip(self.policy_versions, self.loss_mask, strict=True) if m]
        return min(versions) if versions else self.start_version


# ------------------------------------------------------------------------- inference


class SamplingParams(WireModel):
    max_tokens: int = Field(256, ge=1, description="Most tokens to sample in this call.")
    temperature: float = Field(1.0, ge=0.0, description="0 means greedy.")
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    top_k: int = Field(-1, description="-1 disables top-k.")
    stop_token_ids: list[int] = Field(default_factory=list)
    stop: list[str] = Field(default_factory=list, description="Stop strings (engine-side).")
    seed: int | None = None


class GenerateRequest(WireModel):
    """Token-level generation: the route rollout workers use (no re-tokenization)."""

    prompt_token_ids: list[int] = Field(min_length=1)
    sampling: SamplingParams = Field(default_factory=SamplingParams)
    episode_id: str | None = Field(None, description="Sticky-routing key (prefix-cache reuse).")
    request_id: str = Field(default_factory=new_id)


class FinishReason(StrEnum):
    STOP = "stop"
    LENGTH = "length"
    ABORT = "abort"


class GenerateResponse(WireModel):
    request_id: str
    token_ids: list[int]
    logprobs: list[float] = Field(description="Log-probability of each sampled token.")
    policy_versions: list[NonNegativeInt] = Field(
        description="Version of the weights that sampled each token."
    )
    finish_reason: FinishReason
    prompt_tokens: NonNegativeInt
    replica: str | None = Field(None, description="Which replica served it (router).")

    @model_validator(mode="after")
    def _parallel(self) -> GenerateResponse:
        if not len(self.token_ids) == len(self.logprobs) == len(self.policy_versions):
            raise ValueError("token_ids, logprobs and policy_versions must have equal length")
        return self


class WeightUpdate(WireModel):
    """Ask an inference replica to load policy `version` from a safetensors checkpoint."""

    version: PolicyVersion
    path: str = Field(description="Directory or file of the safetensors checkpoint.")
    timeout_s: float = Field(300.0, gt=0, description="Give up (keep old weights) after this.")


class WeightUpdateResult(WireModel):
    version: PolicyVersion = Field(description="The version now serving.")
    loaded: bool
    load_seconds: float = 0.0
    error: str | None = None


class PolicyPublication(WireModel):
    """What the learner announces after each update; workers read the version from it."""

    job_id: str
    version: PolicyVersion
    checkpoint_path: str
    published_at: float = Field(default_factory=time.time)


# ----------------------------------------------------------------------- environments


class SessionCreate(WireModel):
    """Reset: open a session on one task (by id, or the seeded pick from a split)."""

    env: str = Field(description="Registered environment name.")
    task_id: str | None = Field(None, description="A task id; if absent one is drawn.")
    split: Literal["train", "eval"] = "train"
    seed: int | None = Field(None, description="Seed for drawing a task when task_id is None.")
    options: dict[str, Any] = Field(
        default_factory=dict,
        description="Environment-specific options (the job spec's environments[].options); "
        "each environment validates its own and rejects unknown ones.",
    )


class TaskView(WireModel):
    """What the agent may see of a task (never the gold answer)."""

    task_id: str
    task_type: str = Field(description="Verifier key for the reward service.")
    prompt: str
    difficulty: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class SessionInfo(WireModel):
    session_id: str
    env: str
    task: TaskView
    observation: str = Field(description="Initial observation (the user turn).")
    system_prompt: str | None = None
    tools: list[ToolSpec]
    max_turns: int | None = Field(None, description="The environment's own turn cap, if any.")


class StepRequest(WireModel):
    tool_call: ToolCall


class ToolError(WireModel):
    kind: Literal["bad_arguments", "unknown_tool", "timeout", "tool_error", "refused"]
    message: str


class StepResult(WireModel):
    """An observation for the model; tool failures are observations, not HTTP errors."""

    observation: str
    done: bool = False
    reward: float | None = Field(None, description="Turn-level reward, where the env gives one.")
    error: ToolError | None = None
    state_key: str | None = Field(None, description="Hash of the env state (GiGPO groups).")
    info: dict[str, Any] = Field(default_factory=dict)


# ---------------------------------------------------------------------------- reward


class ScoreItem(WireModel):
    """One finished episode to score. The verifier looks the gold answer up itself from
    the environment's task set (the agent never sees it)."""

    env: str
    task_set: str = "default"
    task_id: str
    task_type: str = Field(description="Verifier key, e.g. 'exact_match', 'sql', 'code'.")
    final_answer: str | None = Field(None, description="The agent's final answer, if any.")
    messages: list[Message] = Field(default_factory=list)
    env_reward: float | None = Field(
        None, description="A reward the environment computed itself (e.g. tests passed)."
    )


class ScoreRequest(WireModel):
    items: list[ScoreItem] = Field(min_length=1, max_length=1024)


class ScoreResult(WireModel):
    reward: float
    verifier: str
    ok: bool = Field(description="False when the verifier failed; `reward` is then not real.")
    error: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)


class ScoreResponse(WireModel):
    results: list[ScoreResult]


# --------------------------------------------------------------------------- metrics


class MetricPoint(WireModel):
    """One row of a job's metrics time series (learner step, eval, rollout stats)."""

    job_id: str
    step: NonNegativeInt
    ts: float = Field(default_factory=time.time)
    kind: Literal["train", "eval", "rollout"] = "train"
    values: dict[str, float]
