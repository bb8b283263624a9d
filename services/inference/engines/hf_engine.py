"""The `hf` engine: transformers on CPU or GPU, for platforms without vLLM and fast tests.

A background loop batches whatever requests are waiting (up to `max_batch_size`) into one
cohort, prefills it left-padded and decodes it step by step with a shared KV cache. New
requests join the next cohort. Weight loads and pauses happen between decode steps
(they take the same lock as a step), so requests in flight continue under the new weights
and each token carries the version that sampled it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from services.common.wire import FinishReason, SamplingParams
from services.inference.engines.base import Chunk, Engine, EngineStats
from services.inference.engines.sampling import make_generator, sample_token
from services.inference.settings import HfEngineSettings
from services.inference.weights import safetensors_files

log = logging.getLogger(__name__)
_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


@dataclass(eq=False)
class _Seq:
    prompt: list[int]
    params: SamplingParams
    generator: Any
    queue: asyncio.Queue[Chunk] = field(default_factory=asyncio.Queue)
    output: list[int] = field(default_factory=list)
    finished: bool = False
    aborted: bool = False


class HfEngine(Engine):
    def __init__(self, settings: HfEngineSettings, model_path: str, version: int) -> None:
        super().__init__(model_path, version)
        self.settings = settings
        self.model: Any = None
        self.eos_token_ids: set[int] = set()
        self._pending: list[_Seq] = []
        self._running: list[_Seq] = []
        self._by_id: dict[str, _Seq] = {}
        self._wakeup = asyncio.Event()
        self._unpaused = asyncio.Event()
        self._unpaused.set()
        self._step_lock = asyncio.Lock()
        self._loop_task: asyncio.Task[None] | None = None
        self._generator = torch.Generator().manual_seed(settings.seed)

    # ----------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        await asyncio.to_thread(self._load)
        self._loop_task = asyncio.create_task(self._loop(), name="hf-engine-loop")

    def _load(self) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if self.settings.threads:
            torch.set_num_threads(self.settings.threads)
        dtype = _DTYPES.get(self.settings.dtype, "auto")
        self.tokenizer = AutoTokenizer.from_pretrained(self.model_path)
        self.model = AutoModelForCausalLM.from_pretrained(self.model_path, dtype=dtype).eval()
        eos = self.model.generation_config.eos_token_id
        eos = eos if isinstance(eos, list) else [eos]
        self.eos_token_ids = {int(t) for t in eos if t is not None}
        if self.tokenizer.eos_token_id is not None:
            self.eos_token_ids.add(int(self.tokenizer.eos_token_id))

    async def shutdown(self) -> None:
        if self._loop_task is not None:
            self._loop_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._loop_task
        for seq in self._pending + self._running:
            self._finish(seq, FinishReason.ABORT)

    def stats(self) -> EngineStats:
        return EngineStats(running=len(self._running), waiting=len(self._pending))

    def healthy(self) -> bool:
        return self._loop_task is not None and not self._loop_task.done()

    # ---------------------------------------------------------------- requests

    async def generate(
        self, prompt_token_ids: list[int], sampling: SamplingParams, request_id: str
    ) -> AsyncIterator[Chunk]:
        seq = _Seq(list(prompt_token_ids), sampling, make_generator(sampling.seed, self._generator))
        key = f"{request_id}-{uuid.uuid4().hex[:8]}"
        self._by_id[key] = seq
        self._pending.append(seq)
        self._wakeup.set()
        try:
            while True:
                chunk = await seq.queue.get()
                yield chunk
                if chunk.finish_reason is not None:
                    return
        finally:
            self._by_id.pop(key, None)
            if not seq.finished:
                seq.aborted = True

    async def abort(self, request_id: str) -> None:
        for key, seq in list(self._by_id.items()):
            if key.rsplit("-", 1)[0] == request_id:
                seq.aborted = True

    async def pause(self) -> None:
        async with self._step_lock:  # returns once the current step is over
            self._unpaused.clear()

    async def resume(self) -> None:
        self._unpaused.set()

    # ------------------------------------------------------------------ weights

    async def load_weights(self, checkpoint: Path, version: int, timeout_s: float) -> None:
        state = await asyncio.wait_for(asyncio.to_thread(self._read, checkpoint), timeout_s)
        async with self._step_lock:
            await asyncio.to_thread(self._apply, state)
            self.version = version

    def _read(self, checkpoint: Path) -> dict[str, torch.Tensor]:
        from safetensors.torch import load_file

        dtype = next(self.model.parameters()).dtype
        state: dict[str, torch.Tensor] = {}
        for file in safetensors_files(checkpoint):
            state.update({k: v.to(dtype) for k, v in load_file(str(file)).items()})
        return state

    def _apply(self, state: dict[str, torch.Tensor]) -> None:
        with torch.no_grad():
            self.model.load_state_dict(state, strict=False)
            if getattr(self.model.config, "tie_word_embeddings", False):
                self.model.tie_weights()

    # ------------------------------------------------------------------ the loop

    async def _loop(self) -> None:
        while True:
            if not self._pending:
                self._wakeup.clear()
                await self._wakeup.wait()
            await asyncio.sleep(self.settings.batch_wait_s)
            await self._unpaused.wait()
            cohort = self._pending[: self.settings.max_batch_size]
            del self._pending[: len(cohort)]
            cohort = [s for s in cohort if not self._drop_if_aborted(s)]
            if cohort:
                try:
                    await self._run_cohort(cohort)
                except Exception as exc:  # a failed step ends its cohort, not the engine
                    log.exception("hf engine step failed: %s", exc)
                    for seq in cohort:
                        self._finish(seq, FinishReason.ABORT)
                finally:
                    self._running = []

    def _drop_if_aborted(self, seq: _Seq) -> bool:
        if seq.aborted:
            self._finish(seq, FinishReason.ABORT)
        return seq.aborted

    async def _run_cohort(self, cohort: list[_Seq]) -> None:
        self._running = cohort
        batch = _Batch.prefill(cohort, self.tokenizer.pad_token_id or 0)
        while any(not s.finished for s in cohort):
            await self._unpaused.wait()
            async with self._step_lock:
                logits = await asyncio.to_thread(batch.step, self.model)
                version = self.version
            next_ids = [self._advance(seq, logits[i], version) for i, seq in enumerate(cohort)]
            batch.append(next_ids)

    def _advance(self, seq: _Seq, logits: torch.Tensor, version: int) -> int:
        """Sample this row's next token and publish it; returns the token to feed back."""
        if seq.finished:
            return self.tokenizer.pad_token_id or 0
        if seq.aborted:
            self._finish(seq, FinishReason.ABORT)
            return self.tokenizer.pad_token_id or 0
        token, logprob = self._sample(seq, logits)
        seq.output.append(token)
        reason = self._finish_reason(seq, token)
        seq.queue.put_nowait(Chunk([token], [logprob], [version], reason))
        seq.finished = reason is not None
        return token

    def _sample(self, seq: _Seq, logits: torch.Tensor) -> tuple[int, float]:
        processed = self.settings.logprobs_mode == "processed_logprobs"
        return sample_token(logits, seq.params, seq.generator, processed)

    def _finish_reason(self, seq: _Seq, token: int) -> FinishReason | None:
        params = seq.params
        if token in params.stop_token_ids or token in self.eos_token_ids:
            return FinishReason.STOP
        if params.stop and self._hit_stop_string(seq):
            return FinishReason.STOP
        if len(seq.output) >= params.max_tokens:
            return FinishReason.LENGTH
        if len(seq.prompt) + len(seq.output) >= self.settings.max_model_len:
            return FinishReason.LENGTH
        return None

    def _hit_stop_string(self, seq: _Seq) -> bool:
        longest = max(len(s) for s in seq.params.stop)
        tail = self.tokenizer.decode(seq.output[-(longest + 8) :], skip_special_tokens=True)
        return any(s in tail for s in seq.params.stop)

    def _finish(self, seq: _Seq, reason: FinishReason) -> None:
        if not seq.finished:
            seq.finished = True
            seq.queue.put_nowait(Chunk(finish_reason=reason))


class _Batch:
    """Left-padded token batch plus its KV cache; one `step` = one forward pass."""

    def __init__(self, input_ids: torch.Tensor, mask: torch.Tensor) -> None:
        self.input_ids = input_ids
        self.mask = mask
        self.cache: Any = None

    @classmethod
    def prefill(cls, cohort: list[_Seq], pad_id: int) -> _Batch:
        width = max(len(s.prompt) for s in cohort)
        ids = torch.full((len(cohort), width), pad_id, dtype=torch.long)
        mask = torch.zeros((len(cohort), width), dtype=torch.long)
        for row, seq in enumerate(cohort):
            ids[row, width - len(seq.prompt) :] = torch.tensor(seq.prompt)
            mask[row, width - len(seq.prompt) :] = 1
        return cls(ids, mask)

    @torch.inference_mode()
    def step(self, model: Any) -> torch.Tensor:
        positions = (self.mask.cumsum(-1) - 1).clamp(min=0)
        new = self.input_ids.shape[1] if self.cache is None else 1
        out = model(
            input_ids=self.input_ids[:, -new:],
            attention_mask=self.mask,
            position_ids=positions[:, -new:],
            past_key_values=self.cache,
            use_cache=True,
        )
        self.cache = out.past_key_values
        return out.logits[:, -1, :].float()

    def append(self, token_ids: list[int]) -> None:
        column = torch.tensor(token_ids, dtype=torch.long).unsqueeze(1)
        self.input_ids = torch.cat([self.input_ids, column], dim=1)
        self.mask = torch.cat([self.mask, torch.ones_like(column)], dim=1)
