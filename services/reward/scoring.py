"""Scoring: each item goes to the verifier of its task type, with bounded concurrency and
a per-verifier time limit. Any failure (unknown type, missing gold, verifier error,
timeout) is reported as ScoreResult(ok=False, error=...), never as a silent 0.

`Scorer` is what the HTTP service runs; rollout workers embed it directly (or call
`score_items` / `ascore_items`) when no reward service is deployed.

Blocking verifiers run in a thread pool of `max_concurrency` threads. A thread cannot be
killed, so a verifier past its time limit is reported as timed out while its thread runs
on; the blocking verifiers therefore bound their own work (SQL queries carry a deadline,
sandboxed code runs under a wall-clock limit) and finish soon after.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from services.common.errors import Overloaded
from services.common.metrics import Metrics
from services.common.wire import ScoreItem, ScoreResult
from services.reward.gold import GoldUnavailable
from services.reward.settings import RewardSettings
from services.reward.verifiers.base import Verdict, Verifier, VerifierError, VerifierRegistry

log = logging.getLogger(__name__)


class ScoringMetrics:
    """Per-verifier counts by outcome, latency, and the items in flight."""

    def __init__(self, metrics: Metrics) -> None:
        self.scores = metrics.counter(
            "verifier_scores_total",
            "Items scored, by verifier and outcome.",
            ["verifier", "outcome"],
        )
        self.latency = metrics.histogram(
            "verifier_seconds", "Time a verifier took on one item.", ["verifier"]
        )
        self.pending = metrics.gauge("pending_items", "Items accepted and not yet scored.")

    def observe(self, verifier: str, outcome: str, seconds: float | None) -> None:
        self.scores.labels(verifier, outcome).inc()
        if seconds is not None:
            self.latency.labels(verifier).observe(seconds)


def failure(verifier: str, error: str, **details: object) -> ScoreResult:
    return ScoreResult(reward=0.0, verifier=verifier, ok=False, error=error, details=details)


class Scorer:
    """Scores batches of items; one instance per process (or per app)."""

    def __init__(
        self,
        settings: RewardSettings,
        registry: VerifierRegistry | None = None,
        metrics: Metrics | None = None,
    ) -> None:
        if registry is None:
            from services.reward.registry import build_registry

            registry = build_registry(settings)
        self.settings = settings
        self.registry = registry
        self.metrics = ScoringMetrics(metrics or Metrics("reward"))
        self._executor = ThreadPoolExecutor(
            max_workers=settings.max_concurrency, thread_name_prefix="verifier"
        )
        self._slots = asyncio.Semaphore(settings.max_concurrency)
        self._pending = 0

    async def score(self, items: Sequence[ScoreItem]) -> list[ScoreResult]:
        """One result per item, in the same order. Raises Overloaded (429) when the batch
        would push the items in flight past `max_pending_items`."""
        if self._pending + len(items) > self.settings.max_pending_items:
            raise Overloaded(
                f"{self._pending} items are being scored; a batch of {len(items)} would exceed "
                f"max_pending_items={self.settings.max_pending_items}"
            )
        self._pending += len(items)
        self.metrics.pending.set(self._pending)
        try:
            return list(await asyncio.gather(*(self._score_one(item) for item in items)))
        finally:
            self._pending -= len(items)
            self.metrics.pending.set(self._pending)

    async def _score_one(self, item: ScoreItem) -> ScoreResult:
        name = item.task_type
        try:
            verifier = self.registry.get(name)
        except KeyError as exc:
            self.metrics.observe("unknown", "error", None)
            return failure(name, str(exc.args[0]))
        async with self._slots:
            return await self._run(verifier, item)

    async def _run(self, verifier: Verifier, item: ScoreItem) -> ScoreResult:
        timeout = self.settings.timeout_for(verifier.name)
        start = time.perf_counter()
        outcome = "error"
        try:
            verdict = await asyncio.wait_for(self._call(verifier, item), timeout)
            result = self._result(verifier.name, verdict)
            outcome = "ok" if result.ok else "error"
            return result
        except TimeoutError:
            outcome = "timeout"
            return failure(verifier.name, f"timeout: verifier ran past {timeout:g}s")
        except (VerifierError, GoldUnavailable) as exc:
            return failure(verifier.name, str(exc))
        except Exception as exc:
            log.exception("verifier %s crashed on task %s", verifier.name, item.task_id)
            return failure(verifier.name, f"verifier crashed: {type(exc).__name__}: {exc}")
        finally:
            self.metrics.observe(verifier.name, outcome, time.perf_counter() - start)

    async def _call(self, verifier: Verifier, item: ScoreItem) -> Verdict:
        if verifier.is_async:
            return await verifier.ascore(item)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, verifier.score, item)

    @staticmethod
    def _result(name: str, verdict: Verdict) -> ScoreResult:
        reward = float(verdict.reward)
        if not math.isfinite(reward):
            return failure(name, f"verifier returned a non-finite reward {reward!r}")
        return ScoreResult(reward=reward, verifier=name, ok=True, details=verdict.details)

    async def aclose(self) -> None:
        for verifier in self.registry:
            await verifier.aclose()
        self._executor.shutdown(wait=False, cancel_futures=True)


async def ascore_items(
    items: Sequence[ScoreItem],
    settings: RewardSettings | None = None,
    *,
    registry: VerifierRegistry | None = None,
) -> list[ScoreResult]:
    """Score in-process with a short-lived Scorer (no reward service needed)."""
    scorer = Scorer(settings or RewardSettings(), registry)
    try:
        return await scorer.score(items)
    finally:
        await scorer.aclose()


def score_items(
    items: Sequence[ScoreItem],
    settings: RewardSettings | None = None,
    *,
    registry: VerifierRegistry | None = None,
) -> list[ScoreResult]:
    """Synchronous embedded scoring: the rollout workers' fallback when no reward service
    is configured. From async code, `await ascore_items(...)` (or keep a `Scorer`)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(ascore_items(items, settings, registry=registry))
    raise RuntimeError("score_items() called inside an event loop; await ascore_items() instead")
