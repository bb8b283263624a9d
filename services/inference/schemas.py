"""Request/response models of the inference service's HTTP API.

The OpenAI-compatible requests accept (and ignore) fields we do not implement, so the
official client works unchanged; Slipstream extras are optional fields on the same body.
The token route uses `services.common.wire.GenerateRequest/GenerateResponse`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class InferenceStatus(BaseModel):
    """What a replica is doing: the router polls it for health, load and version."""

    model: str = Field(description="Served model name.")
    model_path: str = Field(description="Where the startup weights came from.")
    engine: str = Field(description="Engine type (vllm, hf).")
    state: str = Field(description="'ok', 'loading' or 'error: ...'.")
    version: int = Field(description="Policy version now serving.")
    paused: bool = Field(description="Generation paused (requests wait).")
    running: int = Field(description="Sequences the engine runs now.")
    waiting: int = Field(description="Sequences waiting inside the engine.")
    inflight: int = Field(description="Requests admitted by the service.")
    last_load_seconds: float | None = Field(None, description="Last successful weight load.")
    last_load_error: str | None = Field(None, description="Why the last weight load failed.")


class PauseResult(BaseModel):
    paused: bool = Field(description="Whether generation is paused now.")
    version: int = Field(description="Policy version now serving.")


class OpenAIRequestBase(BaseModel):
    model_config = ConfigDict(extra="ignore")

    model: str | None = Field(None, description="Must name the served model, if given.")
    max_tokens: int | None = Field(None, ge=1, description="Most tokens to sample.")
    temperature: float = Field(1.0, ge=0.0, description="0 is greedy.")
    top_p: float = Field(1.0, gt=0.0, le=1.0, description="Nucleus sampling mass.")
    top_k: int = Field(-1, description="Slipstream extra: top-k (-1 disables).")
    n: int = Field(1, ge=1, le=64, description="Completions per prompt.")
    stream: bool = Field(False, description="Server-sent events, OpenAI style.")
    stop: str | list[str] | None = Field(None, description="Stop strings.")
    stop_token_ids: list[int] | None = Field(None, description="Slipstream extra: stop ids.")
    seed: int | None = Field(None, description="Sampling seed.")
    episode_id: str | None = Field(None, description="Slipstream extra: sticky-routing key.")

    def stop_list(self) -> list[str]:
        if self.stop is None:
            return []
        return [self.stop] if isinstance(self.stop, str) else list(self.stop)


class ChatCompletionRequest(OpenAIRequestBase):
    messages: list[dict[str, Any]] = Field(min_length=1, description="OpenAI chat messages.")
    tools: list[dict[str, Any]] | None = Field(None, description="OpenAI tool schemas.")
    tool_choice: str | dict[str, Any] | None = Field(
        None, description="'none' disables tool-call parsing; anything else leaves it on."
    )
    max_completion_tokens: int | None = Field(None, ge=1, description="Alias of max_tokens.")
    logprobs: bool = Field(False, description="Return per-token logprobs (OpenAI shape).")
    top_logprobs: int | None = Field(None, ge=0, le=0, description="Only 0 is supported.")
    stream_options: dict[str, Any] | None = Field(None, description="{'include_usage': bool}.")


class CompletionRequest(OpenAIRequestBase):
    prompt: str | list[str] | list[int] | list[list[int]] = Field(
        description="Text, texts, token ids, or lists of token ids."
    )
    logprobs: int | None = Field(None, ge=0, le=0, description="0: sampled-token logprobs.")
    echo: bool = Field(False, description="Prefix the prompt to the text.")
    stream_options: dict[str, Any] | None = Field(None, description="{'include_usage': bool}.")


class ModelCard(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str = "slipstream"
    root: str = Field(description="Where the weights came from.")
    max_model_len: int
    policy_version: int = Field(description="Policy version now serving.")


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelCard]
