"""The inference service's core, independent of HTTP: owns the engine, admission (bounded),
timeouts, the policy version, weight loads, pause/resume and the service metrics."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import AsyncIterator
from pathlib import Path

from services.common.errors import BadRequest, NotReady, Overloaded
from services.common.metrics import Metrics
from services.common.wire import (
    FinishReason,
    GenerateRequest,
    GenerateResponse,
    SamplingParams,
    WeightUpdate,
    WeightUpdateResult,
)
from services.inference.engines import Chunk, Engine, EngineStats, build_engine
from services.inference.schemas import InferenceStatus
from services.inference.settings import InferenceSettings
from services.inference.weights import (
    CheckpointError,
    TensorShapes,
    check_compatible,
    checkpoint_shapes,
    local_path,
)

log = logging.getLogger(__name__)
LOAD_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)


class Throughput:
    """Tokens per second over a sliding window."""

    def __init__(self, window_s: float = 10.0) -> None:
        self.window_s = window_s
        self.events: deque[tuple[float, int]] = deque()

    def add(self, n: int) -> None:
        self.events.append((time.monotonic(), n))

    def rate(self) -> float:
        now = time.monotonic()
        while self.events and self.events[0][0] < now - self.window_s:
            self.events.popleft()
        return sum(n for _, n in self.events) / self.window_s


class InferenceCore:
    def __init__(self, settings: InferenceSettings, metrics: Metrics) -> None:
        self.settings = settings
        self.engine: Engine | None = None
        self.state = "loading"
        self.model_path = settings.model
        self.paused = False
        self.inflight = 0
        self.last_load_seconds: float | None = None
        self.last_load_error: str | None = None
        self._reference: TensorShapes | None = None
        self._load_lock = asyncio.Lock()
        self._throughput = Throughput()
        self._init_metrics(metrics)

    # ------------------------------------------------------------------ metrics

    def _init_metrics(self, m: Metrics) -> None:
        self.m_tokens = m.counter("generated_tokens_total", "Tokens sampled.")
        self.m_prompt = m.counter("prompt_tokens_total", "Prompt tokens received.")
        self.m_requests = m.counter("generations_total", "Generations by finish.", ["finish"])
        self.m_load = m.histogram("weight_load_seconds", "Weight load latency.", (), LOAD_BUCKETS)
        self.m_loads = m.counter("weight_loads_total", "Weight loads by result.", ["result"])
        gauges = {
            "tokens_per_second": ("Generated tokens/s (10 s window).", self._throughput.rate),
            "policy_version": ("Policy version now serving.", lambda: self.version),
            "requests_running": ("Sequences the engine runs now.", lambda: self.stats().running),
            "queue_depth": ("Requests admitted but not yet running.", self._queue_depth),
            "requests_inflight": ("Requests admitted by the service.", lambda: self.inflight),
            "paused": ("1 while generation is paused.", lambda: float(self.paused)),
            "last_weight_load_seconds": (
                "Duration of the last successful weight load.",
                lambda: self.last_load_seconds or 0.0,
            ),
        }
        for name, (doc, fn) in gauges.items():
            m.gauge(name, doc).set_function(fn)

    def stats(self) -> EngineStats:
        return self.engine.stats() if self.engine is not None else EngineStats()

    def _queue_depth(self) -> float:
        stats = self.stats()
        return float(max(stats.waiting, self.inflight - stats.running))

    # ---------------------------------------------------------------- lifecycle

    @property
    def version(self) -> int:
        return self.engine.version if self.engine is not None else self.settings.initial_version

    @property
    def served_name(self) -> str:
        return self.settings.served_model_name or self.settings.model

    async def start(self) -> None:
        from services.inference.models import resolve_model

        try:
            self.model_path = await asyncio.to_thread(resolve_model, self.settings.model)
            if Path(self.model_path).is_dir():
                self._reference = checkpoint_shapes(Path(self.model_path))
            engine = build_engine(self.settings.engine, self.model_path, self.version)
            await engine.start()
            self.engine = engine
            self.state = "ok"
            log.info("engine %s ready with %s", self.settings.engine.type, self.model_path)
        except Exception as exc:
            self.state = f"error: {type(exc).__name__}: {exc}"
            log.exception("engine failed to start")

    async def shutdown(self) -> None:
        if self.engine is not None:
            await self.engine.shutdown()

    def readiness(self) -> dict[str, str]:
        if self.state == "ok" and self.engine is not None and not self.engine.healthy():
            self.state = "error: the engine died; restart this replica"
        return {"engine": self.state}

    def status(self) -> InferenceStatus:
        stats = self.stats()
        self.readiness()
        return InferenceStatus(
            model=self.served_name,
            model_path=self.model_path,
            engine=self.settings.engine.type,
            state=self.state,
            version=self.version,
            paused=self.paused,
            running=stats.running,
            waiting=stats.waiting,
            inflight=self.inflight,
            last_load_seconds=self.last_load_seconds,
            last_load_error=self.last_load_error,
        )

    def _ready_engine(self) -> Engine:
        if self.engine is None or self.state != "ok":
            raise NotReady(f"engine not ready ({self.state})")
        return self.engine

    # --------------------------------------------------------------- generation

    def check_admission(self) -> Engine:
        """The engine, if a new request would be admitted now (else NotReady/Overloaded)."""
        engine = self._ready_engine()
        if self.inflight >= self.settings.max_pending_requests:
            raise Overloaded(f"{self.inflight} requests in flight; retry later")
        return engine

    @contextlib.asynccontextmanager
    async def _admitted(self) -> AsyncIterator[Engine]:
        engine = self.check_admission()
        self.inflight += 1
        try:
            yield engine
        finally:
            self.inflight -= 1

    def _fit(self, prompt_ids: list[int], sampling: SamplingParams) -> SamplingParams:
        room = self.settings.engine.max_model_len - len(prompt_ids)
        if room < 1:
            raise BadRequest(
                f"prompt has {len(prompt_ids)} tokens; max_model_len is "
                f"{self.settings.engine.max_model_len}",
                field="prompt",
            )
        if sampling.max_tokens > room:
            sampling = sampling.model_copy(update={"max_tokens": room})
        return sampling

    async def stream(
        self, prompt_ids: list[int], sampling: SamplingParams, request_id: str
    ) -> AsyncIterator[Chunk]:
        """Chunks of one generation; ends with a chunk carrying the finish reason (an
        'abort' one when the request times out)."""
        sampling = self._fit(prompt_ids, sampling)
        async with self._admitted() as engine:
            self.m_prompt.inc(len(prompt_ids))
            deadline = time.monotonic() + self.settings.request_timeout_s
            chunks = engine.generate(prompt_ids, sampling, request_id).__aiter__()
            finish = FinishReason.ABORT
            try:
                while True:
                    remaining = deadline - time.monotonic()
                    try:
                        chunk = await asyncio.wait_for(chunks.__anext__(), max(remaining, 0.001))
                    except (StopAsyncIteration, TimeoutError):
                        yield Chunk(finish_reason=FinishReason.ABORT)
                        return
                    self._count(chunk)
                    yield chunk
                    if chunk.finish_reason is not None:
                        finish = chunk.finish_reason
                        return
            finally:
                self.m_requests.labels(finish.value).inc()
                await chunks.aclose()

    def _count(self, chunk: Chunk) -> None:
        if chunk.token_ids:
            self.m_tokens.inc(len(chunk.token_ids))
            self._throughput.add(len(chunk.token_ids))

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        ids: list[int] = []
        logprobs: list[float] = []
        versions: list[int] = []
        finish = FinishReason.ABORT
        stream = self.stream(request.prompt_token_ids, request.sampling, request.request_id)
        async for chunk in stream:
            ids += chunk.token_ids
            logprobs += chunk.logprobs
            versions += chunk.versions
            if chunk.version_spans:
                versions = apply_spans(versions, chunk.version_spans)
            if chunk.finish_reason is not None:
                finish = chunk.finish_reason
        return GenerateResponse(
            request_id=request.request_id,
            token_ids=ids,
            logprobs=logprobs,
            policy_versions=versions,
            finish_reason=finish,
            prompt_tokens=len(request.prompt_token_ids),
            replica=self.settings.replica_name,
        )

    # ------------------------------------------------------------------ weights

    async def load_weights(self, update: WeightUpdate) -> WeightUpdateResult:
        engine = self._ready_engine()
        async with self._load_lock:
            start = time.perf_counter()
            try:
                checkpoint = local_path(update.path)
                shapes = await asyncio.to_thread(checkpoint_shapes, checkpoint)
                if self._reference is not None:
                    check_compatible(shapes, self._reference)
                folder = checkpoint if checkpoint.is_dir() else checkpoint.parent
                await asyncio.wait_for(  # grace: the engine restores old weights itself
                    engine.load_weights(folder, update.version, update.timeout_s),
                    update.timeout_s + 10,
                )
            except (CheckpointError, TimeoutError, Exception) as exc:  # reported, not raised
                return self._load_failed(update, exc)
            seconds = time.perf_counter() - start
            self.last_load_seconds, self.last_load_error = seconds, None
            self.m_load.observe(seconds)
            self.m_loads.labels("ok").inc()
            log.info("loaded policy version %d from %s in %.2fs", update.version, folder, seconds)
            return WeightUpdateResult(version=self.version, loaded=True, load_seconds=seconds)

    def _load_failed(self, update: WeightUpdate, exc: BaseException) -> WeightUpdateResult:
        reason = (
            f"timed out after {update.timeout_s:g}s"
            if isinstance(exc, TimeoutError)
            else f"{type(exc).__name__}: {exc}"
        )
        self.last_load_error = reason
        self.m_loads.labels("timeout" if isinstance(exc, TimeoutError) else "error").inc()
        log.warning("weight load of version %d failed, still serving %d: %s",
                    update.version, self.version, reason)
        return WeightUpdateResult(version=self.version, loaded=False, error=reason)

    async def pause(self) -> None:
        await self._ready_engine().pause()
        self.paused = True

    async def resume(self) -> None:
        await self._ready_engine().resume()
        self.paused = False


def apply_spans(versions: list[int], spans: list[tuple[int, int, int]]) -> list[int]:
    """Overwrite per-token versions with the engine's authoritative (version, start, end)."""
    out = list(versions)
    for version, start, end in spans:
        for i in range(start, min(end, len(out))):
            out[i] = version
    return out
