"""The engine interface the service talks to, whatever runs underneath (vLLM or transformers).

An engine turns prompt token ids into a stream of `Chunk`s: new token ids, the logprob of
each sampled token and the policy version of the weights that sampled it. The service owns
text, chat templates and the OpenAI shapes; engines only ever see tokens.
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from services.common.wire import FinishReason, SamplingParams


@dataclass
class Chunk:
    """Tokens sampled since the previous chunk of the same request."""

    token_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    versions: list[int] = field(default_factory=list)
    finish_reason: FinishReason | None = None
    # On the last chunk, where the engine reports it: (version, start, end) over the whole
    # completion, authoritative over `versions` of the earlier chunks.
    version_spans: list[tuple[int, int, int]] | None = None


@dataclass
class EngineStats:
    running: int = 0
    waiting: int = 0


class Engine(abc.ABC):
    """Base class. Subclasses set `tokenizer` and `eos_token_ids` in `start()`."""

    tokenizer: Any = None

    def __init__(self, model_path: str, version: int) -> None:
        self.model_path = model_path
        self.version = version

    @abc.abstractmethod
    async def start(self) -> None:
        """Load the model (may take a while); the service is ready afterwards."""

    @abc.abstractmethod
    def generate(
        self, prompt_token_ids: list[int], sampling: SamplingParams, request_id: str
    ) -> AsyncIterator[Chunk]:
        """Stream chunks until one carries a finish reason."""

    @abc.abstractmethod
    async def abort(self, request_id: str) -> None:
        """Stop a request (its stream ends with finish reason 'abort')."""

    @abc.abstractmethod
    async def load_weights(self, checkpoint: Path, version: int, timeout_s: float) -> None:
        """Swap in the weights of `checkpoint` (a folder of safetensors files, already
        checked against the model's parameters) between decode steps, and label every
        token sampled afterwards with `version`. Raise on failure or timeout, leaving the
        old weights serving."""

    @abc.abstractmethod
    async def pause(self) -> None:
        """Stop scheduling steps; requests in flight wait (they are not dropped)."""

    @abc.abstractmethod
    async def resume(self) -> None:
        """Undo `pause`."""

    def healthy(self) -> bool:
        """False once the engine has died (readiness then fails)."""
        return True

    @abc.abstractmethod
    def stats(self) -> EngineStats:
        """Running and waiting sequences right now."""

    @abc.abstractmethod
    async def shutdown(self) -> None:
        """Release the engine (processes, memory)."""
