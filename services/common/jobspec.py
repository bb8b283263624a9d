"""The job spec: one schema for the CLI (YAML) and the REST API (JSON).

Slim like `wire`: pydantic + stdlib (+ PyYAML, imported only when loading YAML).
Unknown keys anywhere are rejected, and the error names the key's full path.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from services.common.topology import by_name


class SpecModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModelSpec(SpecModel):
    name: str = Field(
        "smollm2-135m-instruct",
        description="A prepared model name (`slipstream models prepare NAME`), a local HF "
        "folder, or a hub name where a hub is reachable.",
    )
    engine: Literal["vllm", "hf"] = Field("vllm", description="Inference engine.")
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = Field(
        "auto", description="Weights dtype for inference and training."
    )
    max_model_len: int = Field(2048, ge=64, description="Context length for the engine.")


class EnvironmentSpec(SpecModel):
    name: str = Field(description="Registered environment, e.g. 'arithmetic', 'search'.")
    task_set: str = Field("default", description="Task set of that environment.")
    weight: float = Field(1.0, gt=0, description="Sampling weight among the job's envs.")
    options: dict[str, Any] = Field(
        default_factory=dict, description="Environment-specific options."
    )


class AlgorithmSpec(SpecModel):
    advantage: Literal["grpo", "dr_grpo", "rloo", "reinforce_pp", "gigpo"] = Field(
        "grpo", description="Advantage estimator."
    )
    loss: Literal["ppo_clip", "gspo", "tis_token", "tis_sequence"] = Field(
        "ppo_clip", description="Policy loss. ppo_clip uses the decoupled objective."
    )
    loss_aggregation: Literal["token_mean", "sequence_mean", "constant"] = Field(
        "token_mean", description="How per-token losses are reduced (constant = Dr.GRPO)."
    )
    learning_rate: float = Field(1e-6, gt=0, description="AdamW peak learning rate.")
    lr_schedule: Literal["constant", "cosine", "linear"] = Field(
        "constant", description="LR schedule after warm-up."
    )
    warmup_steps: int = Field(0, ge=0, description="Linear LR warm-up steps.")
    weight_decay: float = Field(0.0, ge=0, description="AdamW weight decay.")
    clip_eps_low: float = Field(0.2, gt=0, description="PPO ratio clip, lower side.")
    clip_eps_high: float = Field(0.28, gt=0, description="PPO ratio clip, upper side.")
    behavior_ratio_cap: float = Field(
        5.0, gt=0, description="Truncation of the behaviour/proximal importance ratio."
    )
    kl_coef: float = Field(0.0, ge=0, description="KL-to-reference coefficient (0 = off).")
    entropy_coef: float = Field(0.0, ge=0, description="Entropy bonus coefficient.")
    max_grad_norm: float = Field(1.0, gt=0, description="Gradient clipping norm.")
    micro_batch_tokens: int = Field(
        4096, ge=64, description="Token budget per micro-batch (gradient accumulation)."
    )
    lora_rank: int = Field(0, ge=0, description="LoRA rank; 0 trains all weights.")


class SamplingSpec(SpecModel):
    temperature: float = Field(1.0, ge=0, description="Sampling temperature for rollouts.")
    top_p: float = Field(1.0, gt=0, le=1, description="Nucleus sampling mass.")
    max_tokens_per_turn: int = Field(256, ge=1, description="Most tokens per model turn.")
    max_episode_tokens: int = Field(
        2048, ge=16, description="Token budget for the whole episode (prompt included)."
    )


class BudgetSpec(SpecModel):
    max_steps: int = Field(100, ge=1, description="Learner steps before the job completes.")
    max_tokens: int | None = Field(None, ge=1, description="Stop after this many trained tokens.")
    max_wall_time_s: float | None = Field(None, gt=0, description="Stop after this long.")


class ResourceSpec(SpecModel):
    inference_replicas: int = Field(1, ge=1, description="Inference engine replicas.")
    rollout_workers: int = Field(1, ge=1, description="Rollout worker processes/actors.")
    episodes_per_worker: int = Field(
        16, ge=1, description="Concurrent episodes per rollout worker."
    )
    learner_devices: int = Field(1, ge=1, description="Learner processes (GPUs or CPU ranks).")
    use_ray: bool = Field(False, description="Run workers as Ray actors.")


class EvalSpec(SpecModel):
    every_n_steps: int = Field(10, ge=0, description="Evaluate every N learner steps (0 = off).")
    num_tasks: int = Field(64, ge=1, description="Held-out tasks per evaluation.")
    temperature: float = Field(0.0, ge=0, description="Sampling temperature during eval.")


class CheckpointSpec(SpecModel):
    every_n_steps: int = Field(10, ge=1, description="Save a resumable checkpoint every N steps.")
    keep_last: int = Field(3, ge=1, description="How many resumable checkpoints to keep.")


class JobSpec(SpecModel):
    """Everything a training job needs; the same document for `slipstream submit` and
    `POST /v1/jobs`."""

    name: str = Field("job", min_length=1, max_length=128, description="Human-readable name.")
    seed: int = Field(0, description="Seed for task sampling, rollouts and training.")
    model: ModelSpec = Field(default_factory=ModelSpec)
    environments: list[EnvironmentSpec] = Field(
        min_length=1, description="Environments (and task sets) episodes are drawn from."
    )
    algorithm: AlgorithmSpec = Field(default_factory=AlgorithmSpec)
    sampling: SamplingSpec = Field(default_factory=SamplingSpec)
    group_size: int = Field(8, ge=1, description="Samples per task (one group).")
    batch_size: int = Field(
        32, ge=1, description="Trajectories per learner step; a multiple of group_size."
    )
    max_staleness: int = Field(
        1, ge=0, description="Most versions a trained-on sample may lag (0 = synchronous)."
    )
    max_turns: int = Field(8, ge=1, description="Most model turns per episode.")
    budget: BudgetSpec = Field(default_factory=BudgetSpec)
    resources: ResourceSpec = Field(default_factory=ResourceSpec)
    eval: EvalSpec = Field(default_factory=EvalSpec)
    checkpoint: CheckpointSpec = Field(default_factory=CheckpointSpec)

    @model_validator(mode="after")
    def _batch_of_whole_groups(self) -> JobSpec:
        if self.batch_size % self.group_size:
            raise ValueError(
                f"batch_size ({self.batch_size}) must be a multiple of "
                f"group_size ({self.group_size})"
            )
        return self

    @property
    def groups_per_batch(self) -> int:
        return self.batch_size // self.group_size


class JobSpecError(ValueError):
    """A job spec failed validation; `problems` lists (path, message) pairs."""

    def __init__(self, problems: list[tuple[str, str]], source: str = "job spec") -> None:
        self.problems = problems
        lines = "\n".join(f"  - {path}: {message}" for path, message in problems)
        super().__init__(f"invalid {source}:\n{lines}")


def _path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(root)"


def describe_validation_error(exc: ValidationError) -> list[tuple[str, str]]:
    """Turn pydantic errors into (dotted.path, message); unknown keys say so plainly."""
    problems = []
    for err in exc.errors():
        path = _path(tuple(err["loc"]))
        if err["type"] == "extra_forbidden":
            message = f"unknown key '{err['loc'][-1]}'"
        else:
            message = err["msg"]
        problems.append((path, message))
    return problems


def parse_job_spec(data: Any, source: str = "job spec") -> JobSpec:
    try:
        return JobSpec.model_validate(data)
    except ValidationError as exc:
        raise JobSpecError(describe_validation_error(exc), source) from None


def load_job_spec(path: str | Path) -> JobSpec:
    """Load a job spec from a YAML (or JSON, a YAML subset) file."""
    import yaml

    text = Path(path).read_text()
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise JobSpecError([("(file)", f"not valid YAML: {exc}")], str(path)) from None
    if not isinstance(data, dict):
        raise JobSpecError([("(root)", "a job spec must be a mapping")], str(path))
    return parse_job_spec(data, str(path))


def _local(service: str) -> Callable[[], str]:
    """Default URL of a service of the local stack (its port may be moved by
    `SLIPSTREAM_<SERVICE>_PORT`, as `slipstream up` does)."""
    return lambda: by_name(service).url


class Endpoints(SpecModel):
    """Where a job's processes find the services (base URLs)."""

    api: str | None = Field(None, description="Control plane, for metrics and events.")
    inference: str = Field(
        default_factory=_local("inference"), description="Inference router/replica."
    )
    inference_replicas: list[str] = Field(
        default_factory=list, description="Every replica (weight publication); empty = router."
    )
    environments: str = Field(
        default_factory=_local("environments"), description="Environment server."
    )
    reward: str | None = Field(default_factory=_local("reward"), description="Reward service.")
    replay: str = Field(default_factory=_local("replay"), description="Replay service.")


class JobRuntime(SpecModel):
    """What the job runner hands each process of a job (learner, rollout workers)."""

    job_id: str = Field(description="The job's id.")
    spec: JobSpec = Field(description="The validated job spec.")
    endpoints: Endpoints = Field(default_factory=Endpoints, description="Service URLs.")
    run_dir: str = Field(description="Directory for checkpoints, metrics and logs.")
    worker_index: int = Field(0, ge=0, description="Which rollout worker this is.")
