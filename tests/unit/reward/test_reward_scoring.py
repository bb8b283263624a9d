"""The scorer: order, bounded concurrency, per-verifier timeouts, failures never silent 0,
back-pressure, metrics, and the embedded score_items entry point."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest
from prometheus_client import generate_latest

from environments.registry import get_task_set
from services.common.errors import Overloaded
from services.common.metrics import Metrics
from services.common.wire import ScoreItem
from services.reward.registry import build_registry
from services.reward.scoring import Scorer, ascore_items, score_items
from services.reward.settings import RewardSettings
from services.reward.verifiers.base import Verdict, Verifier, VerifierRegistry


class Sleepy(Verifier):
    """Blocking verifier: sleeps `seconds` (read from final_answer) and tracks concurrency."""

    name = "sleepy"
    description = "test"

    def __init__(self) -> None:
        self.active = 0
        self.peak = 0
        self.lock = threading.Lock()

    def score(self, item: ScoreItem) -> Verdict:
        with self.lock:
            self.active += 1
            self.peak = max(self.peak, self.active)
        try:
            time.sleep(float(item.final_answer or 0))
        finally:
            with self.lock:
                self.active -= 1
        return Verdict(float(item.task_id), {})


class SlowAsync(Verifier):
    name = "slow_async"
    description = "test"
    is_async = True

    async def ascore(self, item: ScoreItem) -> Verdict:
        await asyncio.sleep(float(item.final_answer or 0))
        return Verdict(1.0)


class Broken(Verifier):
    name = "broken"
    description = "test"

    def score(self, item: ScoreItem) -> Verdict:
        if item.final_answer == "nan":
            return Verdict(float("nan"))
        raise ZeroDivisionError("boom")


def _item(task_type: str, task_id: str = "0", answer: str | None = None) -> ScoreItem:
    return ScoreItem(env="test", task_id=task_id, task_type=task_type, final_answer=answer)


def _scorer(**overrides: object) -> tuple[Scorer, Sleepy, Metrics]:
    settings = RewardSettings(**{"max_concurrency": 2, **overrides})  # type: ignore[arg-type]
    sleepy = Sleepy()
    metrics = Metrics("reward")
    registry = VerifierRegistry([sleepy, SlowAsync(), Broken()])
    return Scorer(settings, registry, metrics), sleepy, metrics


async def test_results_in_order_with_bounded_concurrency() -> None:
    scorer, sleepy, _ = _scorer()
    items = [_item("sleepy", str(i), "0.05") for i in range(8)]
    results = await scorer.score(items)
    assert [r.reward for r in results] == [float(i) for i in range(8)]
    assert all(r.ok for r in results)
    assert sleepy.peak == 2  # max_concurrency
    await scorer.aclose()


async def test_timeouts_are_failures_and_spare_the_rest() -> None:
    scorer, _, _ = _scorer(timeouts={"sleepy": 0.2, "slow_async": 0.2})
    items = [
        _item("sleepy", "1", "0.01"),
        _item("sleepy", "2", "1.0"),
        _item("slow_async", "3", "5"),
        _item("slow_async", "4", "0"),
    ]
    start = time.perf_counter()
    results = await scorer.score(items)
    assert time.perf_counter() - start < 1.0  # the async sleeper was cancelled at 0.2 s
    assert [r.ok for r in results] == [True, False, False, True]
    for failed in (results[1], results[2]):
        assert failed.error is not None and failed.error.startswith("timeout")
        assert failed.reward == 0.0
    await scorer.aclose()


async def test_crashes_nan_and_unknown_types_are_reported() -> None:
    scorer, _, metrics = _scorer()
    results = await scorer.score(
        [_item("broken"), _item("broken", answer="nan"), _item("no_such_type"), _item("sleepy")]
    )
    assert not results[0].ok and "ZeroDivisionError: boom" in (results[0].error or "")
    assert not results[1].ok and "non-finite" in (results[1].error or "")
    assert not results[2].ok and "no verifier for task type 'no_such_type'" in (
        results[2].error or ""
    )
    assert results[3].ok
    text = generate_latest(metrics.registry).decode()
    assert 'slipstream_reward_verifier_scores_total{outcome="error",verifier="broken"} 2.0' in text
    assert 'verifier_scores_total{outcome="ok",verifier="sleepy"} 1.0' in text
    assert 'verifier_seconds_count{verifier="broken"} 2.0' in text
    await scorer.aclose()


async def test_back_pressure() -> None:
    scorer, _, _ = _scorer(max_pending_items=3)
    first = asyncio.create_task(scorer.score([_item("slow_async", answer="0.2")] * 2))
    await asyncio.sleep(0.05)
    with pytest.raises(Overloaded):
        await scorer.score([_item("sleepy")] * 2)
    assert all(r.ok for r in await first)
    assert (await scorer.score([_item("sleepy")] * 3))[0].ok
    await scorer.aclose()


def _real_arithmetic_items(data_dir: Path) -> tuple[list[ScoreItem], list[float]]:
    tasks = get_task_set("arithmetic", "default", data_dir=data_dir).split("eval")[:4]
    answers = [tasks[0].answer, f"The answer is {tasks[1].answer}", "-1", None]
    items = [
        ScoreItem(env="arithmetic", task_id=t.task_id, task_type="arithmetic", final_answer=a)
        for t, a in zip(tasks, answers, strict=True)
    ]
    return items, [1.0, 1.0, 0.0, 0.0]


def test_score_items_embedded(data_dir: Path) -> None:
    items, expected = _real_arithmetic_items(data_dir)
    items.append(_item("format", answer="42"))
    results = score_items(items, RewardSettings(data_dir=str(data_dir)))
    assert [r.reward for r in results] == [*expected, 1.0]
    assert all(r.ok for r in results)


async def test_score_items_refuses_a_running_loop(data_dir: Path) -> None:
    items, expected = _real_arithmetic_items(data_dir)
    with pytest.raises(RuntimeError, match="ascore_items"):
        score_items(items)
    settings = RewardSettings(data_dir=str(data_dir))
    results = await ascore_items(items, settings, registry=build_registry(settings))
    assert [r.reward for r in results] == expected
