"""Learner process settings (env prefix `SLIPSTREAM_LEARNER_`). What a job trains is in
its JobSpec; these are the knobs of the process that trains it."""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings

from services.common.settings import service_settings_config


class LearnerSettings(BaseSettings):
    model_config = service_settings_config("learner")

    log_level: str = Field("INFO", description="Root log level (DEBUG, INFO, WARNING, ERROR).")
    log_json: bool = Field(False, description="Emit one JSON object per log line.")
    evaluate: bool = Field(
        True,
        description="Run held-out evaluations on the spec's eval cadence (a background thread "
        "driving the rollout code against inference, environments and reward).",
    )
    device: Literal["auto", "cpu", "cuda"] = Field(
        "auto", description="Training device; auto = CUDA when available, else CPU."
    )
    precision: Literal["auto", "fp32", "bf16"] = Field(
        "auto",
        description="Compute precision: auto = bf16 autocast where the device supports it "
        "(CUDA with bf16), fp32 on CPU. Master weights and optimizer state stay fp32.",
    )
    export_dtype: Literal["auto", "float32", "bfloat16", "float16"] = Field(
        "auto",
        description="Dtype of published safetensors; auto = the model config's torch_dtype.",
    )
    take_wait_s: float = Field(
        5.0, ge=0, le=300, description="Long-poll time of one take_batch call on replay."
    )
    updates_per_batch: int = Field(
        1, ge=1, description="Optimizer steps per replay batch (PPO mini-batches)."
    )
    gamma: float = Field(
        1.0, ge=0, le=1, description="Discount of turn rewards (GiGPO / turn-level returns)."
    )
    gigpo_omega: float = Field(1.0, ge=0, description="Weight of GiGPO's step-level term.")
    lora_alpha: int | None = Field(None, ge=1, description="LoRA alpha; default 2 x lora_rank.")
    lora_target_modules: str = Field(
        "all-linear", description="peft target_modules for LoRA (comma list or all-linear)."
    )
    gradient_checkpointing: bool = Field(
        False, description="Recompute activations in backward to save memory."
    )
    keep_policy_versions: int = Field(
        3, ge=1, description="Published policy/v{N} folders to keep (older are pruned)."
    )
    publish_timeout_s: float = Field(
        120.0, gt=0, description="Timeout of one POST /v1/weights to an inference replica."
    )
    metrics_timeout_s: float = Field(
        3.0, gt=0, description="Timeout of the best-effort metrics POST to the API."
    )
    nccl_publish: bool = Field(
        False, description="Also broadcast weights over NCCL to inference (GPU only)."
    )
    nccl_address: str = Field(
        "127.0.0.1:29600", description="host:port of the weight-broadcast rendezvous store."
    )
    nccl_world_size: int = Field(
        2, ge=2, description="Learner (rank 0) + receiving inference ranks."
    )
    nccl_timeout_s: float = Field(
        120.0, gt=0, description="A broadcast that takes longer is abandoned."
    )
    distributed_timeout_s: float = Field(
        1800.0, gt=0, description="Timeout of torch.distributed collectives between ranks."
    )
